"""The ledger dialog (F6) with a long log: it opens on the newest page, the rest comes as the user
moves or scrolls down, and the filter and restore reach every entry, loaded into the table or not."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from engine.curation.ledger import EntryKind, LedgerEntry
from tests.apphelpers import chat, make_app, send, wait_for
from tui.app import HeedfulApp
from tui.screens.ledger import PAGE_ROWS, LedgerScreen

ENTRIES = 1_000


def log(n: int = ENTRIES) -> list[LedgerEntry]:
    """``n`` prunes, oldest first: entry k is about message k at turn k; the oldest says why in
    words no other entry has."""
    return [
        LedgerEntry(
            EntryKind.OPERATION,
            turn=k,
            target=str(k),
            action="prune",
            reason="the very first decision" if k == 1 else f"not mentioned since turn {k - 1}",
        )
        for k in range(1, n + 1)
    ]


@contextlib.asynccontextmanager
async def ledger_open(
    entries: list[LedgerEntry],
) -> AsyncIterator[tuple[HeedfulApp, Pilot[None], list[int | None]]]:
    """The app with the ledger dialog open on ``entries``; the list gets what it is dismissed with."""
    app = make_app()
    restored: list[int | None] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: chat(app).context is not None)
        screen = LedgerScreen(entries)
        app.push_screen(screen, restored.append)
        await wait_for(pilot, lambda: screen.table.row_count > 0)
        yield app, pilot, restored


def table(app: HeedfulApp) -> DataTable[str]:
    return app.screen.query_one("#ledger-table", DataTable)


def title(app: HeedfulApp) -> str:
    rendered = app.screen.query_one(".title", Static).render()
    assert isinstance(rendered, Content)
    return rendered.plain


def turns(rows: DataTable[str]) -> list[int]:
    return [int(rows.get_row_at(index)[0]) for index in range(rows.row_count)]


async def test_a_long_ledger_opens_on_its_newest_page_and_the_rest_comes_as_the_cursor_goes_down() -> None:
    async with ledger_open(log()) as (app, pilot, _):
        rows = table(app)
        assert rows.row_count == PAGE_ROWS
        assert turns(rows)[:3] == [ENTRIES, ENTRIES - 1, ENTRIES - 2]
        assert title(app) == "Ledger: every forgetting decision, newest first (1,000 entries)"
        for _ in range(ENTRIES // PAGE_ROWS):  # to the last row loaded, which brings the next page
            await pilot.press("ctrl+end")
        assert turns(rows) == list(range(ENTRIES, 0, -1))


async def test_scrolling_the_ledger_down_brings_the_next_page() -> None:
    async with ledger_open(log()) as (app, pilot, _):
        rows = table(app)
        rows.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert rows.row_count == 2 * PAGE_ROWS
        assert rows.cursor_row == 0  # the wheel moved the view, not the cursor


async def test_the_filter_and_restore_reach_an_entry_the_table_has_not_loaded() -> None:
    async with ledger_open(log()) as (app, pilot, restored):
        await pilot.press("ctrl+f", *"very first", "enter")
        rows = table(app)
        assert turns(rows) == [1]
        assert title(app) == "Ledger: every forgetting decision, newest first (1 of 1,000 match)"
        await pilot.press("alt+r")
        assert restored == [1]


async def test_clearing_the_filter_brings_the_newest_page_back() -> None:
    async with ledger_open(log()) as (app, pilot, _):
        await pilot.press("ctrl+f", *"turn 99")  # "since turn 99" and "since turn 990" to 999
        assert turns(table(app)) == [*range(1000, 990, -1), 100]
        for _ in range(len("turn 99")):
            await pilot.press("backspace")
        assert table(app).row_count == PAGE_ROWS
        assert title(app).endswith("(1,000 entries)")


def detail(app: HeedfulApp) -> str:
    rendered = app.screen.query_one("#ledger-detail", Static).render()
    assert isinstance(rendered, Content)
    return rendered.plain


async def test_the_highlighted_row_is_shown_whole_below_the_table() -> None:
    # A reason longer than the dialog is wide: the table cuts it, the line below says it all.
    why = "kept out of the request since turn 7 because " + "nothing after it named the invoice " * 4
    entries = [*log(3), LedgerEntry(EntryKind.OPERATION, turn=9, target="4", action="prune", reason=why)]
    async with ledger_open(entries) as (app, pilot, _):
        await wait_for(pilot, lambda: detail(app) == f"turn 9 · #4 · pruned · —\n{why}")
        await pilot.press("down")
        assert detail(app) == "turn 3 · #3 · pruned · —\nnot mentioned since turn 2"
        await pilot.press("ctrl+f", *"no such words")
        assert detail(app) == "Nothing matches “no such words”."


async def test_a_filter_that_matches_nothing_says_so_and_the_ledger_stays_open() -> None:
    # The steps of the report: F6, /, "zz" raised IndexError in the highlight handler and the app
    # stopped ("Heedful stopped unexpectedly").
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        for n in range(3):
            await send(pilot, f"hello {n}")
        await pilot.press("f6")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerScreen))
        await wait_for(pilot, lambda: table(app).row_count > 0)
        everything = table(app).row_count
        await pilot.press("ctrl+f", "z", "z", "enter", "down", "up", "alt+r")  # nothing to act on
        await wait_for(pilot, lambda: "Nothing matches" in detail(app))
        assert detail(app) == "Nothing matches “zz”."
        assert isinstance(app.screen, LedgerScreen) and table(app).row_count == 0
        await pilot.press("ctrl+f", "backspace", "backspace")
        await wait_for(pilot, lambda: table(app).row_count == everything)
        assert "Nothing matches" not in detail(app)
