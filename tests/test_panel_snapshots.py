"""Snapshots of the context panel at 80x24, 100x30 and 200x50, offline and with a model on the fake
server, over a session with summaries, a recall, the user's own document not sent, and a pin.

Each picture shows: the bar and legend of the next request with the budget's percentage (the
header's), "Your messages not sent" first with its reason, the sections in words, and F1 in the
footer. Update with ``--snapshot-update`` and look at the SVGs before committing them."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from tests.apphelpers import chat, fake_provider, make_app, refreshed, wait_for, write_config
from tests.fake_openai import FakeOpenAIServer
from tests.panel_session import seed_panel_session
from tui.app import HeedfulApp
from tui.widgets.composer import Composer

QUIET = "[memory]\nenabled = false\n"
"""No memory: the seeded session is days old, and opening it would assess it (a dated toast)."""
SIZES = [(80, 24), (100, 30), (200, 50)]


pytestmark = pytest.mark.usefixtures("utc")


async def panel_shown(pilot: Pilot[None]) -> None:
    """Wait for the session's messages and its curated panel; show the panel where a narrow
    terminal hides it (F2), with the list focused on its first row."""
    app = pilot.app
    assert isinstance(app, HeedfulApp)
    screen = chat(app)
    await wait_for(pilot, lambda: screen.context is not None and screen.context_panel.rows.option_count > 0)
    await wait_for(pilot, lambda: len(screen.query("MessageView")) > 0)
    screen.query_one(Composer).cursor_blink = False
    if not screen.context_panel.display:
        await pilot.press("f2")
        await wait_for(pilot, lambda: screen.context_panel.size.height > 0)
    # The panel shows what the next request sends (its picture and notes too, not only its rows),
    # then is laid out and drawn: twice, as the rows are laid out again once their scrollbar shows.
    await wait_for(pilot, lambda: screen.settled)
    await refreshed(pilot, screen.context_panel)
    await refreshed(pilot)
    await refreshed(pilot)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_panel_offline(snap_compare: Any, size: tuple[int, int]) -> None:
    write_config(QUIET)
    seed_panel_session()
    assert snap_compare(make_app(), terminal_size=size, run_before=panel_shown)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_panel_with_a_model(snap_compare: Any, size: tuple[int, int]) -> None:
    with FakeOpenAIServer() as server:
        fake_provider(server, 8192, tables=QUIET)
        seed_panel_session()
        assert snap_compare(make_app(), terminal_size=size, run_before=panel_shown)
