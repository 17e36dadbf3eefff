"""The planner's part about the user's own messages and choices (see :mod:`engine.curation.planning`):
fitting them, the questions about those that cannot fit, the notes that say what really takes the
room, true recall reasons and suggestions."""

from __future__ import annotations

from collections.abc import Sequence

from engine.curation.consent import ConsentChoice, ConsentItem
from engine.curation.curation_state import CurationState
from engine.curation.items import Item, ItemState
from engine.curation.pins import recalled_often
from engine.curation.plan_draft import PlanDraft
from engine.curation.result import cost
from engine.curation.scoring import ScoreTable

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


def ask_about_new(state: CurationState, draft: PlanDraft, hard: int) -> None:
    """A stored message of the user's too big for any later request beside the system prompt
    (sent this once, "send anyway"): asked about now, not left out quietly later."""
    new = draft.new
    alone = draft.system_cost + cost(new.tokens)
    if (
        new.id in state.by_id
        and new.user_owned
        and new.state is ItemState.ACTIVE
        and alone > draft.budget
        and not (new.kept_by_user and alone <= hard)
    ):
        draft.asked_left_out.add(new.id)


def with_left_out_questions(
    state: CurationState, draft: PlanDraft, asked: list[ConsentItem]
) -> list[ConsentItem]:
    """The plan's consent items with the questions about the user's messages that cannot fit
    (made once and reused while unanswered), in conversation order; the notes say so."""
    made = state.consent_items
    left_out = []
    for item in sorted((state.by_id[i] for i in draft.asked_left_out), key=lambda i: i.position):
        question = made.get((item.id, ConsentChoice.ATTACH))
        if question is None:
            question = made[item.id, ConsentChoice.ATTACH] = left_out_question(item)
        left_out.append(question)
    tokens = sum(i.tokens for i in left_out)
    many = len(left_out) > 1
    who = (
        f"{len(left_out)} of your messages"
        if many
        else f"Your message {state.by_id[left_out[0].item_id].label}"
    )
    draft.notes.append(
        f"{who} ({tokens:,} tokens) cannot fit: "
        f"{'they are' if many else 'it is'} not sent until you choose to keep "
        f"{'them' if many else 'it'} aside (sent whole when referred to), summarize or leave out."
    )
    return sorted([*asked, *left_out], key=lambda i: state.by_id[i.item_id].position)


def fit(draft: PlanDraft, item: Item, room: int) -> int:
    """Send ``item`` if it fits ``room`` (the room left after it is returned). A user's message
    they chose to keep whole (or kept aside, when referred to) may go past the budget up to the
    window's hard limit; one of theirs that still cannot fit is asked about, never left out
    quietly."""
    need = cost(item.tokens)
    if need <= room:
        draft.chosen.add(item.id)
        return room - need
    if item.user_owned and item.kept_by_user and need <= room + draft.extra:
        draft.extra -= need - room
        draft.chosen.add(item.id)
        draft.past_budget.append(item.id)
        return 0
    draft.left_out.append(item.id)
    # Kept aside but too big even for the window when referred to: asked again (a summary may do).
    if item.user_owned and (item.state is ItemState.ACTIVE or item.attached):
        draft.asked_left_out.add(item.id)
    return room


MEANING = "close in meaning to your message"
"""Why an item is recalled for its similarity in meaning (embeddings), not its words."""


def recall_reason(state: CurationState, item: Item, scores: ScoreTable) -> str:
    """Why ``item`` is sent though summarized or pruned: the true cause, in words."""
    score = scores[item.id]
    if item.attached:
        return "your message refers to it (you kept it aside for this)"
    threshold = state.profile.recall_threshold
    if scores.by_wording(item.id) >= threshold:
        return "the new message is about the same thing (wording)"
    if score.entities >= 0.5:
        return "the new message refers to what it mentions"
    if score.relevance >= threshold:  # not by its words: by its similarity in meaning
        return MEANING
    beside = relevant_neighbour(state, item, scores)
    if beside is not None:
        return f"next to {beside.label}, which your message refers to"
    return "it sits next to a message your message refers to"


def relevant_neighbour(state: CurationState, item: Item, scores: ScoreTable) -> Item | None:
    """The neighbour (two places either side) whose relevance gave ``item`` its credit."""
    items, at = state.items, item.position
    near = [items[p] for p in (at - 1, at + 1, at - 2, at + 2) if 0 <= p < len(items)]
    best = max(near, key=lambda i: scores.relevance_of(i.id), default=None)
    return best if best is not None and scores.relevance_of(best.id) > 0 else None


def relevant_again(state: CurationState, draft: PlanDraft, scores: ScoreTable) -> tuple[int, ...]:
    """What the user took out themselves that the new message refers to: suggested to them,
    never recalled (their choice wins)."""
    named = scores.named(state.profile.recall_threshold)
    return tuple(i.id for i in reversed(draft.candidates) if i.forgotten and i.id in named)[:3]


def pin_suggestions(state: CurationState, draft: PlanDraft) -> tuple[int, ...]:
    """Messages recalled again and again that a pin would hold within the pin limit."""
    limit = int(state.budget.tokens * state.pin_limit)
    found = [
        item_id
        for item_id, turns in state.recall_turns.items()
        if recalled_often(turns, draft.turn)
        and (item := state.by_id.get(item_id)) is not None
        and not item.pinned
        and not item.forgotten
        and draft.pinned_cost + cost(item.tokens) <= limit
    ]
    return tuple(sorted(found, reverse=True)[:3])
