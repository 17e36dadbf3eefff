"""What curation's own model calls cost: tokens, and an estimate in money when a price is known.

With a model connected, curation asks it too (the curator pass each turn, summaries in the
background). Those calls are accounted here so the panel can show them next to the tokens that
curation saved: forgetting well must not cost more than it saves.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CallUsage:
    """Tokens spent by curation calls (any number of them, summed)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    def __add__(self, other: CallUsage) -> CallUsage:
        return CallUsage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


NO_USAGE = CallUsage()


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens, as the provider bills them."""

    prompt: float
    completion: float

    def of(self, usage: CallUsage) -> float:
        """The estimated cost of ``usage`` in US dollars."""
        return (usage.prompt_tokens * self.prompt + usage.completion_tokens * self.completion) / 1_000_000


@dataclass(frozen=True, slots=True)
class CallsReport:
    """Curation calls as the context panel shows them: the last turn's and the session's."""

    turn: CallUsage
    """The curator pass of the last turn, and the summaries written since the turn before."""
    session: CallUsage
    """Every curation call of this session since the app started."""
    price: Price | None
    """None: the price of the curation model is unknown (only tokens are shown)."""


class CallTally:
    """One session's curation calls, summed as they happen (from the turn and the summary service)."""

    def __init__(self, earlier: CallUsage = NO_USAGE) -> None:
        """``earlier``: what the session's calls cost before this run of the app."""
        self._since_turn = NO_USAGE
        self._turn = NO_USAGE
        self._session = earlier

    def add(self, usage: CallUsage) -> None:
        self._since_turn += usage
        self._session += usage

    def close_turn(self) -> None:
        """A turn was planned: what was spent since the last one is this turn's."""
        self._turn, self._since_turn = self._since_turn, NO_USAGE

    def report(self, price: Price | None) -> CallsReport:
        return CallsReport(self._turn, self._session, price)
