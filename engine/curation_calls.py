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
