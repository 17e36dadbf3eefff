"""The panel's rows after an update: the same rows, highlight, scroll and lines as a list built
afresh; and where the user scrolled them when no row changed."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from engine.curation.context_view import ContextView, ItemView, Mark, Section
from engine.curation.items import ItemState
from tui.widgets.context_options import ContextOptions
from tui.widgets.context_panel import ContextList, ContextPanel

_MARKS = (Mark.VERBATIM, Mark.PINNED, Mark.SUMMARIZED, Mark.PRUNED, Mark.LEFT_OUT)
_SECTIONS = {Mark.PRUNED: Section.PRUNED, Mark.LEFT_OUT: Section.PRUNED}


def _item(item_id: int, mark: Mark, tokens: int = 40) -> ItemView:
    return ItemView(
        id=item_id,
        role="user" if item_id % 2 else "assistant",
        label=f"#{item_id}",
        preview=f"message number {item_id} about the deploy",
        tokens=tokens,
        state=ItemState.PRUNED if mark in _SECTIONS else ItemState.ACTIVE,
        pinned=mark is Mark.PINNED,
        section=_SECTIONS.get(mark, Section.ACTIVE),
        mark=mark,
        reason=f"scored {item_id % 7}",
    )


def _view(items: tuple[ItemView, ...]) -> ContextView:
    return ContextView(
        turn=1,
        tokens=sum(i.tokens for i in items),
        budget=100_000,
        window=128_000,
        saved_tokens=0,
        session_saved_tokens=0,
        active=(),
        retained=(),
        pruned=(),
        items=items,
        messages=(),
        notes=(),
        consent=None,
        over_budget=False,
    )


class _Panels(App[None]):
    """The panel as the app has it, and beside it another whose rows are built afresh."""

    CSS = "ContextPanel { width: 50; height: 24; }"

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield ContextPanel(id="context")
            yield ContextPanel(id="fresh")

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {"heedful-muted": "ansi_bright_black"}

    async def on_mount(self) -> None:
        for panel in self.query(ContextPanel):
            await panel.fill()


def _show(panel: ContextPanel, view: ContextView) -> None:
    panel.show(view, model="m", exact=True, counter="tiktoken")


def _lines(rows: ContextList) -> list[str]:
    return [rows.render_line(y).text for y in range(rows.scrollable_content_region.height)]


async def _updates_match_a_fresh_list(views: list[ContextView], picks: list[int]) -> None:
    app = _Panels()
    async with app.run_test(size=(110, 30)) as pilot:
        panel = app.query_one("#context", ContextPanel)
        fresh = app.query_one("#fresh", ContextPanel).rows
        rows = panel.rows
        rows.focus()
        scrolled, shown = rows.scroll_y, list(rows.options)
        for view, pick in zip(views, picks, strict=True):
            # As the arrows would: the row the user looks at, kept by the update if it stays.
            selectable = [n for n, option in enumerate(rows.options) if not option.disabled]
            if selectable:
                rows.highlighted = selectable[pick % len(selectable)]
                await pilot.pause()
            scrolled, shown = rows.scroll_y, list(rows.options)
            _show(panel, view)
            await pilot.pause()
        # The last view as a list built afresh (set_options), with the same row highlighted.
        _show(app.query_one("#fresh", ContextPanel), views[-1])  # the same lines above the rows
        await pilot.pause()
        fresh.set_options(ContextOptions().make(views[-1], ""))
        keep = rows.highlighted_option
        if keep is not None and keep.id is not None:
            fresh.highlighted = fresh.get_option_index(keep.id)
        fresh.scroll_to_highlight()
        await pilot.pause()
        assert [(o.id, str(o.prompt)) for o in rows.options] == [(o.id, str(o.prompt)) for o in fresh.options]
        assert rows.highlighted == fresh.highlighted
        if [o.id for o in shown] == [o.id for o in rows.options] and [str(o.prompt) for o in shown] == [
            str(o.prompt) for o in rows.options
        ]:
            assert rows.scroll_y == scrolled  # no row changed: where the user left it
        else:
            assert rows.scroll_y == fresh.scroll_y
            assert _lines(rows) == _lines(fresh)


_views = st.lists(
    st.lists(st.sampled_from(_MARKS), min_size=0, max_size=60).map(
        lambda marks: _view(tuple(_item(n + 1, mark) for n, mark in enumerate(marks)))
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=12, deadline=None)
@given(views=_views, picks=st.lists(st.integers(0, 200), min_size=4, max_size=4))
def test_rows_after_updates_are_the_rows_built_afresh(views: list[ContextView], picks: list[int]) -> None:
    """Whatever came before (rows reused, moved between groups, gone or new, the highlight moved),
    the panel shows what a list built afresh from the last view shows."""
    asyncio.run(_updates_match_a_fresh_list(views, picks[: len(views)]))


async def test_an_update_that_changes_no_row_keeps_where_the_user_scrolled() -> None:
    """The next request's preview or summaries written change no row: the list stays where the
    user scrolled it, with the same row highlighted (it jumped back to the highlight before)."""
    view = _view(tuple(_item(n, Mark.VERBATIM) for n in range(1, 81)))
    app = _Panels()
    async with app.run_test(size=(110, 30)) as pilot:
        panel = app.query_one("#context", ContextPanel)
        _show(panel, view)
        rows = panel.rows
        rows.focus()
        rows.highlighted = rows.get_option_index("item-50")
        await pilot.pause()
        rows.scroll_to(y=rows.scroll_y + 2, animate=False, immediate=True)  # the mouse wheel
        await pilot.pause()
        scrolled = rows.scroll_y
        drawn = _lines(rows)
        _show(panel, _view(tuple(_item(n, Mark.VERBATIM) for n in range(1, 81))))
        await pilot.pause()
        assert rows.highlighted_option is not None and rows.highlighted_option.id == "item-50"
        assert rows.scroll_y == scrolled
        assert _lines(rows) == drawn


async def test_an_update_that_moves_the_highlighted_row_keeps_it_highlighted_and_in_sight() -> None:
    """New messages come above the highlighted one: it stays highlighted, on screen."""
    app = _Panels()
    async with app.run_test(size=(110, 30)) as pilot:
        panel = app.query_one("#context", ContextPanel)
        _show(panel, _view(tuple(_item(n, Mark.VERBATIM) for n in range(1, 41))))
        rows = panel.rows
        rows.focus()
        rows.highlighted = rows.get_option_index("item-3")  # near the end: the list is newest first
        await pilot.pause()
        _show(panel, _view(tuple(_item(n, Mark.VERBATIM) for n in range(1, 61))))
        await pilot.pause()
        option = rows.highlighted_option
        assert option is not None and option.id == "item-3"
        index = rows.get_option_index("item-3")
        height = rows.scrollable_content_region.height
        assert rows.scroll_y <= index < rows.scroll_y + height
        assert "#3 " in str(panel.query_one("#context-why", Static).content)
