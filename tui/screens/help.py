"""Keys and what they do."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# Heedful keys

| key | what it does |
|---|---|
| Enter | send the message |
| Ctrl+J, Alt+Enter | new line in the message |
| Esc | stop the reply that is streaming (what arrived is kept) |
| Ctrl+R | retry: ask for the last reply again |
| Alt+C | copy the last reply |
| Ctrl+N | new session |
| Ctrl+O | sessions: open, rename (r), delete (d) |
| F2 | show and focus the context panel, or hide it |
| F3 | how to connect a model |
| F4 | answer Heedful's request about your older messages (keep / summarize / remove) |
| F5 | preview: exactly what the next request sends |
| F6 | ledger: every forgetting decision and why; / filters, r restores a message |

In the context panel:

| key | what it does |
|---|---|
| ↑ ↓, j k | move between rows |
| p | pin or unpin the message (always sent verbatim) |
| r | restore the message (verbatim again) |
| f | forget the message now (kept in the store; r brings it back) |
| Enter | inspect: its text, why it is where it is, its scores and ledger |
| / | filter the rows (Esc clears the filter) |

The same p, r, f and Enter work on a message in the chat when it has the focus (Shift+Tab from the
composer, or click it); e shows or hides the summary of a summarized message. Each message says
where it stands in the next request: ≈ summarized, ✂ pruned (dimmed), 📌 pinned, ↺ recalled,
○ left out; nothing means verbatim.
| Ctrl+P | command palette: every action, and themes |
| Ctrl+Q | quit |

Every message is saved before it is sent. A reply that fails or is stopped keeps what
arrived and says so; Ctrl+R asks again.

*Esc closes this screen.*
"""


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "connect.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "dismiss(None)", "Close", id="help_close")
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Markdown(HELP, open_links=False)
