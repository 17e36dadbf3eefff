"""Forgetting decisions: what becomes of an item that no longer fits the budget."""

from __future__ import annotations

from collections.abc import Callable

from engine.curation.budget import Profile
from engine.curation.consent import ConsentChoice
from engine.curation.items import Item, ItemState
from engine.curation.operations import Operation, Scores

BUDGET = "no longer fits the budget"
_CHOSEN = {ItemState.SUMMARIZED: "summarize", ItemState.PRUNED: "remove"}
"""How the reason names the user's consent choice, by the state it leads to."""


def demote(
    item: Item,
    score: Scores,
    turn: int,
    *,
    policy: ConsentChoice | None,
    profile: Profile,
    summary_of: Callable[[Item], str | None],
    new_summaries: dict[int, str],
    waiting: set[int],
    why: str = BUDGET,
) -> Operation | None:
    """What to do with an active item that no longer fits the prompt, or None to leave it be.

    The user's items follow the session's consent policy (no policy, or "keep": nothing now; the
    curator asks instead). Tool results expire. AI items are summarized when they still score at
    least the profile's threshold and the summary is really shorter, and pruned otherwise. A new
    summary is added to ``new_summaries``. When ``summary_of`` has no summary yet (a model is
    writing it), the item stays as it is and its id is added to ``waiting``.

    Args:
        why: What makes it go ("no longer fits the budget"; the curator model's advice).
    """
    if item.user_owned:
        choice = policy
        if choice is None or choice is ConsentChoice.KEEP:
            return None
        after = ItemState.PRUNED
        if choice is ConsentChoice.SUMMARIZE:
            summary = item.summary or summary_of(item)
            if summary is None:
                waiting.add(item.id)
                return None
            new_summaries[item.id] = summary
            after = ItemState.SUMMARIZED
        return Operation.moving(
            item,
            after,
            f"{why}; you chose to {_CHOSEN[after]} your older messages in this session",
            turn,
            scores=score,
            requires_consent=True,
        )
    if item.role == "tool":
        return Operation.moving(
            item,
            ItemState.PRUNED,
            "tool result expired: the new message no longer refers to it",
            turn,
            scores=score,
        )
    if score.total >= profile.summarize_threshold:
        summary = item.summary or summary_of(item)
        if summary is None:
            waiting.add(item.id)
            return None
        if len(summary) < len(item.text) * 0.8:
            new_summaries[item.id] = summary
            return Operation.moving(
                item,
                ItemState.SUMMARIZED,
                f"{why}; summarized because it still scores {score.total:.2f}",
                turn,
                scores=score,
            )
    return Operation.moving(
        item, ItemState.PRUNED, f"{why} and scores low ({score.total:.2f})", turn, scores=score
    )
