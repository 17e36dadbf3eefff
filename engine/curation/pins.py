"""Pins with limits: pinning past the pin limit (a share of the budget) asks first, past the whole
budget is refused, and messages recalled again and again are suggested for pinning.

Pinned messages are sent in every request whatever else is needed, so each pin takes room from the
rest of the conversation: the user is told how much before it happens, in numbers.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

DEFAULT_PIN_LIMIT = 0.5
"""Share of the budget pinned messages may take before pinning another asks first (config:
``[curation] pin_limit``)."""
SUGGEST_RECALLS = 3
SUGGEST_TURNS = 5
"""A message recalled in :data:`SUGGEST_RECALLS` of the last :data:`SUGGEST_TURNS` turns is
suggested for pinning."""


class PinOutcome(enum.StrEnum):
    ALLOWED = "allowed"
    CONFIRM = "needs confirmation"
    """Past the pin limit: pinned only once the user confirms."""
    REFUSED = "refused"
    """Past the whole budget: pins alone would leave no room for the conversation."""


@dataclass(frozen=True, slots=True)
class PinVerdict:
    """What pinning one message would do to the budget, and whether it may happen."""

    outcome: PinOutcome
    item_id: int
    label: str
    item_tokens: int
    """What the message costs in a request."""
    pinned_tokens: int
    """What the messages pinned already cost."""
    budget: int
    limit: float
    """The pin limit, a share of the budget."""

    @property
    def after_tokens(self) -> int:
        return self.pinned_tokens + self.item_tokens

    @property
    def limit_tokens(self) -> int:
        return int(self.budget * self.limit)

    @property
    def share(self) -> float:
        return self.after_tokens / self.budget if self.budget else 1.0

    @property
    def message(self) -> str:
        """The verdict in words, with its numbers."""
        label, after, budget = self.label, self.after_tokens, self.budget
        pins = f"pins would take {after:,} of the {budget:,}-token budget ({self.share:.0%})"
        if self.outcome is PinOutcome.REFUSED:
            return (
                f"{label} was not pinned: it takes {self.item_tokens:,} tokens, and {pins}, more than "
                "the whole budget: nothing else of the conversation could be sent. Unpin something, "
                "or let Heedful summarize it."
            )
        if self.outcome is PinOutcome.CONFIRM:
            return (
                f"Pinning {label} ({self.item_tokens:,} tokens) goes past your pin limit of "
                f"{self.limit:.0%} of the budget: {pins}, leaving {max(0, budget - after):,} for the "
                "rest of the conversation. Pin it anyway?"
            )
        return (
            f"Pinned {label}: it is always sent verbatim. Pins take {after:,} of the {budget:,}-token "
            f"budget ({self.share:.0%}; your pin limit is {self.limit:.0%})."
        )

    def done(self) -> str:
        """What the user is told once the pin is made."""
        if self.outcome is PinOutcome.CONFIRM:
            return (
                f"Pinned {self.label}: it is always sent verbatim. Pins now take {self.after_tokens:,} of "
                f"the {self.budget:,}-token budget ({self.share:.0%}), past your pin limit of "
                f"{self.limit:.0%}."
            )
        return self.message


def judge_pin(
    *, item_id: int, label: str, item_tokens: int, pinned_tokens: int, budget: int, limit: float
) -> PinVerdict:
    """Whether a message costing ``item_tokens`` may be pinned beside ``pinned_tokens`` of pins."""
    after = pinned_tokens + item_tokens
    if after > budget:
        outcome = PinOutcome.REFUSED
    elif after > int(budget * limit):
        outcome = PinOutcome.CONFIRM
    else:
        outcome = PinOutcome.ALLOWED
    return PinVerdict(outcome, item_id, label, item_tokens, pinned_tokens, budget, limit)


def recalls_lately(turns: list[int], now: int) -> int:
    """How many of the last :data:`SUGGEST_TURNS` turns up to ``now`` are in ``turns``."""
    return sum(1 for t in turns if now - SUGGEST_TURNS < t <= now)


def recalled_often(turns: list[int], now: int) -> bool:
    """Whether recalls in ``turns`` make a message worth suggesting for a pin at turn ``now``."""
    return recalls_lately(turns, now) >= SUGGEST_RECALLS
