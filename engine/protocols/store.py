"""The store the engine reads and writes a conversation through; ``sessions.store.SqliteChatStore``
implements it (tests use it too, on a temporary database)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from engine.advice.calls import CallUsage
from engine.chat import (
    HistoryCut,
    MessagePage,
    MessageStatus,
    Role,
    Session,
    SessionSettings,
    StoredMessage,
)
from engine.curation.consent import ConsentChoice
from engine.curation.items import ItemState
from engine.curation.ledger import LedgerEntry
from engine.entities.registry import EntityRecord

if TYPE_CHECKING:
    from engine.curation.keep_rules import KeepRule
    from engine.standing.book import Edit
    from engine.summaries.model import StoredSummary
    from engine.summaries.story_book import StoredStoryLine
    from engine.text.analysis import Analysis

# --- curation state ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ItemRecord:
    """What the engine decided about one message, as the store keeps it."""

    message_id: int
    state: ItemState
    pinned: bool = False
    kept_by_user: bool = False
    summary: str | None = None
    forgotten: bool = False


@dataclass(frozen=True, slots=True)
class StandingScan:
    """A session's user messages read for standing instructions: those with ids up to ``upto``;
    ``said`` are the ids of those that state one, in order."""

    upto: int
    said: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CurationSnapshot:
    """A session's stored curation state: everything not derivable from the messages themselves,
    but its entities' records (:meth:`ChatStore.load_entities`, read for the refs it needs)."""

    items: dict[int, ItemRecord]
    policy: ConsentChoice | None = None
    saved_tokens: int = 0
    """Tokens curation has saved over the session's turns."""


# --- the store -------------------------------------------------------------------------------


class ChatStore(Protocol):
    """Sessions and their messages. Every method commits before it returns.

    Methods are synchronous and quick; async callers run them in a thread, so an implementation
    must be safe to call from any one thread at a time.
    """

    def create_session(self, title: str) -> Session: ...

    def get_session(self, session_id: int) -> Session | None: ...

    def latest_session(self) -> Session | None:
        """The most recently updated session, or None when there is none."""
        ...

    def list_sessions(self) -> list[Session]:
        """All sessions, the most recently updated first."""
        ...

    def rename_session(self, session_id: int, title: str) -> Session: ...

    def delete_session(self, session_id: int) -> None:
        """Delete a session and its messages (the user asked for it)."""
        ...

    def add_message(
        self,
        session_id: int,
        role: Role,
        content: str,
        *,
        status: MessageStatus = MessageStatus.COMPLETE,
        tokens: int | None = None,
        model: str | None = None,
    ) -> StoredMessage:
        """Append a message to a session and touch the session's ``updated_at``."""
        ...

    def update_message(
        self,
        message_id: int,
        *,
        content: str | None = None,
        status: MessageStatus | None = None,
        tokens: int | None = None,
        error: str | None = None,
    ) -> StoredMessage:
        """Change the given fields of a message; fields left as None keep their value."""
        ...

    def changed_elsewhere(self, session_id: int) -> bool:
        """Whether another Heedful on the same database changed the session's messages (added,
        edited) since this store last wrote to it or looked; asking counts as looking."""
        ...

    def messages(self, session_id: int) -> list[StoredMessage]:
        """A session's messages in the order they were added, superseded ones included."""
        ...

    def messages_after(
        self, session_id: int, message_id: int, *, limit: int, upto: int | None = None
    ) -> list[StoredMessage]:
        """Up to ``limit`` of the session's messages after ``message_id`` (superseded ones too), and
        none after ``upto`` if given, oldest first: a long history read a part at a time."""
        ...

    def user_openings(
        self, session_id: int, *, after: int, upto: int, chars: int, limit: int
    ) -> list[tuple[int, str]]:
        """Up to ``limit`` of the session's user messages in the conversation (not superseded or
        failed) with ids in (``after``, ``upto``], oldest first, each as its id and its first
        ``chars`` characters: what standing instructions are recognised from."""
        ...

    def message_text(self, message_id: int) -> str:
        """A message's text; :class:`StoreError` if there is no such message."""
        ...

    def message_page(
        self, session_id: int, *, before: int | None = None, after: int | None = None, limit: int
    ) -> MessagePage:
        """Up to ``limit`` of the session's shown messages: the latest before message ``before``
        (the latest of all when both are None), or the earliest after message ``after``."""
        ...

    def history_cut(self, session_id: int, keep: int) -> HistoryCut | None:
        """Where to cut the session so that only its latest ``keep`` messages (superseded ones
        included) are curated; None when it holds no more than that."""
        ...

    def load_curation(self, session_id: int, *, after: int = 0) -> CurationSnapshot:
        """A session's item states (of its messages after message ``after``, and of those pinned
        before it) and consent policy."""
        ...

    def load_entities(self, session_id: int, refs: Collection[str]) -> list[EntityRecord]:
        """The session's stored records of the entities ``refs`` (those its curated messages
        mention: a long session's thousands of others are not read)."""
        ...

    def pinned_before(self, session_id: int, upto: int) -> list[StoredMessage]:
        """The session's messages up to ``upto`` that the user pinned (and did not take out), in
        order: a long session's curated part holds them whatever their age."""
        ...

    def forgotten_between(self, session_id: int, after: int, upto: int) -> set[int]:
        """The session's messages with ids in (``after``, ``upto``] that the user took out (the story
        of the messages before a long session's cut does not tell them)."""
        ...

    def load_analyses(
        self, session_id: int, version: int, *, after: int = 0, upto: int | None = None
    ) -> Mapping[int, Analysis]:
        """The stored analyses of a session's messages (by message id) written at ``version``,
        of the messages with ids in (``after``, ``upto``]; a message whose text changed since its
        analysis has none."""
        ...

    def load_terms(
        self, session_id: int, version: int, *, after: int = 0, upto: int | None = None
    ) -> Mapping[int, Mapping[str, int]]:
        """Only the term counts of :meth:`load_analyses` (what the story of the messages before a
        long session's cut reads: their mentions are not made)."""
        ...

    def save_analyses(self, version: int, analyses: Sequence[tuple[int, Analysis]]) -> None:
        """Store analyses (message id, analysis) made at ``version``; messages gone since are skipped."""
        ...

    def add_curation_calls(self, session_id: int, usage: CallUsage) -> None:
        """Add ``usage`` to what the session's curation calls (curator, summaries) have cost."""
        ...

    def curation_calls(self, session_id: int) -> CallUsage:
        """What the session's curation calls have cost so far (nothing for a new session)."""
        ...

    def load_summaries(self, session_id: int) -> list[StoredSummary]:
        """The model summaries stored for a session's messages (none of a message whose text changed)."""
        ...

    def save_summary(self, summary: StoredSummary) -> None:
        """Store a model's summary of a message (replacing one of the same level); a summary of a
        message that is gone, or whose text no longer has ``summary.source_hash``, is skipped."""
        ...

    def load_story_lines(self, session_id: int) -> list[StoredStoryLine]:
        """The story lines a model wrote for a session's segments, oldest written first."""
        ...

    def save_story_line(self, session_id: int, line: StoredStoryLine) -> None:
        """Store a model's line for one segment (replacing one of the same segment and model);
        skipped if the session is gone."""
        ...

    def save_curation(
        self,
        session_id: int,
        *,
        items: Sequence[ItemRecord],
        entities: Sequence[EntityRecord],
        ledger: Sequence[LedgerEntry],
        policy: ConsentChoice | None = None,
        policy_changed: bool = False,
        saved_tokens: int = 0,
    ) -> None:
        """Write state changes and their ledger entries in one transaction."""
        ...

    def ledger(self, session_id: int, *, target: str | None = None) -> list[LedgerEntry]:
        """A session's ledger, oldest first; only the entries about ``target`` when given."""
        ...

    def keep_rules(self, session_id: int) -> list[KeepRule]:
        """The session's keep rules (``/keep``), oldest first."""
        ...

    def add_keep_rule(self, session_id: int, text: str, entry: LedgerEntry) -> KeepRule:
        """Store a keep rule and its ledger line in one transaction; the rule with its id."""
        ...

    def remove_keep_rule(self, session_id: int, rule_id: int, entry: LedgerEntry) -> bool:
        """Remove a keep rule and write its ledger line, in one transaction (False: it was gone)."""
        ...

    def standing_edits(self, session_id: int) -> list[Edit]:
        """The user's changes to the session's standing instructions, oldest first."""
        ...

    def save_standing_edit(self, session_id: int, edit: Edit, entry: LedgerEntry) -> Edit:
        """Store a change to a standing instruction (``edit.id`` 0: a new one) and its ledger line
        in one transaction; the edit with its id."""
        ...

    def standing_scan(self, session_id: int, version: int) -> StandingScan | None:
        """How far the session's user messages were read for standing instructions by ``version``
        of the recogniser, and which state one; None if never, or by another version."""
        ...

    def save_standing_scan(self, session_id: int, version: int, scan: StandingScan) -> None:
        """Keep ``scan`` as the session's, made by ``version`` of the recogniser."""
        ...

    def openings(self, session_id: int, ids: Sequence[int], *, chars: int) -> list[tuple[int, str]]:
        """The first ``chars`` characters of those of ``ids`` that are the session's user messages
        in the conversation (as :meth:`user_openings`), oldest first."""
        ...

    def session_settings(self, session_id: int) -> SessionSettings:
        """The session's own settings (all None for a session that has none, or no such session)."""
        ...

    def update_session_settings(self, session_id: int, settings: SessionSettings) -> None:
        """Replace the session's own settings."""
        ...

    def get_state(self, key: str) -> str | None:
        """App state the app itself wrote (theme, last session), never user config."""
        ...

    def set_state(self, key: str, value: str) -> None: ...

    def checkpoint(self) -> None:
        """Do now, while nothing waits for the store, upkeep that would otherwise fall inside a
        later write (SQLite: copying its write-ahead log into the database file)."""
        ...

    def close(self) -> None: ...
