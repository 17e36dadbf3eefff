"""Room for the user's own messages in a plan: the questions about those that cannot fit, and the
notes that say what really takes the room (see :mod:`engine.planning`)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.consent import ConsentChoice, ConsentItem
from engine.items import Item

LEFT_OUT_CHOICES = (ConsentChoice.ATTACH, ConsentChoice.SUMMARIZE, ConsentChoice.REMOVE)
"""What a message that cannot fit may become; there is no "keep": it does not fit."""


def left_out_question(item: Item) -> ConsentItem:
    """The question about a user message that cannot fit: it is not sent until answered."""
    return ConsentItem(
        item.id, item.preview, item.tokens, ConsentChoice.ATTACH, choices=LEFT_OUT_CHOICES, left_out=True
    )


def labels(items: Sequence[Item]) -> str:
    return ", ".join(i.label for i in items)


def over_budget_note(
    *,
    system_cost: int,
    fixed: Sequence[Item],
    fixed_costs: Sequence[int],
    new: Item,
    new_cost: int,
    total: int,
    budget: int,
) -> str:
    """What alone takes more than the budget, naming only what really does (and what to do)."""
    pinned = [(i, c) for i, c in zip(fixed, fixed_costs, strict=True) if i.pinned and i.role != "system"]
    system = sum(c for i, c in zip(fixed, fixed_costs, strict=True) if not (i.pinned and i.role != "system"))
    parts: list[str] = []
    if system_cost and system:
        parts.append(f"the system prompt and system messages ({system_cost + system:,} tokens)")
    elif system_cost or system:
        parts.append(
            f"the system {'prompt' if system_cost else 'messages'} ({system_cost + system:,} tokens)"
        )
    if pinned:
        parts.append(
            f"pinned message{'s' if len(pinned) > 1 else ''} {labels([i for i, _ in pinned])} "
            f"({sum(c for _, c in pinned):,} tokens)"
        )
    parts.append(f"the new message {new.label} ({new_cost:,} tokens)".replace("  ", " "))
    said = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    verb = "takes" if len(parts) == 1 else "take"
    advice = (
        " Unpin something or start a new session."
        if pinned
        else " This request carries the new message whole; later ones only as you choose."
        if new.user_owned and new_cost > budget
        else ""
    )
    return (
        f"{said[0].upper()}{said[1:]} alone {verb} {total:,} tokens, over the budget of {budget:,}: "
        f"nothing else is sent.{advice}"
    )


def past_budget_note(kept: Sequence[Item], over: int) -> str:
    many = len(kept) > 1
    return (
        f"Your message{'s' if many else ''} {labels(kept)}, which you chose to keep whole, "
        f"{'are' if many else 'is'} sent past the budget ({over:,} tokens over), in room otherwise left "
        "for the reply."
    )
