"""Summaries written by a model: what is asked for, and what comes back.

The engine plans synchronously and never waits for a model. When it wants a summary a model
should write, it asks for one (:class:`SummaryRequest`) and leaves the item as it is; a background
service (:mod:`engine.summaries.service`) has the :class:`engine.protocols.models.ModelSummarizer` write it,
stores it, and the next plan uses it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from engine.advice.calls import NO_USAGE, CallUsage
from engine.chat import Role
from engine.text.redaction import redact


class SummaryLevel(enum.StrEnum):
    BRIEF = "brief"
    DETAILED = "detailed"

    @property
    def ratio(self) -> float:
        """The summary's target size as a share of the source's tokens."""
        return 0.1 if self is SummaryLevel.BRIEF else 0.3


MIN_SUMMARY_TOKENS = 24
"""A summary's target is never below this many tokens, however small its source."""
MODEL_SUMMARY_FROM_TOKENS = 2 * MIN_SUMMARY_TOKENS
"""A model is asked to summarize only a message at least this long (its summary's target is then
at most half of it). A shorter one would cost a call of a few hundred tokens to save a handful
per request: the offline summary does as well there."""


def source_hash(text: str) -> str:
    """Identifies a source's text: a stored summary of other text is stale."""
    import hashlib  # here: loading OpenSSL's hashes would delay the first frame (docs/performance.md)

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """One message to be summarized by the model."""

    source_id: int
    """The message's id (the summary's attribution)."""
    label: str
    """How the prompt names it (``#12``, or a transcript's id)."""
    role: Role
    text: str
    tokens: int
    """The source's token count (the summary's target size follows from it and the level)."""
    entities: tuple[str, ...]
    """Labels of every entity of the source, in order of appearance: the summary must keep them all."""
    level: SummaryLevel = SummaryLevel.DETAILED
    name: str | None = None
    """The speaker's name, when the conversation names its speakers."""
    story: bool = False
    """A line of the story so far (:mod:`engine.summaries.story_book`): told in order, not summarized."""

    @property
    def target_tokens(self) -> int:
        return max(MIN_SUMMARY_TOKENS, int(self.tokens * self.level.ratio))

    @property
    def hash(self) -> str:
        return source_hash(self.text)


@dataclass(frozen=True, slots=True)
class SummaryOutcome:
    """What the summarizer produced for a request.

    ``text`` is None when no acceptable summary could be had (the model failed, timed out, or
    answered with something empty or tiny); ``problem`` then says why, and the item stays as it was.
    """

    text: str | None
    usage: CallUsage = NO_USAGE
    problem: str = ""
    model: str = ""

    def __post_init__(self) -> None:
        # Both came from a server and are stored: no key in them.
        object.__setattr__(self, "text", None if self.text is None else redact(self.text))
        object.__setattr__(self, "problem", redact(self.problem))


@dataclass(frozen=True, slots=True)
class StoredSummary:
    """A model's summary as the store keeps it: valid while its source's text is unchanged."""

    message_id: int
    level: SummaryLevel
    source_hash: str
    text: str
    model: str
