"""Bindings written one a line: a key, its action, its footer label and tooltip, and the id the
config's ``[keys]`` table remaps it by (the action's name unless the action takes arguments); and
the binding every dialog closes by."""

from __future__ import annotations

from textual.binding import Binding


def key(
    keys: str, action: str, description: str, tooltip: str = "", *, name: str = "", show: bool = True
) -> Binding:
    """A remappable binding whose id is ``name``, or ``action`` when no name is given."""
    return Binding(keys, action, description, show=show, tooltip=tooltip, id=name or action)


def closing(
    keys: str = "escape", *, name: str = "dialog_cancel", description: str = "Close", tooltip: str = ""
) -> Binding:
    """The binding that closes a dialog with no answer: Esc, and the key that opened it where given."""
    return Binding(keys, "dismiss(None)", description, tooltip=tooltip, id=name)
