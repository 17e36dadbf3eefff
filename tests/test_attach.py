"""/attach: a text file added to the conversation (what the next request carries), its path
completed with Tab, and files that cannot be attached refused in words."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._markdown import MarkdownParagraph
from textual.widgets.markdown import MarkdownFence

from engine.turn.attachments import MAX_ATTACHMENT_BYTES
from tests.apphelpers import chat, command_says, make_app, send, stored_messages, toasts, views, wait_for
from tests.fake_openai import FakeOpenAIServer
from tui.slash import attach_argument, path_completions


async def test_attach_adds_a_text_file_that_the_next_request_carries(
    tmp_path: Path, fake_server: FakeOpenAIServer
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("The deploy key rotates every Friday at 17:00.\n", encoding="utf-8")
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(notifications=True) as pilot:
        await command_says(pilot, app, f"/attach {notes}", "Attached notes.txt")
        (tool,) = [m for m in stored_messages() if m.role == "tool"]
        assert tool.content.endswith("The deploy key rotates every Friday at 17:00.\n")
        await send(pilot, "When does the deploy key rotate?")
    sent = fake_server.requests[-1]["body"]["messages"]
    # Servers refuse a "tool" message that answers no tool call: it goes as the user's.
    assert any(m["role"] == "user" and "rotates every Friday" in m["content"] for m in sent)
    assert all(m["role"] != "tool" for m in sent)


def test_path_completion_marks_folders_and_hides_dot_files_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("n", encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / ".secret").write_text("s", encoding="utf-8")
    base = f"{tmp_path}/"
    assert path_completions(f"{base}no") == [f"{base}notebooks/", f"{base}notes.txt"]
    assert path_completions(base) == [f"{base}notebooks/", f"{base}notes.txt"]  # no hidden file
    assert path_completions(f"{base}.") == [f"{base}.secret"]
    assert path_completions(f"{base}missing/x") == []
    assert attach_argument("/attach  no") == "no" and attach_argument("/attachment") is None
    assert attach_argument("/pin 3") is None and attach_argument("/attach a\nb") is None


async def test_attach_completes_paths_with_tab_and_shows_a_stack_trace_line_by_line(tmp_path: Path) -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "    load_invoices()\n"
        "ValueError: no *invoices* found\n"
    )
    (tmp_path / "crash.log").write_text(trace, encoding="utf-8")
    (tmp_path / "crashes").mkdir()
    app = make_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        screen = chat(app)
        screen.composer.focus()
        screen.composer.text = f"/attach {tmp_path}/cr"
        screen.composer.move_cursor(screen.composer.document.end)
        await pilot.press("tab")
        await wait_for(pilot, lambda: screen.composer.text == f"/attach {tmp_path}/crash")
        assert app.focused is screen.composer  # Tab completed instead of moving focus
        await pilot.press("e", "s", "tab")
        await wait_for(pilot, lambda: screen.composer.text == f"/attach {tmp_path}/crashes/")
        screen.composer.text = f"/attach {tmp_path}/crash."
        screen.composer.move_cursor(screen.composer.document.end)
        await pilot.press("tab")
        await wait_for(pilot, lambda: screen.composer.text == f"/attach {tmp_path}/crash.log")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Attached crash.log" in t for t in toasts(app)))
        await wait_for(pilot, lambda: any(v.message.role == "tool" for v in views(app)))
        (tool,) = [v for v in views(app) if v.message.role == "tool"]
        await wait_for(pilot, lambda: bool(tool.query(MarkdownFence)))
        (fence,) = tool.query(MarkdownFence)
        assert fence.code == trace.rstrip("\n")  # every line break kept, shown as code
        assert "*invoices*" in fence.code  # the file's text is not read as Markdown
        heading = tool.query(MarkdownParagraph).first()
        assert str(heading.render()).startswith("Attached file crash.log (124 bytes):")
    (stored,) = [m for m in stored_messages() if m.role == "tool"]
    assert stored.content.endswith(trace)  # what is stored and sent is unchanged


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        (b"caf\xe9 latin-1", "not UTF-8"),
        (b"x" * (MAX_ATTACHMENT_BYTES + 1), "MB"),
    ],
)
async def test_binary_undecodable_and_oversized_files_are_refused_in_words(
    tmp_path: Path, content: bytes, said: str
) -> None:
    path = tmp_path / "thing.bin"
    path.write_bytes(content)
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await command_says(pilot, app, f"/attach {path}", said, "thing.bin")
        await command_says(pilot, app, f"/attach {tmp_path / 'missing.txt'}", "Could not read")
    assert stored_messages() == []
