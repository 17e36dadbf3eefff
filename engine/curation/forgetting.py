"""Forgetting decisions: what becomes of an item that no longer fits the budget."""

from __future__ import annotations

from collections.abc import Callable

from engine.curation.budget import Profile
from engine.curation.consent import ConsentChoice
from engine.curation.items import Item, ItemState
from engine.curation.operations import Operation, OpKind, Scores

BUDGET = "no longer fits the budget"


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
        if choice is ConsentChoice.SUMMARIZE:
            summary = item.summary or summary_of(item)
            if summary is None:
                waiting.add(item.id)
                return None
            new_summaries[item.id] = summary
            return Operation(
                OpKind.TRANSFORM,
                item.id,
                f"{why}; you chose to summarize your older messages in this session",
                turn,
                scores=score,
                requires_consent=True,
                before=item.state,
                after=ItemState.SUMMARIZED,
            )
        return Operation(
            OpKind.PRUNE,
            item.id,
            f"{why}; you chose to remove your older messages in this session",
            turn,
            scores=score,
            requires_consent=True,
            before=item.state,
            after=ItemState.PRUNED,
        )
    if item.role == "tool":
        return Operation(
            OpKind.PRUNE,
            item.id,
            "tool result expired: the new message no longer refers to it",
            turn,
            scores=score,
            before=item.state,
            after=ItemState.PRUNED,
        )
    if score.total >= profile.summarize_threshold:
        summary = item.summary or summary_of(item)
        if summary is None:
            waiting.add(item.id)
            return None
        if len(summary) < len(item.text) * 0.8:
            new_summaries[item.id] = summary
            return Operation(
                OpKind.TRANSFORM,
                item.id,
                f"{why}; summarized because it still scores {score.total:.2f}",
                turn,
                scores=score,
                before=item.state,
                after=ItemState.SUMMARIZED,
            )
    return Operation(
        OpKind.PRUNE,
        item.id,
        f"{why} and scores low ({score.total:.2f})",
        turn,
        scores=score,
        before=item.state,
        after=ItemState.PRUNED,
    )
