"""The app's keys with Pilot: remapped in the config, function keys while typing, a narrow
terminal, the footer at its limit."""

from __future__ import annotations

import pytest
from textual.widgets import Markdown

from tests.apphelpers import (
    chat,
    make_app,
    send,
    stored_messages,
    toasts,
    views,
    wait_for,
    write_config,
)
from tui.screens.help import HelpScreen
from tui.widgets.composer import Composer


async def test_keys_can_be_changed_in_the_config_and_help_lists_them() -> None:
    write_config('[keys]\nretry = "ctrl+t"\nnot_an_action = "x"\n')
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await send(pilot, "hello")
        await wait_for(pilot, lambda: any("not_an_action" in t for t in toasts(app)))
        await pilot.press("ctrl+t")  # the retry, on its new key
        await wait_for(pilot, lambda: len(stored_messages()) == 3 and chat(app).settled)
        assert [m.status.value for m in stored_messages()] == ["complete", "superseded", "complete"]
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen) and bool(app.screen.query(Markdown)))
        listing = "\n".join(m.source for m in app.screen.query("Markdown").results(Markdown))
        assert "| ctrl+t | Ask for the last reply again | anywhere | `retry` |" in listing
        assert "`pin`" in listing and "`forget`" in listing


async def test_a_narrow_terminal_hides_the_panel_until_f2() -> None:
    app = make_app()
    async with app.run_test(size=(70, 24)) as pilot:
        panel = chat(app).context_panel
        await wait_for(pilot, lambda: not panel.display)
        await pilot.press("f2")
        assert panel.display and panel.rows.has_focus
        await pilot.resize_terminal(120, 30)
        await pilot.pause()
        assert panel.display


@pytest.mark.parametrize(
    ("key", "screen"),
    [("f1", "HelpScreen"), ("f3", "ConnectScreen"), ("f5", "PreviewScreen"), ("f6", "LedgerScreen")],
)
async def test_function_keys_work_while_typing(key: str, screen: str) -> None:
    # The composer is a TextArea, which has its own F-keys (F6 selects the line).
    app = make_app()
    async with app.run_test() as pilot:
        await send(pilot, "hello")
        assert isinstance(app.focused, Composer)
        await pilot.press(key)
        await wait_for(pilot, lambda: type(app.screen).__name__ == screen)


async def test_the_footer_keeps_its_palette_hint_whole_when_the_keys_overflow() -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "hello")
        views(app)[0].focus()  # a message's keys: more than a 100-column footer holds
        await pilot.pause()
        footer = app.screen._compositor.render_strips()[-1].text
        assert footer.endswith("^p palette ")  # not the key scrolled beneath it in the last column
