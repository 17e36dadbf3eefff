"""The panel's legend: new figures on as many lines are redrawn in place, without a layout of the
whole screen (at 10,000 messages that layout was a turn's costliest draw); more lines still move
what is below."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.widgets import Static

from engine.curation.context_view import Part, RequestPart
from tests.apphelpers import wait_for
from tui.widgets.request_picture import RequestPicture


class _Legend(App[None]):
    CSS = "Vertical { width: 40; height: auto; }"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield RequestPicture(legend=True, id="legend")
            yield Static("below", id="below")


def _parts(recent: int, *, summaries: bool = False) -> list[RequestPart]:
    parts = [RequestPart(Part.SYSTEM, 120, 0), RequestPart(Part.RECENT, recent, 4)]
    if summaries:
        parts[1:1] = [RequestPart(Part.SUMMARIES, 900, 30), RequestPart(Part.OLDER, 2_400, 60)]
    return parts


async def test_new_figures_on_as_many_lines_do_not_lay_out_the_screen(layouts: list[Size | None]) -> None:
    app = _Legend()
    async with app.run_test(size=(60, 20)) as pilot:
        legend = app.query_one(RequestPicture)
        legend.show(_parts(640), 760, 4_000, exact=True)
        await wait_for(pilot, lambda: legend.size.height > 0)
        await pilot.pause()
        layouts.clear()
        legend.show(_parts(700), 820, 4_000, exact=True)
        await wait_for(pilot, lambda: "recent turns 700" in str(legend.render()))
        await pilot.pause()
        assert layouts == []
        one_line = legend.size.height
        legend.show(_parts(700, summaries=True), 4_120, 8_000, exact=True)
        await wait_for(pilot, lambda: legend.size.height > one_line)
        lines = str(legend.render()).splitlines()
        assert len(lines) == legend.size.height and "room left" in lines[-1]
        assert app.query_one("#below").region.y == legend.region.bottom
