"""Items: the messages of a conversation as the curation engine sees them.

An item wraps one stored message with what curation needs to know about it: who owns it, which turn
it belongs to, its token count, its entities and terms, and its context state. Items are mutable on
purpose: the engine keeps one per message for the life of a session and updates states in place,
so that a turn costs work proportional to what changed, not to the length of the history.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from engine.chat import Role
from engine.entities.mentions import Mention
from engine.text.thinking import sent_text


def id_label(item_id: int) -> str:
    """How reasons, story lines and the panel name a message its transcript gives no name: ``#id``."""
    return f"#{item_id}"


class ItemState(enum.StrEnum):
    """Where an item stands in the context the model is sent."""

    ACTIVE = "active"
    """Sent verbatim whenever it fits."""
    SUMMARIZED = "summarized"
    """Represented by a summary that names it; the original stays in the store."""
    PRUNED = "pruned"
    """Not sent (unless recalled for a turn); kept in the store and restorable."""


class MemoryRole(enum.StrEnum):
    """What part an item plays in the conversation's story; weighs into its score."""

    DECISION = "decision"
    ERROR = "error"
    CAUSE = "cause"
    ATTEMPT = "attempt"
    """An attempted fix: something tried that may or may not have worked."""
    RESOLUTION = "resolution"
    PREFERENCE = "preference"
    FACT = "fact"
    """Numbers, dates, names: details someone may ask about later."""
    CONTEXT = "context"
    NOISE = "noise"
    """Greetings, thanks, acknowledgements."""


@dataclass(slots=True)
class Item:
    """One message under curation."""

    id: int
    """The stored message's id."""
    role: Role
    held_text: str | None
    """The message's text while the item holds it (see :attr:`text`)."""
    tokens: int
    turn: int
    """1 for the first user message and what answers it, 2 for the next, ..."""
    position: int
    """Index in the conversation (0-based), for neighbours."""
    name: str | None = None
    """Who wrote it, when the conversation names its speakers (transcripts do)."""
    label: str = ""
    """How reasons and summaries refer to it: ``#id`` in the app, the transcript's id in replay."""
    mentions: tuple[Mention, ...] = ()
    digest: bool = False
    """An offline model's digest (see ``StoredMessage.is_digest``): its words are not the conversation's."""
    terms: dict[str, int] | None = None
    """Stemmed term → count, for lexical relevance, until the item is indexed (then None: see
    :meth:`engine.curation.session_curation.SessionCuration.terms_of`)."""
    memory_role: MemoryRole = MemoryRole.CONTEXT
    state: ItemState = ItemState.ACTIVE
    pinned: bool = False
    kept_by_user: bool = False
    """The user answered "keep" (or "attach", see :attr:`attached`) to a consent request for this
    item: never propose it again."""
    summary: str | None = None
    """The item's summary once it has one (state SUMMARIZED)."""
    forgotten: bool = False
    """The user took it out themselves (forgot it, or answered summarize or remove; state PRUNED or
    SUMMARIZED): it stays so, never recalled, until they restore it."""
    preview: str = ""
    """The start of the text on one line, for lists and consent requests."""
    text_source: Callable[[int], str] | None = None
    """Where the text is read from once the item no longer holds it (the store, by message id)."""
    recurrence: float | None = None
    """Cached recurrence score; cleared when one of its entities is seen in a new turn."""
    prior: float | None = None
    """Cached weighted role + recurrence part of the score; cleared with ``recurrence``."""

    @property
    def text(self) -> str:
        """The message's text: held while the item may be sent verbatim, read from its source
        again after :meth:`let_go_of_text` (a recall, a model summary, the message inspector)."""
        if self.held_text is not None:
            return self.held_text
        if self.text_source is None:
            raise RuntimeError(f"item {self.id} holds no text and has nowhere to read it from")
        return sent_text(self.role, self.text_source(self.id))

    def let_go_of_text(self, source: Callable[[int], str]) -> None:
        """Stop holding the text; it is read from ``source`` when asked for. A summarized or
        pruned item's text is rarely needed again, and a long session holds many."""
        self.text_source, self.held_text = source, None

    @property
    def user_owned(self) -> bool:
        """The user's own words: changed only with their consent."""
        return self.role == "user"

    @property
    def attached(self) -> bool:
        """The user kept it aside ("attach"): pruned, and sent whole only when a later message
        refers to it. Stored as a pruned item the user kept (no schema of its own)."""
        return self.kept_by_user and self.state is ItemState.PRUNED and not self.forgotten

    @property
    def refs(self) -> frozenset[str]:
        return frozenset(m.ref for m in self.mentions)
