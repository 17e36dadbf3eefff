"""The footer, with the help key first: keys that do not fit the terminal's width are left out
whole (never cut mid-word), and F1 (what lists them all) is never one of them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

HELP_ACTION = "help"

Shown = tuple[object, ...]


class HelpFooter(Footer):
    """Textual's footer with the key of the help action moved to the front, composed again only
    when the keys it shows change: Textual's composes it again at every change of focus or
    screen state (three times before the first frame)."""

    _composed_for: Shown | None = None

    def _shown(self) -> Shown:
        """What the footer's compose reads: the keys it would show, their labels and states."""
        palette, display = self.app.COMMAND_PALETTE_BINDING, self.app.get_key_display
        keys = [
            (key, b.action, display(b), b.description, b.group, enabled, tooltip)
            for key, (_, b, enabled, tooltip) in self.screen.active_bindings.items()
            if b.show or key == palette
        ]
        return (self.show_command_palette, self.combine_groups, *keys)

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._composed_for = self._shown()
        keys = list(super().compose())
        for key in keys:  # the class each key sets itself once mounted: _fit measures them before
            if isinstance(key, FooterKey):
                key.set_class(self.compact or key.has_class("-command-palette"), "-compact")
        first = [k for k in keys if isinstance(k, FooterKey) and k.action == HELP_ACTION]
        yield from first
        yield from (k for k in keys if k not in first)

    async def recompose(self) -> None:
        if self._bindings_ready and self.is_attached and self._shown() == self._composed_for:
            return  # the same keys, labels and states: composing them again changes nothing
        await super().recompose()
        self._fit()  # before the new keys' first layout: no key is drawn cut, then hidden

    def bindings_changed(self, screen: Screen[object]) -> None:
        """As Textual's, but the keys are composed at once rather than after the next frame."""
        self._bindings_ready = True
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self.call_next(self.recompose)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Show the keys, in order, that fit whole left of the palette key; hide the rest.

        Textual lays the keys out in one row and lets the last ones run under the palette key,
        which cut one mid-word ("f2 Co▏^p palette") at 80-100 columns."""
        if not self.size.width:
            return
        viewport = self.app.size
        flowing = [child for child in self.children if child.styles.dock == "none"]
        docked = [child for child in self.children if child.styles.dock != "none" and child.display]
        room = self.size.width - sum(
            _width(child, self.size, viewport) + child.styles.margin.width for child in docked
        )
        x, fits = 0, True
        for n, child in enumerate(flowing):
            margin = child.styles.margin
            right = x + (margin.left if n == 0 else 0) + _width(child, self.size, viewport)
            fits = fits and right <= room
            child.display = fits
            following = flowing[n + 1].styles.margin.left if n + 1 < len(flowing) else 0
            x = right + max(margin.right, following)


def _width(widget: Widget, container: Size, viewport: Size) -> int:
    """The cells ``widget`` takes in the footer's row, margins aside."""
    return widget.get_content_width(container, viewport) + widget.styles.gutter.width
