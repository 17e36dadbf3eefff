"""Big and strange input from the user: a 10 MB paste, a 100,000-line message, binary bytes.

The app must keep answering keys while such a message is counted and analysed (off the event
loop), store it exactly, and show it without laying out megabytes of text.
"""

from __future__ import annotations

from textual import events
from textual.pilot import Pilot

from tests.apphelpers import asked, chat, make_app, refreshed, stored_messages, toasts, views, wait_for
from tests.test_app import body
from tui.app import HeedfulApp
from tui.sanitize import inert
from tui.screens.large_message import LargeMessageScreen
from tui.widgets.composer import PASTE_INLINE_CHARS, Composer
from tui.widgets.message_body import SHOWN_HEAD


def paste(app: HeedfulApp, text: str) -> None:
    """As the terminal delivers a paste: to the app, which hands it to the focused widget."""
    chat(app).composer.focus()
    app.post_message(events.Paste(text))


TEN_MB = ("lorem ipsum dolor sit amet, consectetur adipiscing elit 12345\n" * 170_000)[:10_000_000]


async def test_a_ten_megabyte_paste_is_held_aside_sent_exactly_and_typing_goes_on() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = chat(app)
        composer = screen.composer
        composer.focus()
        await pilot.press("s", "e", "e", "space")
        paste(app, TEN_MB)
        await pilot.pause()
        # One short placeholder line instead of 160,000 lines of text area.
        assert composer.text == "see [Pasted text #1: 161,291 lines, 10.0 MB]"
        await pilot.press("enter")
        # Far more than the model can take: the user is asked first, and Cancel keeps it all.
        await asked(pilot, app, LargeMessageScreen)
        question = str(app.screen.query_one(".question").render())
        assert "2,500,001 tokens" in question and "10.0 MB" in question
        await pilot.press("escape")
        assert composer.text == "see [Pasted text #1: 161,291 lines, 10.0 MB]" and screen.settled
        assert not stored_messages()
        await pilot.press("enter")
        await asked(pilot, app, LargeMessageScreen)
        await pilot.press("alt+o")  # send it once
        await wait_for(pilot, lambda: screen.busy and composer.text == "")
        # The turn is still counting and analysing 10 MB: typing must get through meanwhile.
        # Keys as the terminal delivers them (Pilot.press would wait for the busy process to idle).
        for key in "next":
            app.post_message(events.Key(key, key))
        await wait_for(pilot, lambda: composer.text == "next")
        typed_while_busy = screen.busy
        await wait_for(pilot, lambda: screen.settled and len(views(app)) == 2, 120)
        assert typed_while_busy, "the turn ended before the keys were typed: nothing was measured"
        shown = body(views(app)[0])
        assert shown.startswith("see lorem ipsum")
        assert len(shown) < SHOWN_HEAD + 300  # the start, and a note, not 10 MB
        assert "more characters" in shown and "All of it is stored" in shown
    (user,) = [m for m in stored_messages() if m.role == "user"]
    assert user.content == "see " + TEN_MB


async def test_a_hundred_thousand_line_message_is_stored_whole_and_shown_briefly() -> None:
    text = "".join(f"line {n}\n" for n in range(100_000))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = chat(app)
        paste(app, text)
        await pilot.pause()
        assert screen.composer.text.startswith("[Pasted text #1: 100,001 lines,")
        await pilot.press("enter")
        await asked(pilot, app, LargeMessageScreen)
        await pilot.press("alt+o")  # send it once
        await wait_for(pilot, lambda: screen.settled and len(views(app)) == 2, 60)
        shown = body(views(app)[0])
        assert shown.startswith("line 0\nline 1\n") and "more lines" in shown
    (user,) = [m for m in stored_messages() if m.role == "user"]
    assert user.content == text


async def test_deleting_the_placeholder_drops_the_paste() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        composer = chat(app).composer
        paste(app, "x" * (PASTE_INLINE_CHARS + 1))
        await pilot.pause()
        composer.clear()
        await pilot.press("h", "i", "enter")
        await wait_for(pilot, lambda: len(views(app)) == 2 and chat(app).settled)
    assert [m.content for m in stored_messages() if m.role == "user"] == ["hi"]


async def test_a_small_paste_goes_into_the_composer_as_it_is() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        composer = chat(app).composer
        paste(app, "two\nlines")
        await pilot.pause()
        assert composer.text == "two\nlines"


async def test_control_characters_in_a_paste_are_shown_and_sent_inertly_and_the_user_told() -> None:
    nasty = "bin\x00\x01\x7f \x1b]52;c;UFdORUQ=\x07 \x1b[2J \x9b2J [bold]x[/] \udcff end"
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        paste(app, nasty)
        await pilot.pause()
        composer = chat(app).composer
        assert not any(ch in composer.text for ch in "\x00\x01\x7f\x1b\x07\x9b")
        assert "␛]52;c;UFdORUQ=" in composer.text  # visible, harmless
        await wait_for(pilot, lambda: any("8 control characters" in t for t in toasts(app)))
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(views(app)) == 2 and chat(app).settled)
        shown = body(views(app)[0])
        assert "[bold]x[/]" in shown  # markup is text, not styling
        assert shown == inert(nasty)
    # What was shown is what was sent and stored.
    assert [m.content for m in stored_messages() if m.role == "user"] == [inert(nasty)]


async def test_a_large_paste_keeps_its_bytes_exactly() -> None:
    blob = "\x00\x1b]52;c;QUJD\x07" + "word " * (PASTE_INLINE_CHARS // 5 + 1)
    app = make_app()
    async with app.run_test() as pilot:
        paste(app, blob)
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(views(app)) == 2 and chat(app).settled)
        assert not any(ch in body(views(app)[0]) for ch in "\x00\x1b\x07")
    assert [m.content for m in stored_messages() if m.role == "user"] == [blob]


KEYS = {"\n": ("enter", "\r"), "\t": ("tab", "\t"), " ": ("space", " ")}


def post_keys(app: HeedfulApp, text: str) -> None:
    """As a terminal that does not bracket pastes delivers one: key after key, all at once, each
    line break an Enter and each tab a Tab."""
    chat(app).composer.focus()
    for character in text:
        app.post_message(events.Key(*KEYS.get(character, (character, character))))


async def typed_paste(pilot: Pilot[None], app: HeedfulApp, text: str) -> Composer:
    """Deliver ``text`` as :func:`post_keys` does; the composer once it holds all of it."""
    post_keys(app, text)
    composer = chat(app).composer
    await wait_for(pilot, lambda: composer.text == text, seconds=20)
    return composer


async def test_a_paste_the_terminal_types_as_keys_stays_in_the_composer_whole_until_enter() -> None:
    # Each line break came as an Enter, which sent the lines so far on their own; the next ones
    # met "a reply is still streaming" and were lost.
    lines = "first line of my question\nsecond line, with details\nthird line: the end"
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        composer = await typed_paste(pilot, app, lines)
        # What would have sent it: an Enter of the paste let go as a send. Every key is in, none
        # is held, and the screen has handled whatever the composer posted.
        await wait_for(pilot, lambda: composer._held_enter is None)
        await refreshed(pilot)
        await wait_for(pilot, lambda: chat(app).settled)
        assert not views(app) and stored_messages() == []
        await pilot.press("enter")  # the user's own Enter, after the paste: that sends
        await wait_for(pilot, lambda: len(stored_messages()) == 2)
        assert stored_messages()[0].content == lines


async def test_a_long_line_typed_as_keys_is_in_the_composer_at_once() -> None:
    # One key at a time, each laid the whole line out again: 27 kB froze the app for minutes.
    line = " ".join(f"word{n}" for n in range(4_000))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        composer = await typed_paste(pilot, app, line)
        await pilot.press("!")  # typed after it: where the cursor was left, at its end
        assert composer.text == line + "!"


async def test_keys_typed_one_by_one_then_enter_send_the_message() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        chat(app).composer.focus()
        await pilot.press(*"hi there", "enter")
        await wait_for(pilot, lambda: len(stored_messages()) == 2)
        assert stored_messages()[0].content == "hi there"


async def test_an_indented_paste_typed_as_keys_keeps_its_tabs_in_the_composer() -> None:
    # A Tab moves the focus on: one in a paste took the rest of the paste away from the composer.
    code = "def retry():\n\treturn 3\n\nprint(retry())"
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        composer = await typed_paste(pilot, app, code)
        assert composer.has_focus


async def test_text_and_enter_typed_in_one_go_are_sent_without_the_line_break() -> None:
    # As a program types them (tmux send-keys "ok" Enter), or as a person's keys arrive when the
    # app was too busy to read them one by one: nothing follows the Enter, so it sends.
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        post_keys(app, "ok, go on\n")
        await wait_for(pilot, lambda: len(stored_messages()) == 2)
        assert stored_messages()[0].content == "ok, go on"
        assert chat(app).composer.text == ""


async def test_an_enter_typed_during_a_stall_still_sends() -> None:
    # An Enter 80 ms after the last letter is a person's: it sends at once.
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        chat(app).composer.focus()
        keys = [events.Key("o", "o"), events.Key("k", "k"), events.Key("enter", "\r")]
        keys[2].time = keys[1].time + 0.08
        for key in keys:
            app.post_message(key)
        await wait_for(pilot, lambda: len(stored_messages()) == 2)
        assert stored_messages()[0].content == "ok"


TRACE = [
    "Traceback (most recent call last):",
    '  File "app.py", line 12, in <module>',
    "    main()",
    '  File "app.py", line 9, in main',
    "    run(config)",
    '  File "runner.py", line 40, in run',
    "\tstep = steps[index]",
    '  File "steps.py", line 3, in __getitem__',
    "    raise IndexError(name)",
    "IndexError: list index out of range",
    "(end of trace)",
]


async def test_a_pasted_stack_trace_keeps_its_line_breaks_without_a_control_character_notice() -> None:
    # Terminals send a paste's line ends as CR; files from Windows hold CRLF. Neither is replaced
    # (they become line breaks, as tabs stay tabs), so neither is counted as a control character.
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        composer = chat(app).composer
        for line_end in ("\r", "\r\n", "\n"):
            paste(app, line_end.join(TRACE))
            await wait_for(pilot, lambda: composer.text == "\n".join(TRACE))
            await pilot.pause()
            assert not any("control character" in t for t in toasts(app)), line_end
            composer.clear()
        paste(app, "\r\n".join([*TRACE, "\x1b[2J"]))  # one escape among the line ends: one is said
        await wait_for(pilot, lambda: any("control character" in t for t in toasts(app)))
        assert [t for t in toasts(app) if "control character" in t] == [
            "The paste held 1 control character: shown (and sent) as ␛ or �."
        ]
