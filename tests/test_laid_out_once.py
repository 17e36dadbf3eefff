"""LaidOutOnce: a message that grows, or one mounted with text, lays the screen out once, not twice;
LaidOutStatic: new text of the same size lays it out not at all."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.pilot import Pilot
from textual.widgets import Static

from tests.apphelpers import refreshed
from tui.widgets.laid_out_once import LaidOutOnce, LaidOutStatic

LONG = "a line long enough to wrap onto a second one at this width"


async def laid_out(pilot: Pilot[None], layouts: list[Size | None]) -> None:
    """Wait until a frame is drawn with no layout in it: the change's own layout, and any further
    one it asks for (Textual's second), have happened by then."""
    while True:
        seen = len(layouts)
        await refreshed(pilot)
        if len(layouts) == seen:
            return


class _Box(Vertical, LaidOutOnce):
    DEFAULT_CSS = "_Box { height: auto; }"


class _Lines(App[None]):
    def compose(self) -> ComposeResult:
        with _Box(id="box"):
            yield LaidOutStatic("short", id="once")
            yield Static("short", id="plain")
        yield Static("below", id="below")


class _Figures(App[None]):
    CSS = "#gauge { width: auto; } #hidden { display: none; }"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield LaidOutStatic("12 of 100 tokens", id="line")
            yield LaidOutStatic("12%", id="gauge")
            yield LaidOutStatic("", id="hidden")
            yield LaidOutStatic("below", id="below")


async def test_a_line_that_grows_is_laid_out_once_and_moves_what_is_below(layouts: list[Size | None]) -> None:
    app = _Lines()
    async with app.run_test(size=(40, 10)) as pilot:
        await laid_out(pilot, layouts)
        once, below = app.query_one("#once", Static), app.query_one("#below", Static)
        was = below.region.y
        layouts.clear()
        once.update(Content(LONG))
        await laid_out(pilot, layouts)
        assert len(layouts) == 1
        assert once.outer_size.height == 2
        assert below.region.y == was + 1
        assert "one at this width" in once.render_line(1).text  # drawn at its new size


async def test_textual_lays_a_plain_static_out_twice(layouts: list[Size | None]) -> None:
    """Why LaidOutOnce exists: once Textual stops asking for the second layout, it can go."""
    app = _Lines()
    async with app.run_test(size=(40, 10)) as pilot:
        await laid_out(pilot, layouts)
        layouts.clear()
        app.query_one("#plain", Static).update(Content(LONG))
        await laid_out(pilot, layouts)
        assert len(layouts) == 2


async def test_a_line_given_text_before_its_mount_is_laid_out_once(layouts: list[Size | None]) -> None:
    app = _Lines()
    async with app.run_test(size=(40, 10)) as pilot:
        await laid_out(pilot, layouts)
        below = app.query_one("#below", Static)
        was = below.region.y
        layouts.clear()
        line = LaidOutStatic("")
        line.update(Content(LONG))  # as Markdown builds each block it appends
        await app.query_one("#box", _Box).mount(line)
        await laid_out(pilot, layouts)
        assert len(layouts) == 1
        assert line.outer_size.height == 2
        assert below.region.y == was + 2


async def test_new_figures_of_the_same_size_are_drawn_without_a_layout(layouts: list[Size | None]) -> None:
    app = _Figures()
    async with app.run_test(size=(40, 10)) as pilot:
        await laid_out(pilot, layouts)
        line, gauge = app.query_one("#line", LaidOutStatic), app.query_one("#gauge", LaidOutStatic)
        layouts.clear()
        line.update(Content("13 of 100 tokens"))
        gauge.update(Content("13%"))
        app.query_one("#hidden", LaidOutStatic).update(Content("a long hint " * 20))
        await laid_out(pilot, layouts)
        assert layouts == []
        assert "13 of 100 tokens" in line.render_line(0).text
        assert "13%" in gauge.render_line(0).text


async def test_a_figure_that_grows_moves_what_is_below_it(layouts: list[Size | None]) -> None:
    app = _Figures()
    async with app.run_test(size=(40, 10)) as pilot:
        await laid_out(pilot, layouts)
        line, gauge, below = (app.query_one(f"#{name}", LaidOutStatic) for name in ("line", "gauge", "below"))
        was = below.region.y
        layouts.clear()
        line.update(Content("a figure long enough to wrap onto a second line"))
        gauge.update(Content("100%"))
        await laid_out(pilot, layouts)
        assert layouts  # laid out again
        assert line.outer_size.height == 2
        assert gauge.outer_size.width == 4
        assert below.region.y == was + 1
