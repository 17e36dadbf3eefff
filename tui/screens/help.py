"""Keys and what they do."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from tui.typing import TypingPassesThrough

HELP = """\
# Heedful keys

| key | what it does |
|---|---|
| Enter | send the message |
| Ctrl+J, Alt+Enter | new line in the message |
| Tab, Shift+Tab | move between the composer, the context panel and the messages |
| PageUp, PageDown | scroll the conversation (in a draft taller than the composer: move through it) |
| Ctrl+P | command palette: every action, and themes (dark, light, high contrast) |
| Ctrl+Q | quit |

The context panel (F2) lists what is active, retained and pruned. On a highlighted row, or on a
focused message in the chat: p pins, r restores, f forgets, Enter shows why. In the panel, ↑ ↓ or
j k move and / filters (Esc clears). On a message, e shows the summary sent in its place, t a
reasoning model's thinking (never sent back to it), i edits your message (sending it goes on from
there; the old branch stays in the store), d deletes it (kept in the store and logged), y copies it
and c copies its code block. Each
message says where it stands in the next request: ≈ summarized, ✂ pruned (dimmed), 📌 pinned,
↺ recalled, ○ left out; nothing means verbatim.

Every message is saved before it is sent. A reply that fails or is stopped keeps what
arrived and says so; Ctrl+R asks again.

*Esc closes this screen.*
"""


def key_table(overrides: Mapping[str, str]) -> str:
    """Every configurable action: its keys (yours where the config changes them) and its id."""
    from tui.keys import configurable

    lines = ["| keys | what it does | where | action id |", "|---|---|---|---|"]
    for entry in configurable():
        keys = overrides.get(entry.binding_id, entry.keys)
        lines.append(f"| {keys} | {entry.description} | {entry.where} | `{entry.binding_id}` |")
    return "\n".join(lines)


def command_table() -> str:
    """The slash commands, as typed in the composer."""
    from tui.slash import COMMANDS

    lines = ["| command | what it does |", "|---|---|"]
    lines += [f"| `/{c.name}{' ' + c.args if c.args else ''}` | {c.help} |" for c in COMMANDS]
    return "\n".join(lines) + "\n\nTab completes a command; `//` starts a message with a slash.\n"


CONFIGURING = """
## Changing keys

In the config file, a `[keys]` table maps an action id to its keys, for example
`retry = "ctrl+t"` or `pin = "P"` (several keys: `"P,ctrl+p"`).
"""


class HelpScreen(TypingPassesThrough, ModalScreen[None]):
    CSS_PATH = "connect.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1", "dismiss(None)", "Close", id="help_close")]

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.overrides = dict(overrides or {})

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Markdown(HELP, open_links=False)
            yield Markdown("## Slash commands\n\n" + command_table(), open_links=False)
            yield Markdown(
                "## Every action\n\n" + key_table(self.overrides) + "\n" + CONFIGURING, open_links=False
            )
