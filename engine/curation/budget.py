"""Profiles and budgets: how much of the model's window the prompt may use, and how it is shared."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ProfileName(enum.StrEnum):
    QUALITY = "quality"
    BALANCED = "balanced"
    COST = "cost"


@dataclass(frozen=True, slots=True)
class Profile:
    """How aggressively the engine forgets."""

    name: ProfileName
    budget_ratio: float
    """Share of the context window the prompt may fill; the rest is left for the reply."""
    half_life: float
    """Turns after which an item's recency weight halves."""
    summarize_threshold: float
    """An AI item that no longer fits is summarized at or above this score, pruned below it."""
    memory_share: float
    """Share of the budget the summary section may take."""
    recall_threshold: float
    """Relevance at or above which a pruned or summarized item is recalled."""
    warning: str | None = None
    story_share: float = 0.06
    """Share of the budget the story so far (a chronological digest with sources, see
    :mod:`engine.summaries.story`) may take once the conversation no longer fits whole."""


PROFILES: dict[ProfileName, Profile] = {
    ProfileName.QUALITY: Profile(ProfileName.QUALITY, 0.8, 12.0, 0.25, 0.08, 0.04),
    ProfileName.BALANCED: Profile(ProfileName.BALANCED, 0.7, 8.0, 0.35, 0.05, 0.05),
    ProfileName.COST: Profile(
        ProfileName.COST,
        0.4,
        4.0,
        0.5,
        0.04,
        0.1,
        warning="The cost profile sends less than half the window: older detail will be lost sooner.",
    ),
}
DEFAULT_PROFILE = PROFILES[ProfileName.BALANCED]


def profile_named(name: str) -> Profile:
    """The profile called ``name``.

    Raises:
        ValueError: No such profile; the message lists the valid names.
    """
    try:
        return PROFILES[ProfileName(name)]
    except ValueError:
        names = ", ".join(p.value for p in ProfileName)
        raise ValueError(f"unknown profile {name!r}: choose one of {names}") from None


def budget_share(tokens: int, budget: int) -> float:
    """How full the budget is: the next request's prompt tokens over the budget (1.0 is full, more
    is over). The one percentage the header, the panel, the notes and the dialogs show."""
    return tokens / budget if budget > 0 else 1.0


def budget_percent(tokens: int, budget: int) -> str:
    """:func:`budget_share` as the UI writes it: "68%"."""
    return f"{budget_share(tokens, budget):.0%}"


REPLY_FLOOR = 0.1
"""Share of the window always left for the reply, even when the user's kept messages overflow the
budget (the budget ratio leaves more; this is what is never given up)."""


@dataclass(frozen=True, slots=True)
class Budget:
    """The token budget of one request."""

    window: int
    ratio: float

    def __post_init__(self) -> None:
        if self.window <= 0:
            raise ValueError(f"the context window must be a positive number of tokens, not {self.window}")
        if not 0 < self.ratio <= 1:
            raise ValueError(f"the budget ratio must be in (0, 1], not {self.ratio}")

    @property
    def tokens(self) -> int:
        """The most the prompt may take."""
        # The epsilon undoes float error (700 × 0.7 = 489.99999…) without ever rounding up.
        return int(self.window * self.ratio + 1e-9)

    @property
    def hard_tokens(self) -> int:
        """The most a prompt may take at all: the window less :data:`REPLY_FLOOR` of it for the
        reply. Only messages the user chose to keep whole may take the prompt past :attr:`tokens`."""
        return max(self.tokens, int(self.window * (1 - REPLY_FLOOR) + 1e-9))
