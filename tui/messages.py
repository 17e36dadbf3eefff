"""Messages that widgets post for the screen to act on (widgets never call the services)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from textual.message import Message


class ItemVerb(enum.StrEnum):
    """What the user may ask of a message in the context (the engine decides; "inspect" asks why)."""

    PIN = "pin"
    """Pin, or unpin a pinned one."""
    RESTORE = "restore"
    FORGET = "forget"
    INSPECT = "inspect"


class MessageVerb(enum.StrEnum):
    """What the user may ask of a message in the chat itself."""

    EDIT = "edit"
    DELETE = "delete"
    COPY = "copy"
    COPY_CODE = "copy_code"


@dataclass
class ContextAction(Message):
    """The user asked for ``action`` on the message ``item_id`` in the context."""

    action: ItemVerb
    item_id: int


@dataclass
class MessageAction(Message):
    """The user asked for ``action`` on a chat message."""

    action: MessageVerb
    message_id: int
