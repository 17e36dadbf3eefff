"""The user's edits to the conversation itself: delete a message, or edit one and go on from there.

Nothing is erased. A deleted message, and the branch an edit leaves behind, are marked superseded:
they stay in the store (and in exports) but are neither shown nor sent again. Each edit is written
to the ledger with its reason, like every other forgetting decision.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from engine.chat import MessageStatus, StoredMessage
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.session_curations import SessionCurations

DELETED_BY_YOU = "deleted by you"
BRANCHED_BY_EDIT = "replaced by your edit of #{id}; the old branch stays in the store"
EDIT_PAGE = 500
"""Messages read at a time for the branch an edit replaces."""


class NotEditable(Exception):
    """The message cannot be edited or deleted as asked; ``str()`` says why, for the user."""


@dataclass(frozen=True, slots=True)
class Superseded:
    """Messages an edit took out of the conversation (ids in order)."""

    ids: tuple[int, ...]


class ConversationEdits:
    """Delete a message, or cut the conversation at a user message so an edit can replace it."""

    def __init__(self, curations: SessionCurations) -> None:
        self.curations = curations
        self.store = curations.store

    async def delete(self, session_id: int, message_id: int) -> Superseded:
        """Take one message out of the conversation (kept in the store, logged).

        Raises:
            NotEditable: There is no such message in the session, or it is already gone.
        """
        return await asyncio.to_thread(self._supersede, session_id, message_id, branch=False)

    async def branch_at(self, session_id: int, message_id: int) -> Superseded:
        """Take a user message and everything after it out of the conversation, so that the edited
        text can be sent in its place (the caller sends it). The old branch stays in the store.

        Raises:
            NotEditable: It is not one of the session's user messages.
        """
        return await asyncio.to_thread(self._supersede, session_id, message_id, branch=True)

    def _from(self, session_id: int, message_id: int, *, whole: bool) -> list[StoredMessage]:
        """The session's messages from ``message_id`` on (all of them if ``whole``, else that one),
        read a page at a time: not the whole session, which may hold a million."""
        found = self.store.messages_after(session_id, message_id - 1, limit=1)
        after = found[-1].id if found else None
        while whole and after is not None:
            page = self.store.messages_after(session_id, after, limit=EDIT_PAGE)
            found += page
            after = page[-1].id if page else None
        return found

    def _supersede(self, session_id: int, message_id: int, *, branch: bool) -> Superseded:
        history = self._from(session_id, message_id, whole=branch)
        if not history or history[0].id != message_id or history[0].status == MessageStatus.SUPERSEDED:
            raise NotEditable(f"Message #{message_id} is not in this conversation.")
        if branch and history[0].role != "user":
            raise NotEditable("Only your own messages can be edited; Ctrl+R asks for a reply again.")
        gone: list[StoredMessage] = [m for m in history if m.status != MessageStatus.SUPERSEDED]
        with self.curations.held(session_id) as held:
            turn = held.curation.turn
            reason = BRANCHED_BY_EDIT.format(id=message_id) if branch else DELETED_BY_YOU
            for message in gone:
                self.store.update_message(message.id, status=MessageStatus.SUPERSEDED)
            self.store.save_curation(
                session_id,
                items=[],
                entities=[],
                ledger=[
                    LedgerEntry(
                        kind=EntryKind.OPERATION,
                        turn=turn,
                        target=str(message.id),
                        action="edit" if branch else "delete",
                        reason=reason,
                        before=message.status.value,
                        after=MessageStatus.SUPERSEDED.value,
                    )
                    for message in gone
                ],
            )
            # The curation is rebuilt from the store on next use, without them.
            held.evict()
        return Superseded(tuple(m.id for m in gone))
