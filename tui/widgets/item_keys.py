"""Pin, restore and forget: bound alike by the context panel (its highlighted row) and a focused
message, with the same keys and ids, so one ``[keys]`` entry in the config remaps both."""

from __future__ import annotations

from textual.binding import Binding


def item_bindings(action: str, which: str) -> list[Binding]:
    """The three keys, calling the widget's ``action`` with the verb; ``which`` names the message
    in the tooltips ("this message", "the highlighted message")."""
    return [
        Binding("alt+p", f"{action}('pin')", "Pin/unpin", tooltip=f"Pin or unpin {which}", id="pin"),
        Binding(
            "alt+r", f"{action}('restore')", "Restore", tooltip=f"Send {which} verbatim again", id="restore"
        ),
        Binding("alt+f", f"{action}('forget')", "Forget", tooltip=f"Forget {which} now", id="forget"),
    ]
