"""The store as cold recall reads it: a long session's messages before its curated cut, found by
their words (see :mod:`engine.curation.cold_recall`). ``sessions.store.SqliteChatStore`` implements it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engine.chat import StoredMessage


class ColdStore(Protocol):
    """Finds a session's uncurated messages by their words, without holding them in memory."""

    def earlier_matches(
        self, session_id: int, *, upto: int, words: Sequence[str], limit: int
    ) -> list[StoredMessage]:
        """Up to ``limit`` of the session's messages with ids up to ``upto`` that contain any of
        ``words`` (plain lower-case words, never query syntax), the best match first; messages
        left out of the conversation (superseded, failed) and those the user took out are not."""
        ...
