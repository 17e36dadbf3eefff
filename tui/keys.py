"""The key bindings users can change in the config file's ``[keys]`` table, and the help listing.

Every configurable binding has an id; Textual's keymap replaces a binding's keys by id, so one
entry remaps an action wherever it is bound (the panel and a focused message share pin, restore,
forget).
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from textual.binding import Binding
from textual.keys import _character_to_key

from tui.screens.chat_bindings import CHAT_BINDINGS
from tui.screens.consent import ConsentScreen
from tui.screens.large_message import LargeMessageScreen
from tui.widgets.context_panel import ContextList, ContextPanel
from tui.widgets.message_view import MessageView

WHERE = (
    ("anywhere", CHAT_BINDINGS),
    ("context panel", ContextPanel.BINDINGS),
    ("context panel", ContextList.BINDINGS),
    ("focused message", MessageView.BINDINGS),
    ("consent dialog", ConsentScreen.BINDINGS),
    ("large message", LargeMessageScreen.BINDINGS),
)
"""Where each binding is pressed (the chat screen's apply anywhere), and the bindings there."""
PLAIN_KEYS = frozenset({"space", *(_character_to_key(c) for c in string.punctuation)})
"""Key names that type a character (besides letters and digits): never an action's key."""


def plain(keys: str) -> list[str]:
    """The keys of a ``[keys]`` value that are typing (a letter, a digit, space, punctuation)."""
    return [k for k in (k.strip() for k in keys.split(",")) if len(k) == 1 or k in PLAIN_KEYS]


@dataclass(frozen=True, slots=True)
class KeyHelp:
    binding_id: str
    keys: str
    description: str
    where: str


def configurable() -> Iterator[KeyHelp]:
    """Every binding that has an id, with its default keys, once per id and place."""
    seen: set[tuple[str, str]] = set()
    for where, bindings in WHERE:
        for binding in bindings:
            if isinstance(binding, Binding) and binding.id and (binding.id, where) not in seen:
                seen.add((binding.id, where))
                description = binding.tooltip or binding.description
                yield KeyHelp(binding.id, binding.key, description, where)


def check_keymap(keys: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The entries of ``[keys]`` that name a known action, and a problem line for each that does not."""
    known = {entry.binding_id for entry in configurable()}
    keymap = {
        binding_id: value for binding_id, value in keys.items() if binding_id in known and not plain(value)
    }
    problems = [
        f"[keys] {binding_id!r} is not an action Heedful knows; F1 lists the action ids."
        for binding_id in keys
        if binding_id not in known
    ]
    problems += [
        f"[keys] {binding_id} = {value!r}: {', '.join(plain(value))} is typing, not an action key "
        "(typing is always typing); use Alt, Ctrl or a function key."
        for binding_id, value in keys.items()
        if binding_id in known and plain(value)
    ]
    return keymap, problems
