"""The panel's row list: a new row count moves only its own scrollbar, not the whole screen."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.widgets import Static
from textual.widgets.option_list import Option

from tui.widgets.context_panel import ContextList


class _Panel(App[None]):
    CSS = "Vertical { height: 12; } ContextList { height: 1fr; }"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Context")
            yield ContextList()
        yield Static("below", id="below")


def _rows(count: int) -> list[Option]:
    return [Option(f"row {n}", id=f"row-{n}") for n in range(count)]


async def test_more_rows_scroll_to_the_last_without_laying_out_the_screen(
    layouts: list[Size | None],
) -> None:
    app = _Panel()
    async with app.run_test(size=(40, 20)) as pilot:
        rows = app.query_one(ContextList)
        rows.set_options(_rows(30))
        await pilot.pause()
        assert rows.show_vertical_scrollbar
        layouts.clear()
        rows.set_options(_rows(45))
        await pilot.pause()
        assert layouts == []
        rows.highlighted = 44
        rows.scroll_to_highlight()
        await pilot.pause()
        assert rows.max_scroll_y == 45 - rows.scrollable_content_region.height
        assert rows.scroll_y == rows.max_scroll_y
        assert rows.vertical_scrollbar.window_virtual_size == 45


async def test_rows_that_outgrow_the_panel_bring_its_scrollbar() -> None:
    app = _Panel()
    async with app.run_test(size=(40, 20)) as pilot:
        rows = app.query_one(ContextList)
        rows.set_options(_rows(3))
        await pilot.pause()
        assert not rows.show_vertical_scrollbar
        rows.set_options(_rows(30))
        await pilot.pause()
        assert rows.show_vertical_scrollbar
        bar = rows.vertical_scrollbar
        assert bar.window_virtual_size == 30 and bar.region.height > 0
        assert rows.region.contains_region(bar.region)
        assert app.query_one("#below").region.y == 12  # the panel kept its height
