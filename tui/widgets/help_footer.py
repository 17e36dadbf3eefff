"""The footer, with the help key first: the keys past the terminal's width are cut, and F1 (what
lists them all) must never be one of them."""

from __future__ import annotations

from textual.app import ComposeResult
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
        first = [k for k in keys if isinstance(k, FooterKey) and k.action == HELP_ACTION]
        yield from first
        yield from (k for k in keys if k not in first)

    async def recompose(self) -> None:
        if self._bindings_ready and self.is_attached and self._shown() == self._composed_for:
            return  # the same keys, labels and states: composing them again changes nothing
        await super().recompose()
