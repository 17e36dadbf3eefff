"""What reaches the terminal, and what a click does, when a model (or a paste) sends control codes.

The byte tests run the real app in a pty (tests/pty_app.py) and inspect every byte it writes.
Textual writes its own CSI sequences (colours, cursor moves, modes) and OSC 22 (the pointer
shape); anything else that starts with ESC, any C1 control, NUL, BEL or display erase came from
the content. Each test also checks that the content did reach the screen, in its inert form, so
it cannot pass by looking at the wrong bytes. The click tests drive the app in-process with Pilot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from engine.curation.prompt import title_from
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import chat, make_app, refreshed, views, wait_for
from tests.fake_openai import FakeOpenAIServer
from tests.pty_app import PtyApp, read_store, running_apps, send_message
from tui.app import HeedfulApp
from tui.screens.chat import ChatScreen
from tui.screens.dialogs import ConfirmScreen
from tui.widgets.message_view import MessageView

ESC_SHOWN = "\u241b"  # ␛, what tui/sanitize.py shows in place of ESC
REPLACED = "\ufffd"

PAYLOADS = [
    "P1<\x1b]52;c;UFdORUQ=\x1b\\>",  # OSC 52: write the clipboard (ST-terminated)
    "P2<\x1b]52;c;UFdORUQ=\x07>",  # the same, BEL-terminated
    "P3<\x1b]8;;file:///etc/passwd\x1b\\click\x1b]8;;\x1b\\>",  # OSC 8 hyperlink
    "P4<\x1b[2J>",  # CSI: erase the display
    "P5<\x9b2J>",  # the same with the 8-bit C1 CSI
    "P6<\x00>",
    "[@click=app.screenshot()]X[/]",  # Textual markup: an action on click
    "[link=file:///etc/passwd]y[/link]",  # Rich markup: an OSC 8 link
    "arr[0] = x[/i]",  # a MarkupError if parsed as markup
    "[bold red]z[/]",
]
HOSTILE = "\n\n".join(PAYLOADS)
"""One payload per paragraph, each short enough for one line of the chat pane."""

# How each payload looks once made inert (a Markdown body may drop the backslash of an ST).
INERT_FORMS = [
    f"P1<{ESC_SHOWN}]52;c;UFdORUQ={ESC_SHOWN}",
    f"P2<{ESC_SHOWN}]52;c;UFdORUQ={REPLACED}>",
    f"P3<{ESC_SHOWN}]8;;file:///etc/passwd{ESC_SHOWN}",
    f"P4<{ESC_SHOWN}[2J>",
    f"P5<{REPLACED}2J>",
    f"P6<{REPLACED}>",
    "[@click=app.screenshot()]X[/]",
    "[link=file:///etc/passwd]y[/link]",
    "arr[0] = x[/i]",
    "[bold red]z[/]",
]

_CSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]")
_POINTER_SHAPE = re.compile(rb"\x1b\]22;[a-z-]*\x07")  # Textual's own OSC 22
_ERASE_DISPLAY = re.compile(rb"\x1b\[[0-9;]*J")
_C1 = re.compile("[\x80-\x9f]")


def leaks(output: bytes) -> list[str]:
    """What in ``output`` a terminal would act on and Textual did not mean: [] when clean."""
    found: list[str] = []
    try:
        text = output.decode("utf-8")
    except UnicodeDecodeError as err:
        found.append(f"a raw 8-bit byte {output[err.start : err.start + 1]!r} at {err.start}")
        text = output.decode("utf-8", "replace")
    found += [f"the C1 control U+{ord(m.group()):04X} at {m.start()}" for m in _C1.finditer(text)]
    if b"\x00" in output:
        found.append("NUL")
    found += [f"a display erase {m.group()!r}" for m in _ERASE_DISPLAY.finditer(output)]
    rest = _POINTER_SHAPE.sub(b"", _CSI.sub(b"", output))
    # What came just before says which sequence it was cut from (a rare failure, kept readable).
    for stray in re.finditer(rb"\x1b", rest):
        at = stray.start()
        found.append(f"a stray ESC before {rest[at : at + 24]!r}, after {rest[max(0, at - 60) : at]!r}")
    if b"\x07" in rest:
        found.append("BEL")
    return found


def test_the_leak_check_finds_each_payload_and_passes_textuals_own_output() -> None:
    own = b"\x1b[?1049h\x1b]22;default\x07\x1b[1;1H\x1b[38;5;188;48;5;16mhello\x1b[0m\x1b[?25l"
    assert leaks(own) == []
    for payload in PAYLOADS[:6]:
        assert leaks(own + payload.encode()), payload


@pytest.fixture
def start_app() -> Iterator[Callable[..., PtyApp]]:
    """Starts real apps in ptys; every one is killed at the end of the test, pass or fail."""
    with running_apps() as start:
        yield start


def _reply_complete(database: Path, content: str) -> bool:
    rows = read_store(
        database, "SELECT status, content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1"
    )
    return bool(rows) and rows[0] == ("complete", content)


def _reply_complete_any(database: Path) -> bool:
    rows = read_store(database, "SELECT status FROM messages WHERE role = 'assistant'")
    return bool(rows) and rows[-1][0] == "complete"


# --- the real app in a pty ---------------------------------------------------------------------------


def test_control_codes_in_a_reply_never_reach_the_terminal(
    fake_server: FakeOpenAIServer, start_app: Callable[..., PtyApp]
) -> None:
    fake_server.reply = HOSTILE
    database = paths.database_path()
    app = start_app(["--base-url", fake_server.base_url, "--model", "fake-model"])
    app.wait_ready()
    assert leaks(app.quiet_output()) == []
    mark = app.mark()
    send_message(app, database, "show me")
    app.wait_for(lambda: _reply_complete(database, HOSTILE), what="the reply stored, complete and unchanged")
    app.wait_for_output(PAYLOADS[-1].encode(), since=mark)  # the last paragraph is on screen
    shown = app.output_since(mark).decode("utf-8", "replace")
    missing = [form for form in INERT_FORMS if form not in shown]
    assert missing == [], "not shown inertly"
    assert leaks(app.quiet_output(since=mark)) == []

    # Alive and well (no MarkupError took it down): it answers the next message.
    fake_server.reply = "still here"
    send_message(app, database, "are you there?")
    app.wait_for(lambda: _reply_complete(database, "still here"), what="the next reply")
    app.wait_for_output(b"still here", since=mark)
    app.assert_alive()
    assert leaks(app.quiet_output()) == []


def test_control_codes_in_stored_messages_titles_and_the_picker_are_shown_inertly(
    start_app: Callable[..., PtyApp],
) -> None:
    # What a user may have pasted (and a model answered) in an earlier run: the history, the
    # header's title, the context panel and the sessions picker all show it.
    title = "T<\x1b]52;c;UFdORUQ=\x07>[bold]t[/] \x9b2J"
    store = open_store(paths.database_path()).store
    try:
        session = store.create_session(title_from(title))
        store.add_message(session.id, "user", HOSTILE)
        store.add_message(session.id, "assistant", HOSTILE)
    finally:
        store.close()
    app = start_app(columns=120, lines=90)  # tall enough to show both messages whole
    app.wait_ready()
    app.wait_for(
        lambda: app.output.decode("utf-8", "replace").count(INERT_FORMS[0]) >= 2,
        what="both messages on screen",
    )
    app.wait_for_output(f"T<{ESC_SHOWN}]52;c;UFdORUQ={REPLACED}>[bold]t[/]".encode())  # the header
    mark = app.mark()
    app.type(b"\x0f")  # Ctrl+O: the sessions picker lists the title
    app.wait_for_output(b"Esc closes", since=mark)
    app.wait_for_output(f"T<{ESC_SHOWN}]52".encode(), since=mark)
    shown = app.output.decode("utf-8", "replace")
    assert all(shown.count(form) >= 2 for form in INERT_FORMS), "not shown inertly in both messages"
    app.assert_alive()
    assert leaks(app.quiet_output()) == []


def test_a_paste_with_control_codes_is_shown_inertly_in_the_composer(
    start_app: Callable[..., PtyApp],
) -> None:
    # A terminal's bracketed paste delivers C1 and BEL as they are (ESC sequences inside a paste
    # are taken apart by Textual's input parser, so they cannot be pasted whole).
    database = paths.database_path()
    app = start_app()
    app.wait_ready()
    mark = app.mark()
    app.paste("A<\x9b2J>B<\x07>C")
    app.wait_for_output(b">B<", since=mark)
    assert leaks(app.quiet_output(since=mark)) == [], "the composer drew the paste"
    app.type("\r")
    app.wait_for(
        lambda: read_store(database, "SELECT 1 FROM messages WHERE role = 'user' AND content LIKE 'A<%'"),
        what="the pasted message stored",
    )
    app.wait_for(lambda: _reply_complete_any(database), what="the offline reply")
    app.assert_alive()
    assert leaks(app.quiet_output()) == []


# --- clicks, in-process --------------------------------------------------------------------------------


def _locate(view: MessageView, text: str) -> tuple[int, int]:
    """Screen coordinates of the middle of ``text`` where the reply ``view`` shows it."""
    for block in view.query(MarkdownBlock):
        region = block.region
        for y in range(region.height):
            line = block.render_line(y).text
            if text in line:
                return region.x + line.index(text) + len(text) // 2, region.y + y
    raise AssertionError(f"{text!r} is not on screen in {view}")


async def _reply_to(pilot: Pilot[None], app: HeedfulApp) -> MessageView:
    """Send a message and wait (generously: the first turn loads the client and the tokenizer)
    until the reply is complete and drawn."""
    screen = chat(app)
    screen.composer.focus()
    screen.composer.insert("go")
    await pilot.press("enter")
    await wait_for(pilot, lambda: len(views(app)) == 2 and screen.settled, 60)
    reply = views(app)[-1]
    await wait_for(pilot, lambda: reply.query_one(Markdown).source != "", 10)
    await refreshed(pilot, reply.query_one(Markdown))  # its blocks mounted and drawn
    return reply


async def test_clicking_click_markup_in_a_reply_runs_no_action(
    fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_server.reply = "[@click=app.screenshot()]CLICK[/] and [@click=app.quit]QUIT[/]"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # where a screenshot would be written
    ran: list[str] = []
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    monkeypatch.setattr(app, "save_screenshot", lambda *a, **k: ran.append("save_screenshot"))
    monkeypatch.setattr(app, "action_screenshot", lambda *a, **k: ran.append("screenshot"))
    monkeypatch.setattr(app, "action_quit", lambda *a, **k: ran.append("quit"))
    async with app.run_test(size=(100, 30)) as pilot:
        reply = await _reply_to(pilot, app)
        for word in ("CLICK", "QUIT"):
            x, y = _locate(reply, word)
            hit, _ = app.screen.get_widget_at(x, y)
            assert reply in hit.ancestors_with_self  # the click lands on the reply's text
            assert await pilot.click(offset=(x, y))
            await refreshed(pilot, hit)  # the click handled where it landed (an action would run then)
            await refreshed(pilot)
        assert ran == []
        assert isinstance(app.screen, ChatScreen) and app.is_running
    assert list(cwd.iterdir()) == []


async def test_a_link_in_a_reply_opens_only_after_the_user_confirms(
    fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_server.reply = "See [here](https://example.com/x) or https://example.org/bare for more."
    opened: list[str] = []
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    monkeypatch.setattr(app, "open_url", lambda url, **k: opened.append(url))
    async with app.run_test(size=(100, 30)) as pilot:
        reply = await _reply_to(pilot, app)
        # A Markdown link, then a bare URL (linkified): each asks first, and two ways of saying no.
        for label, href in (
            ("here", "https://example.com/x"),
            ("example.org/bare", "https://example.org/bare"),
        ):
            for answer in ("escape", "alt+n", "alt+y"):
                assert await pilot.click(offset=_locate(reply, label))
                await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
                dialog = app.screen
                assert isinstance(dialog, ConfirmScreen) and href in dialog.question
                assert opened.count(href) == 0  # nothing opens before the answer
                await pilot.press(answer)
                await wait_for(pilot, lambda: app.screen is chat(app))
            assert opened.count(href) == 1
        assert opened == ["https://example.com/x", "https://example.org/bare"]
