"""``heedful sessions list | export | import | delete`` and ``heedful ledger``: sessions from the shell.

Exit codes: 0 done, 2 bad input (no such session, a bad transcript line, a refused confirmation
missing), 1 anything else (the database or a file could not be used). Messages go to standard
error, in words. Everything printed is inert (:mod:`engine.text.inert`), on a terminal or not: a
pipe or a file is often read in one later. Paths and titles in messages are quoted, on one line.
Everything printed or exported passes the redaction gate (:mod:`engine.text.redaction`) first: a
database written by an older Heedful, or an imported file, may hold an API key.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from engine.errors import StoreError
from engine.text.inert import inert, inert_json, inert_line, quoted
from engine.text.moments import local_text
from engine.text.redaction import redact

if TYPE_CHECKING:
    from collections.abc import Callable

    from engine.curation.ledger import LedgerEntry
    from sessions.exchange import ExportFormat
    from sessions.store import SqliteChatStore

    CommandBody = Callable[[SqliteChatStore], None]
    """A command's work on the open store; raises CommandError or StoreError to stop."""

BAD_INPUT = 2
FAILED = 1


class CommandError(Exception):
    """A command cannot go on; ``code`` is its exit status and the message says why."""

    def __init__(self, message: str, code: int = FAILED) -> None:
        super().__init__(message)
        self.code = code


def _say(message: str, stream: TextIO | None = None) -> None:
    """Print a message (to standard error unless told), redacted and inert."""
    print(inert(redact(message)), file=stream or sys.stderr)


@contextmanager
def _opened_store() -> Iterator[SqliteChatStore]:
    from sessions import paths
    from sessions.store import open_store

    opened = open_store(paths.database_path())
    if opened.notice:
        _say(opened.notice)
    try:
        yield opened.store
    finally:
        opened.store.close()


def _run(name: str, body: CommandBody) -> int:
    """Run ``body`` against the user's database; turn every expected failure into a message and a code."""
    try:
        with _opened_store() as store:
            body(store)
    except CommandError as err:
        _say(f"heedful {name}: {err}")
        return err.code
    except StoreError as err:
        _say(f"heedful {name}: {err.user_message}")
        return FAILED
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return FAILED
    return 0


def _session_title(store: SqliteChatStore, session_id: int) -> tuple[str, int]:
    session = store.get_session(session_id)
    if session is None:
        raise CommandError(
            f"there is no session {session_id} ('heedful sessions list' shows them).", BAD_INPUT
        )
    return session.title, session.message_count


# --- sessions list -----------------------------------------------------------------------------


def run_list() -> int:
    def body(store: SqliteChatStore) -> None:
        sessions = store.list_sessions()
        if not sessions:
            print("No sessions yet.", file=sys.stderr)
            return
        rows = [
            (
                str(s.id),
                f"{s.message_count:,}",
                local_text(s.updated_at, "%Y-%m-%d %H:%M"),
                " ".join(s.title.split()),
            )
            for s in sessions
        ]
        header = ("ID", "MESSAGES", "UPDATED", "TITLE")
        width = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
        for row in [header, *rows]:
            line = f"{row[0]:>{width[0]}}  {row[1]:>{width[1]}}  {row[2]:<{width[2]}}  {row[3]}"
            sys.stdout.write(inert_line(redact(line)) + "\n")

    return _run("sessions list", body)


# --- sessions export ---------------------------------------------------------------------------


def export_format(requested: str | None, output: Path | None) -> ExportFormat:
    """The format asked for, else the output file's suffix decides (.md, .markdown), else jsonl."""
    if requested == "md" or (
        requested is None and output is not None and output.suffix.lower() in (".md", ".markdown")
    ):
        return "md"
    return "jsonl"


def run_export(session_id: int, *, fmt: str | None, output: Path | None) -> int:
    from sessions import exchange

    chosen = export_format(fmt, output)

    def body(store: SqliteChatStore) -> None:
        _session_title(store, session_id)
        dump = store.dump_session(session_id)
        # Both formats are inert as written; redacted whole (a key in them is ASCII, kept as it was).
        text = redact(exchange.to_markdown(dump) if chosen == "md" else exchange.to_jsonl(dump))
        if output is None:
            sys.stdout.write(text)
            return
        write_private(output, text)
        count = _counted(len(dump.shown), len(dump.messages), with_replaced=chosen == "jsonl")
        _say(f"Exported session {session_id} ({count}) to {quoted(str(output))}.")

    return _run("sessions export", body)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file, then a rename), readable by
    the user only: it holds their conversation."""
    try:
        fd, scratch = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as err:
        raise CommandError(f"could not write {quoted(str(path))}: {err.strerror or err}.") from err
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(scratch, path)
    except OSError as err:
        Path(scratch).unlink(missing_ok=True)
        raise CommandError(f"could not write {quoted(str(path))}: {err.strerror or err}.") from err


def _counted(shown: int, total: int, *, with_replaced: bool = True) -> str:
    """ "36 messages", counted as `sessions list` counts them (``shown`` of the ``total`` rows);
    replaced replies a transcript keeps (for an exact import) are named apart."""
    words = f"{shown:,} message{'s' if shown != 1 else ''}"
    replaced = total - shown
    if replaced and with_replaced:
        words += f", and {replaced:,} replaced repl{'ies' if replaced != 1 else 'y'} not shown in the chat"
    return words


# --- sessions import ---------------------------------------------------------------------------


class _Progress:
    """The import's progress line on a terminal, rewritten in place; cleared before the summary."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = False

    def __call__(self, count: int) -> None:
        self.stream.write(f"\rImporting: {count:,} messages…")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def run_import(path: Path) -> int:
    from sessions.importing import open_session_file
    from sessions.transcript import TranscriptError

    try:
        source = open_session_file(path)
    except TranscriptError as err:
        _say(f"heedful sessions import: {err}")
        return BAD_INPUT
    progress = _Progress(sys.stderr) if sys.stderr.isatty() else None

    def body(store: SqliteChatStore) -> None:
        try:
            stored = store.import_session(source, progress=progress)
        except TranscriptError as err:
            raise CommandError(str(err), BAD_INPUT) from err
        finally:
            if progress is not None:
                progress.clear()
        _say(
            f"Imported {_counted(stored.shown, stored.messages)} from {quoted(str(path))} as session "
            f"{stored.session_id}: {inert_line(redact(stored.title))}",
            sys.stdout,
        )

    return _run("sessions import", body)


# --- sessions delete ---------------------------------------------------------------------------


def run_delete(session_id: int, *, yes: bool) -> int:
    def body(store: SqliteChatStore) -> None:
        title, count = _session_title(store, session_id)
        if not yes:
            if not sys.stdin.isatty():
                raise CommandError(
                    "not deleting without confirmation: add --yes (standard input is not a terminal).",
                    BAD_INPUT,
                )
            question = (
                f"Delete session {session_id} “{inert_line(redact(title))}” and its {count:,} messages? "
                "This cannot be undone. [y/N] "
            )
            try:
                answer = input(question)
            except EOFError:
                answer = ""
            if answer.strip().lower() not in ("y", "yes"):
                raise CommandError("nothing was deleted.")
        store.delete_session(session_id)
        print(f"Deleted session {session_id}.", file=sys.stderr)

    return _run("sessions delete", body)


# --- ledger ------------------------------------------------------------------------------------


def run_ledger(session_id: int, *, as_json: bool, stats: bool = False) -> int:
    def body(store: SqliteChatStore) -> None:
        _session_title(store, session_id)
        entries = store.ledger(session_id)
        if stats:
            _print_stats(session_id, entries, store.saved_tokens(session_id), as_json=as_json)
            return
        if as_json:
            document = [{"id": entry.id, **entry.as_json()} for entry in entries]
            sys.stdout.write(inert_json(redact(json.dumps(document, ensure_ascii=False, indent=1))) + "\n")
            return
        if not entries:
            print(
                f"The ledger of session {session_id} is empty: nothing has been decided yet.", file=sys.stderr
            )
            return
        for entry in entries:
            about = f"#{entry.target}" if entry.target.isdigit() else entry.target
            change = (
                f" ({entry.before} → {entry.after})"
                if entry.before and entry.after and entry.before != entry.after
                else ""
            )
            line = (
                f"turn {entry.turn:>3}  {entry.kind.value:<9} {about:<12} "
                f"{entry.action}{change}: {entry.reason}"
            )
            sys.stdout.write(inert_line(redact(" ".join(line.split("\n")))) + "\n")

    return _run("ledger", body)


def _print_stats(session_id: int, entries: list[LedgerEntry], saved: int, *, as_json: bool) -> None:
    from engine.curation.forgetting_stats import forgetting_stats

    found = forgetting_stats(entries, saved)
    if as_json:
        document = {"session": session_id, **found.as_json()}
        sys.stdout.write(inert_json(json.dumps(document, ensure_ascii=False, indent=1)) + "\n")
        return
    lines = [f"Forgetting statistics of session {session_id}:", *found.lines()]
    sys.stdout.write("".join(inert(redact(line)) + "\n" for line in lines))
