"""update_in_place: a Static's new text lays the screen out again only when its size changes."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Static

from tui.widgets.static_update import update_in_place


class _Figures(App[None]):
    CSS = "#gauge { width: auto; } #hidden { display: none; }"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("12 of 100 tokens", id="line")
            yield Static("12%", id="gauge")
            yield Static("", id="hidden")
            yield Static("below", id="below")


@pytest.fixture
def layouts(monkeypatch: pytest.MonkeyPatch) -> list[Size | None]:
    """Each layout of the screen, as it happens."""
    seen: list[Size | None] = []
    refresh_layout = Screen._refresh_layout

    def counting(self: Screen[object], size: Size | None = None, scroll: bool = False) -> None:
        seen.append(size)
        refresh_layout(self, size, scroll)

    monkeypatch.setattr(Screen, "_refresh_layout", counting)
    return seen


async def test_new_figures_of_the_same_size_are_drawn_without_a_layout(layouts: list[Size | None]) -> None:
    app = _Figures()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        line, gauge = app.query_one("#line", Static), app.query_one("#gauge", Static)
        layouts.clear()
        update_in_place(line, Content("13 of 100 tokens"))
        update_in_place(gauge, Content("13%"))
        update_in_place(app.query_one("#hidden", Static), Content("a long hint " * 20))
        await pilot.pause()
        assert layouts == []
        assert "13 of 100 tokens" in line.render_line(0).text
        assert "13%" in gauge.render_line(0).text


async def test_a_figure_that_grows_moves_what_is_below_it(layouts: list[Size | None]) -> None:
    app = _Figures()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        line, gauge, below = (app.query_one(f"#{name}", Static) for name in ("line", "gauge", "below"))
        was = below.region.y
        layouts.clear()
        update_in_place(line, Content("a figure long enough to wrap onto a second line"))
        update_in_place(gauge, Content("100%"))
        await pilot.pause()
        assert layouts  # laid out again
        assert line.outer_size.height == 2
        assert gauge.outer_size.width == 4
        assert below.region.y == was + 1
