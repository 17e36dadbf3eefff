"""Text from a conversation or a file name leaves the ``heedful`` command inert: no raw control, C1,
DEL, bidi or zero-width character reaches standard output, standard error or a file meant for reading,
on a terminal or not (``cat`` of a file or ``less -r`` of a pipe shows it later). JSON stays exact."""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cli.main import main
from engine.chat import MessageStatus
from engine.curation.items import ItemState
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.protocols.store import ItemRecord
from engine.text.inert import BIDI_CONTROLS, ZERO_WIDTH
from sessions import paths
from sessions.store import open_store

C0 = "".join(map(chr, range(0x20)))
C1 = "".join(map(chr, range(0x80, 0xA0)))
HIDDEN = "\u00ad\u180e\u2061\u2064\u206a\u206f\ufff9\ufffb\U000e0001\U000e0020\U000e0041\U000e0067\U000e007f"
"""Other invisible format characters and tag characters (ASCII smuggling), none in a flag here."""
EVERY = C0 + "\x7f" + C1 + BIDI_CONTROLS + ZERO_WIDTH + HIDDEN
"""Every character that must not reach a terminal raw (a newline and a tab may, where a format keeps them)."""
SELECTORS = "\ufe00\ufe0f\U000e0100"
"""Variation selectors: one after a character selects its form; a run of them hides data."""
SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")


def leaked(text: str, *, keep: str = "\n\t") -> str:
    """The characters of ``text`` a terminal must not see raw (runs of variation selectors included)."""
    found = {c for c in text if c in EVERY and c not in keep}
    return "".join(sorted(found | {c for run in SELECTOR_RUN.findall(text) for c in run}))


def run(*argv: str) -> tuple[int, str, str]:
    """``heedful ARGV`` in this process: its exit code, standard output and standard error."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def hostile_session(text: str) -> int:
    """A session whose title, messages, model name, error, summary and ledger all hold ``text``."""
    store = open_store(paths.database_path()).store
    try:
        session = store.create_session(text)
        store.add_message(session.id, "user", f"{text} user")
        reply = store.add_message(session.id, "assistant", f"{text} reply", model=text)
        store.add_message(session.id, "tool", text)
        failed = store.add_message(session.id, "assistant", text, model=text)
        store.update_message(failed.id, status=MessageStatus.FAILED, error=text)
        entry = LedgerEntry(EntryKind.OPERATION, 1, text, text, text, before="active", after=text)
        store.save_curation(
            session.id,
            items=[ItemRecord(reply.id, ItemState.SUMMARIZED, summary=text)],
            entities=[],
            ledger=[entry],
        )
        return session.id
    finally:
        store.close()


def file_name(text: str) -> str:
    """``text`` as much as a file name can hold (no slash, no NUL, not empty)."""
    return text.replace("/", "_").replace("\x00", "_")[:60] + ".jsonl"


HOSTILE = st.text(
    alphabet=st.sampled_from([*EVERY, *SELECTORS, "a", " ", "é", "`", "#"]), min_size=1, max_size=24
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(HOSTILE)
@example(EVERY)
@example("evil \x1b]0;TITLE\x07 \x9b2j\x9d0;t\x9c \u202etxt.exe\u200b")
@example("\U000e007f")
@example("hi \U000e0069\U000e0067\U000e006e \u00adx😀\ufe00\ufe01\U000e0100")
def test_no_raw_control_or_bidi_character_leaves_any_command(tmp_path: Path, text: str) -> None:
    where = Path(tempfile.mkdtemp(dir=tmp_path))
    os.environ["HEEDFUL_DATA_DIR"] = str(where / "data")  # a fresh database per example (conftest restores)
    session = str(hostile_session(text))
    shown: dict[str, str] = {}

    def command(name: str, *argv: str, code: int = 0) -> str:
        got, out, err = run(*argv)
        assert got == code, (name, err)
        shown[f"{name} (stdout)"], shown[f"{name} (stderr)"] = out, err
        return out

    command("sessions list", "sessions", "list")
    exported = command("export jsonl", "sessions", "export", session)
    command("export md", "sessions", "export", session, "--format", "md")
    for suffix in ("md", "jsonl"):
        written = where / f"export.{suffix}"
        command(f"export to .{suffix}", "sessions", "export", session, "--output", str(written))
        shown[f"the .{suffix} file"] = written.read_text(encoding="utf-8")
    command("ledger", "ledger", session)
    ledger = command("ledger --json", "ledger", session, "--json")

    # A file named with the text, holding a transcript whose ids and contents are the text.
    transcript = where / file_name(text)
    rows = [
        {"id": text, "role": "user", "content": text},
        {"id": f"{text}2", "role": "assistant", "content": text},
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    replayed = command("replay", "replay", str(transcript), "--context-window", "900")
    command(
        "replay --output",
        "replay",
        str(transcript),
        "--context-window",
        "900",
        "--output",
        str(where / "r.json"),
    )
    shown["the replay file"] = (where / "r.json").read_text(encoding="utf-8")
    command("import", "sessions", "import", str(transcript))
    bad = where / file_name(f"bad {text}")
    bad.write_text(json.dumps({"id": text, "role": text, "content": text}) + "\n", encoding="utf-8")
    command("import of a bad line", "sessions", "import", str(bad), code=2)
    command("replay of a bad line", "replay", str(bad), "--context-window", "900", code=2)
    command("import of a missing file", "sessions", "import", str(where / file_name(f"gone {text}")), code=2)

    assert {name: leaked(out) for name, out in shown.items() if leaked(out)} == {}
    # The JSON outputs are escaped, not changed: they read back to exactly the text.
    assert json.loads(exported.splitlines()[0])["session"]["title"] == text
    assert json.loads(ledger)[0]["target"] == text
    assert json.loads(replayed)["final"]["messages"][0]["content"] == text


def test_a_markdown_export_shows_escapes_as_symbols_and_fences_tool_output_and_tracebacks(
    tmp_path: Path,
) -> None:
    attack = "title\x1b]2;PWNED\x07 clip\x1b]52;c;aGk=\x07 \x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\"
    trace = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n    main()\n'
        "KeyError: 'x'"
    )
    store = open_store(paths.database_path()).store
    try:
        session = store.create_session("export")
        store.add_message(session.id, "user", attack)
        store.add_message(session.id, "tool", "$ cat notes.md\n```\n# not a heading\n")
        store.add_message(session.id, "assistant", f"It failed:\n{trace}\nSo check x.")
        failed = store.add_message(session.id, "assistant", "")
        store.update_message(failed.id, status=MessageStatus.FAILED, error=trace)
    finally:
        store.close()
    written = tmp_path / "s.md"
    assert run("sessions", "export", str(session.id), "--output", str(written))[0] == 0
    text = written.read_text(encoding="utf-8")

    assert leaked(text) == ""
    assert "title␛]2;PWNED\ufffd clip␛]52;c;aGk=\ufffd ␛]8;;https://evil␛\\link" in text
    # The tool's output sits in a fence longer than any inside it, so its ``` ends nothing.
    assert "\n````\n$ cat notes.md\n```\n# not a heading\n````\n" in text
    assert f"It failed:\n```\n{trace}\n```\nSo check x." in text  # the traceback is code
    assert text.endswith(f"\n```\n{trace}\n```\n")  # and so is the error under the failed reply


def test_a_file_name_that_sets_the_title_is_quoted_and_inert_on_success_and_on_error(tmp_path: Path) -> None:
    named = tmp_path / "evil\x1b]0;TITLE\x07\u202etxt.jsonl"
    named.write_text(json.dumps({"id": "1", "role": "user", "content": "hi"}) + "\n", encoding="utf-8")
    code, out, _ = run("sessions", "import", str(named))
    shown = f"'{tmp_path}/evil␛]0;TITLE\ufffd⟨U+202E⟩txt.jsonl'"
    assert code == 0 and out.startswith(f"Imported 1 message from {shown} as session ")
    named.write_text("not json\n", encoding="utf-8")
    code, _, err = run("sessions", "import", str(named))
    assert code == 2 and err.startswith(f"heedful sessions import: {shown}, line 1: invalid JSON")


def test_bidi_and_zero_width_characters_in_titles_are_shown_as_markers() -> None:
    store = open_store(paths.database_path()).store
    try:
        store.create_session("invoice \u202egpj.exe\u200b done")
    finally:
        store.close()
    _, out, _ = run("sessions", "list")
    assert out.splitlines()[1].endswith("  invoice ⟨U+202E⟩gpj.exe⟨U+200B⟩ done")
