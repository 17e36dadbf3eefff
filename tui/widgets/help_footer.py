"""The footer, with the help key first: the keys past the terminal's width are cut, and F1 (what
lists them all) must never be one of them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

HELP_ACTION = "help"


class HelpFooter(Footer):
    """Textual's footer with the key of the help action moved to the front."""

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        first = [k for k in keys if isinstance(k, FooterKey) and k.action == HELP_ACTION]
        yield from first
        yield from (k for k in keys if k not in first)
