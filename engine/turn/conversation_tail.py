"""The end of a stored conversation: the replies to its last user message, and a cut-off reply.

Read a page at a time from the end, as a session may hold 10,000 messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.chat import MessageStatus, StoredMessage

if TYPE_CHECKING:  # the store's protocol imports the curation's records: not for the first frame
    from engine.protocols.store import ChatStore

TAIL_PAGE = 50
"""Messages read at a time when looking back from the end of a session for its last user message."""


class NothingToRetry(Exception):
    """Retry was asked for in a session with no user message."""


class NothingToContinue(Exception):
    """Continue was asked for, but the session's last reply was not cut short."""


def since_last_user_message(store: ChatStore, session_id: int) -> list[StoredMessage]:
    """The shown messages after the session's last user message.

    Raises:
        NothingToRetry: the session has no user message.
    """
    tail: list[StoredMessage] = []
    before: int | None = None
    while True:
        page = store.message_page(session_id, before=before, limit=TAIL_PAGE).messages
        if not page:
            raise NothingToRetry(session_id)
        users = [i for i, m in enumerate(page) if m.role == "user"]
        if users:
            return page[users[-1] + 1 :] + tail
        tail = page + tail
        before = page[0].id


def cut_reply(store: ChatStore, session_id: int) -> StoredMessage:
    """The session's last message, if it is a reply that was cut off with some text.

    Raises:
        NothingToContinue: the last reply is whole, or there is none.
    """
    latest = store.message_page(session_id, limit=1).messages
    last = latest[-1] if latest else None
    if last is None or not last.is_reply or last.status != MessageStatus.INTERRUPTED or not last.content:
        raise NothingToContinue(session_id)
    return last
