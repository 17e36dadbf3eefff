"""Messages that widgets post for the screen to act on (widgets never call the services)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class ContextAction(Message):
    """The user asked for ``action`` ("pin", "restore", "forget" or "inspect") on a message."""

    action: str
    item_id: int


@dataclass
class MessageAction(Message):
    """The user asked for ``action`` ("edit", "delete", "copy" or "copy_code") on a chat message."""

    action: str
    message_id: int
