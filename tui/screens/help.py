"""Keys and what they do."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from tui import textual_fixes
from tui.bindings import closing
from tui.screens.dialog import Dialog
from tui.typing import TypingPassesThrough

textual_fixes.fill_mdurl_tables()  # before this screen's Markdown is parsed, in a thread

HELP = """\
# Heedful keys

**Typing is always typing.** The composer is home: whatever letters, digits, spaces and
punctuation you type land there, wherever the focus is (on a message, in the context panel, in a
dialog over the chat). Actions take Alt+letter, Enter, Esc or a function key, never a plain key.

| key | what it does |
|---|---|
| Enter | send the message |
| Ctrl+J, Alt+Enter | new line in the message |
| Tab, Shift+Tab | move between the three areas: composer → context panel → conversation → composer |
| Esc | in the panel or on a message: back to the composer; in the composer: stop a streaming reply |
| ↑ ↓ | on a message: the message before or after |
| PageUp, PageDown | scroll the conversation (in a draft taller than the composer: move through it) |
| F4 | answer Heedful's question about your older messages (the header says when one waits) |
| Ctrl+P | command palette: every action, and themes (dark, light, high contrast) |
| Ctrl+Q | quit (a message you were writing is back in the composer at the next start) |

The context panel (F2) shows what the next request holds (a bar, and how many tokens each part
takes of the budget), then your messages that are not sent, and the messages sent in full, sent as
a summary, or not sent, each with its reason. On a highlighted row, or on a focused message in the
chat: Alt+P pins, Alt+R restores, Alt+F forgets, Enter shows why. In the panel, ↑ ↓ (or Alt+J,
Alt+K) move and Ctrl+F filters (Esc clears). On a message, Alt+E shows the summary sent in its
place, Alt+T a reasoning model's thinking (never sent back to it), Alt+I edits your message
(sending it goes on from there; the old branch stays in the store), Alt+D deletes it (after
asking; kept in the store and logged), Alt+Y copies it and Alt+C copies its code block. Each
message says where it stands in the next request: ≈ summarized (its summary is sent), ✂ pruned
(dimmed), 📌 pinned, ↺ recalled, ○ not sent this time; nothing means sent in full. A count with ~
is approximate (the model's own tokenizer is not available).

**Consent.** Heedful never summarizes or leaves out your own words without asking, and it asks
only when you act: when you send a large message (keep it whole, summarize it when room is short,
or send it once), when you send a message while it has a question about older ones, or on F4.
Until you answer, those messages stay whole (or, when one cannot fit, the panel says it is not
sent), and the header shows "3 of your messages · F4". In the dialog, Enter and Esc keep your
messages whole; summarize (Alt+S), leave out (Alt+R), keep aside (Alt+T), remember for all
(Alt+M) and your own per-row answers (Tab to a row, ← →, Alt+A applies) each need a deliberate
act. Keys you typed before the dialog appeared never answer it; words you type while it is up go
to the composer, and the Enter that ends them sends your message.

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
`retry = "ctrl+t"` or `pin = "alt+x"` (several keys: `"alt+x,ctrl+p"`). A plain letter is
typing: bound to an action, it would act where you meant to write.
"""


class HelpScreen(TypingPassesThrough, Dialog[None]):
    CSS_PATH = "connect.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [closing("escape,f1", name="help_close")]

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
