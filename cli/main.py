"""``heedful``: the command line. Parses arguments and hands over; imports stay lazy for start-up speed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from cli.chat import run_chat

    return run_chat(base_url=args.base_url, model=args.model, session_id=args.session)


if __name__ == "__main__":
    sys.exit(main())
