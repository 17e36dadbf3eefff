"""Widgets that ask Textual for one layout of the screen where Textual asks for two.

A layout reflows and redraws the whole screen, which costs a long session dearly. Textual asks
for a second one in two cases where it places nothing differently:

* After a layout, ``Widget.virtual_size`` is set on every widget whose size changed, and as a
  layout reactive it asks for another layout. A streaming reply paid two per draw, and a turn two
  per mount (its new widgets go from no size to theirs).
* ``Static.update`` on a widget not mounted yet (Markdown builds each new block so) marks it for a
  layout of its own, which follows the layout its mount asks for.

Only for the widgets where the second layout would place nothing differently: messages, their
text and Markdown, and the list holding them (their heights follow their content, already
measured), and the panel's rows (their height is the panel's). A new virtual size still repaints
them, and a scrollbar shown or hidden still asks for its own layout. Not made global: without the
virtual-size layout everywhere, a read-only TextArea in a box of ``height: auto`` (the inspect
dialog's) stayed one line high.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self, cast

from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.visual import VisualType, visualize
from textual.widget import Widget
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.css.styles import RulesMap


class LaidOutOnce(Widget):
    """Put after the Textual class: ``class MessageView(Vertical, LaidOutOnce)``. Textual takes CSS
    and component classes from the first base alone."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        if layout and not self.is_mounted:
            self._layout_updates += 1  # what it is measured by has changed (Textual's box-model cache key)
            layout = False  # its mount lays it out
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


class LaidOutStatic(Static, LaidOutOnce):
    """A Static whose new content asks for a layout only when it changes the widget's size.

    ``Static.update`` lays out the whole screen by default, and a turn's meta lines, panel figures
    and header gauge change several times a turn without changing a single widget's size. A
    hidden widget takes no room: showing it lays the screen out anyway.
    """

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        super().update(content, layout=layout and self._resized_by(content))

    def _resized_by(self, content: VisualType) -> bool:
        if not self.display:
            return False
        if not self.is_mounted:
            return True
        styles = self.styles
        width = self.outer_size.width - styles.gutter.width
        if width <= 0:
            return True
        old, new = self.visual, visualize(self, content, markup=self._render_markup)
        rules = cast("RulesMap", styles)  # what Textual itself measures a widget's visual with
        if new.get_height(rules, width) != old.get_height(rules, width):
            return True
        auto_width = styles.width is not None and styles.width.is_auto
        return auto_width and new.get_optimal_width(rules, width) != old.get_optimal_width(rules, width)
