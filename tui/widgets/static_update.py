"""Updating a Static without laying the whole screen out again when its size stays the same."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.content import Content
from textual.visual import visualize
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.css.styles import RulesMap


def update_in_place(static: Static, content: Content) -> None:
    """Show ``content`` in ``static``; ask for a layout only if the widget's size would change.

    ``Static.update`` lays out the whole screen by default. With a long session's 40 messages
    mounted, one layout costs 15-30 ms, and a turn's meta lines, panel figures and header gauge
    change several times a turn without changing a single widget's size. A hidden widget takes no
    room: showing it lays the screen out anyway.
    """
    if not static.display:
        static.update(content, layout=False)
        return
    old = static.visual
    new = visualize(static, content, markup=False)
    styles = static.styles
    rules = cast("RulesMap", styles)  # what Textual itself measures a widget's visual with
    width = static.outer_size.width - styles.gutter.width
    same_size = (
        static.is_mounted
        and width > 0
        and new.get_height(rules, width) == old.get_height(rules, width)
        and (
            styles.width is None
            or not styles.width.is_auto
            or new.get_optimal_width(rules, width) == old.get_optimal_width(rules, width)
        )
    )
    static.update(content, layout=not same_size)
