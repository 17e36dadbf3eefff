"""Widgets that ask Textual for one layout of the screen where Textual asks for two.

A layout reflows and redraws the whole screen: at 10,000 messages it takes 15-100 ms. Textual asks
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

from typing import Self

from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Static


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
    """A Static that asks for one layout per change (with ``update_in_place``, none if its size
    stays): message lines, the panel's figures, the header."""
