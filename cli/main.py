"""``heedful``: the command line. Parses arguments and hands over; imports stay lazy for start-up speed."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from cli import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heedful",
        description="A terminal chat client for LLMs that shows what the model sees.",
        epilog="With no model configured, Heedful starts on its built-in offline model (F3 in the app "
        "explains how to connect one). HEEDFUL_CONFIG and HEEDFUL_DATA_DIR override where the config "
        "file and the database live.",
    )
    parser.add_argument("--version", action="version", version=f"heedful {__version__}")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1")
    parser.add_argument("--model", help='the model: a name, "provider/name" from the config, or "offline"')
    parser.add_argument("--session", type=int, metavar="ID", help="open this session instead of the latest")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay = commands.add_parser(
        "replay",
        help="curate a transcript offline and print the contexts as JSON",
        description="Feed a JSON Lines transcript through the curation engine, offline and "
        "deterministically, and print what each request would send.",
    )
    replay.add_argument("transcript", type=Path, metavar="TRANSCRIPT.jsonl")
    replay.add_argument("--context-window", type=_positive_int, required=True, metavar="N")
    replay.add_argument(
        "--budget-ratio", type=_ratio, default=None, metavar="R", help="default: the profile's"
    )
    replay.add_argument("--profile", choices=("quality", "balanced", "cost"), default="balanced")
    replay.add_argument("--consent", choices=("keep", "summarize", "remove"), default="keep")
    replay.add_argument("--probes", type=Path, metavar="PROBES.jsonl")
    replay.add_argument("--output", type=Path, metavar="FILE", help="default: standard output")
    replay.add_argument(
        "--base-url",
        dest="live_base_url",
        metavar="URL",
        help="a live OpenAI-compatible server for summaries and the curator pass (default: offline)",
    )
    replay.add_argument(
        "--model", dest="live_model", metavar="NAME", help="the live model (default: gpt-4o-mini)"
    )
    replay.add_argument(
        "--embeddings",
        choices=("off", "local", "provider"),
        default="off",
        help="recall by meaning too, with the local embedding model, or a server's /v1/embeddings "
        "(--embeddings-url, else the --base-url server, which also curates live) (default: off, words alone)",
    )
    replay.add_argument(
        "--embedding-model",
        default="text-embedding-3-small",
        metavar="NAME",
        help="the server's embedding model, with --embeddings provider (default: text-embedding-3-small)",
    )
    replay.add_argument(
        "--embeddings-url",
        metavar="URL",
        help="the server for --embeddings provider when it is not the --base-url one (summaries and "
        "the curator pass then stay offline)",
    )
    _add_session_commands(commands)
    return parser


def _add_session_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sessions = commands.add_parser(
        "sessions",
        help="list, export, import or delete sessions",
        description="Sessions in the database (HEEDFUL_DATA_DIR to use another one).",
    )
    actions = sessions.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", help="every session: id, messages, last update, title")
    export = actions.add_parser(
        "export",
        help="write a session as a transcript (JSON Lines, what replay and import read) or Markdown",
        description="Write a session out. JSON Lines keeps everything (ids, states, pins), so importing "
        "it gives the session back exactly; Markdown is for reading. The API key is never in either.",
    )
    export.add_argument("session", type=_positive_int, metavar="ID")
    export.add_argument(
        "--format", choices=("md", "jsonl"), default=None, help="default: from --output's suffix, else jsonl"
    )
    export.add_argument("--output", type=Path, metavar="FILE", help="default: standard output")
    imported = actions.add_parser(
        "import",
        help="add a transcript (an export, or any file replay reads) as a new session",
    )
    imported.add_argument("file", type=Path, metavar="FILE.jsonl")
    delete = actions.add_parser(
        "delete", help="delete a session and its messages for good (asks first on a terminal)"
    )
    delete.add_argument("session", type=_positive_int, metavar="ID")
    delete.add_argument("--yes", action="store_true", help="do not ask")
    ledger = commands.add_parser(
        "ledger",
        help="print a session's ledger: every curation decision with its reason",
        description="Print a session's ledger, oldest first: operations, consent answers, entity changes.",
    )
    ledger.add_argument("session", type=_positive_int, metavar="SESSION")
    ledger.add_argument("--json", action="store_true", help="as a JSON array, with scores")
    ledger.add_argument(
        "--stats",
        action="store_true",
        help="the forgetting statistics instead: tokens saved; messages summarized, pruned, recalled, "
        "and pruned then recalled",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {value}")
    return value


def _ratio(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 1: {value}")
    return value


def _warn_about_directories() -> None:
    """Once per shell command that reads or writes the user's data: a directory others can change."""
    from sessions.paths import directory_warnings

    for warning in directory_warnings():
        print(f"heedful: warning: {warning}", file=sys.stderr)


def _remember_keys() -> None:
    """Have the keys the config and the environment name redacted from what a command prints: the
    database (written by an older Heedful) or a transcript may hold one. As
    ``providers.resolve.remember_keys``, from the TOML alone: validating the config costs the
    command its imports, and a config that cannot be read names no key."""
    import tomllib

    from engine.text.redaction import looks_like_key, remember_secret
    from sessions import paths

    remember_secret(os.environ.get("OPENAI_API_KEY"))
    try:
        document = tomllib.loads(paths.config_path().read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):  # missing, not UTF-8, not TOML
        return
    providers = document.get("providers")
    for provider in providers.values() if isinstance(providers, dict) else ():
        name = provider.get("api_key_env") if isinstance(provider, dict) else None
        if isinstance(name, str) and name:
            remember_secret(name if looks_like_key(name) else os.environ.get(name))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in ("sessions", "ledger") or (
        args.command == "replay" and os.environ.get("HEEDFUL_DATA_DIR")
    ):
        _warn_about_directories()
    if args.command in ("sessions", "ledger", "replay"):
        _remember_keys()
    if args.command == "replay":
        from cli.replay import run_replay

        return run_replay(
            args.transcript,
            context_window=args.context_window,
            budget_ratio=args.budget_ratio,
            profile=args.profile,
            consent=args.consent,
            probes=args.probes,
            output=args.output,
            base_url=args.live_base_url or args.base_url,
            model=args.live_model or args.model,
            embeddings=args.embeddings,
            embedding_model=args.embedding_model,
            embeddings_url=args.embeddings_url,
        )
    if args.command == "sessions":
        from cli import sessions_cmd

        if args.action == "list":
            return sessions_cmd.run_list()
        if args.action == "export":
            return sessions_cmd.run_export(args.session, fmt=args.format, output=args.output)
        if args.action == "import":
            return sessions_cmd.run_import(args.file)
        return sessions_cmd.run_delete(args.session, yes=args.yes)
    if args.command == "ledger":
        from cli import sessions_cmd

        return sessions_cmd.run_ledger(args.session, as_json=args.json, stats=args.stats)
    from tui import heap

    heap.starting()  # until the first frame is drawn
    from cli.chat import run_chat

    return run_chat(base_url=args.base_url, model=args.model, session_id=args.session)


if __name__ == "__main__":
    sys.exit(main())
