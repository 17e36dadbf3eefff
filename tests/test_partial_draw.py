"""A line of the panel changes: only the rows it is on are drawn, and those rows come out as a
whole-screen draw would have them (tui.textual_fixes: Textual drew the footer and every
screen-wide container whole for it)."""

from __future__ import annotations

from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Footer, Static

from tests.apphelpers import wait_for
from tui import textual_fixes


class _Screenful(App[None]):
    CSS = "#left { width: 1fr; } #right { width: 30; } Static { height: 3; }"
    BINDINGS = [("f1", "help", "Help"), ("f2", "panel", "Panel")]  # noqa: RUF012

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="left"):
                yield from (Static(f"message {n}\nwith a second line", id=f"m{n}") for n in range(8))
            with Vertical(id="right"):
                yield from (Static(f"panel line {n}", id=f"p{n}") for n in range(8))
        yield Footer()


async def test_a_changed_panel_line_draws_its_rows_alone_and_as_a_full_draw_would() -> None:
    textual_fixes.install()
    app = _Screenful()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.query_one("#p7", Static).region.height == 3)
        await pilot.pause()
        compositor = app.screen._compositor
        drawn: list[str] = []
        chops: list[tuple[Region, list[dict[int, Strip]]]] = []
        render_lines, render_chops = Widget.render_lines, Compositor._render_chops

        def counting(self: Widget, crop: Region) -> list[Strip]:
            drawn.append(type(self).__name__ if self.id is None else self.id)
            return render_lines(self, crop)

        def keeping(self: Compositor, crop: Region, is_rendered_line: object) -> list[dict[int, Strip]]:
            made = render_chops(self, crop, is_rendered_line)  # type: ignore[arg-type]
            chops.append((crop, [dict(line) for line in made]))
            return made  # type: ignore[return-value]

        Widget.render_lines = counting  # type: ignore[method-assign]
        Compositor._render_chops = keeping  # type: ignore[method-assign]
        try:
            app.query_one("#p2", Static).update("panel line 2, changed")
            await wait_for(pilot, lambda: chops)
        finally:
            Widget.render_lines = render_lines  # type: ignore[method-assign]
            Compositor._render_chops = render_chops  # type: ignore[method-assign]
        assert "p2" in drawn and "Footer" not in drawn, drawn
        assert not [name for name in drawn if name.startswith("m")], drawn  # nor the messages beside it
        crop, partial = chops[0]
        whole = render_chops(compositor, compositor.size.region, lambda y: True)
        for y in range(crop.y, crop.bottom):  # the cells written: the crop's
            written = [x for x in whole[y] if crop.x <= x < crop.right]
            assert written and all(partial[y][x] == whole[y][x] for x in written)
        assert "panel line 2, changed" in "".join(s.text for s in whole[crop.y].values())
