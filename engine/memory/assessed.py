"""An assessment of a stretch of conversation (see :mod:`engine.memory.memories`): what it found worth
keeping, validated with pydantic, and what made it. Apart from :mod:`engine.memory.memories` so that the
records and the store, which the first screen needs, import no pydantic."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.memory.memories import (
    MAX_REASONING_CHARS,
    MAX_SUMMARY_CHARS,
    MAX_TAGS,
    MAX_TOPICS,
    clean_labels,
)
from engine.text.clipping import clip_text


class Assessment(BaseModel):
    """What an assessment of a stretch of conversation found worth keeping.

    Built with :meth:`clamped` from anything a model returns: out-of-range or overlong values are
    brought into range rather than refused, so a slightly wrong answer still gives a memory.
    """

    model_config = ConfigDict(frozen=True)

    importance: float = Field(ge=0.0, le=1.0)
    """0 (nothing worth keeping) to 1 (must be remembered)."""
    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS)
    """What happened, in a sentence or three; what a later session is told."""
    tags: tuple[str, ...] = Field(default=(), max_length=MAX_TAGS)
    """Short lower-case labels (things named in the conversation)."""
    topics: tuple[str, ...] = Field(default=(), max_length=MAX_TOPICS)
    """What the conversation was about, a word or two each."""
    reasoning: str = Field(default="", max_length=MAX_REASONING_CHARS)
    """Why this importance."""

    @field_validator("summary")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the summary is blank")
        return value

    @classmethod
    def clamped(
        cls,
        *,
        importance: object,
        summary: object,
        tags: object = (),
        topics: object = (),
        reasoning: object = "",
    ) -> Assessment:
        """An assessment from loosely typed values: importance clamped to 0..1, lists cut to size.

        Raises:
            ValueError: ``importance`` is not a number, or ``summary`` is not a non-blank string.
        """
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            raise ValueError(f"importance should be a number, not {importance!r}")
        if importance != importance:  # NaN
            raise ValueError("importance is not a number (NaN)")
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError(f"summary should be a non-empty string, not {summary!r}")
        return cls(
            importance=round(min(1.0, max(0.0, float(importance))), 3),
            summary=clip_text(" ".join(summary.split()), MAX_SUMMARY_CHARS),
            tags=clean_labels(tags, MAX_TAGS, lower=True),
            topics=clean_labels(topics, MAX_TOPICS, lower=False),
            reasoning=clip_text(" ".join(str(reasoning).split()), MAX_REASONING_CHARS),
        )


class AssessedBy(enum.StrEnum):
    """What produced an assessment."""

    STRUCTURED = "structured"
    """The model, with structured output (a JSON schema)."""
    JSON = "json"
    """The model, in JSON mode (structured output was refused or unusable)."""
    HEURISTIC = "heuristic"
    """The offline heuristic (:func:`engine.memory.assessment.assess_offline`): no model, or the
    model's answer was unusable."""


@dataclass(frozen=True, slots=True)
class Assessed:
    """An assessment and how it was made."""

    assessment: Assessment
    by: AssessedBy
    fallback: str | None = None
    """Why the model's answer was not used, when it was not (for the log and the tests)."""
