"""The store as cold recall reads it: a long session's messages before its curated cut, found by
their words (see :mod:`engine.curation.cold_recall`). ``sessions.store.SqliteChatStore`` implements it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from engine.chat import StoredMessage
from engine.text.analysis import Analysis


class ColdStore(Protocol):
    """Finds a session's uncurated messages by their words, without holding them in memory."""

    def earlier_matches(
        self, session_id: int, *, upto: int, words: Sequence[str], limit: int
    ) -> list[StoredMessage]:
        """Up to ``limit`` of the session's messages with ids up to ``upto`` that contain any of
        ``words`` (plain lower-case words, never query syntax), the best match first; messages
        left out of the conversation (superseded, failed) and those the user took out are not."""
        ...

    def word_documents(self, words: Sequence[str]) -> tuple[int, list[int]]:
        """About how many messages the store holds, and how many of them hold each of ``words``
        (plain lower-case words) or a word that begins with it, across every session."""
        ...

    def earlier_around(
        self, session_id: int, ids: Sequence[int], *, upto: int, reach: int
    ) -> list[list[StoredMessage]]:
        """For each of ``ids`` (messages :meth:`earlier_matches` found), that message with up to
        ``reach`` messages on either side of it (ids up to ``upto``) that :meth:`earlier_matches`
        could find, in conversation order: the context a question or an answer sits in."""
        ...

    def analyses_of(self, session_id: int, version: int, ids: Sequence[int]) -> Mapping[int, Analysis]:
        """The stored analyses of the session's messages ``ids`` (those it has), as
        :meth:`engine.protocols.store.ChatStore.load_analyses` gives them: spares reading them again."""
        ...
