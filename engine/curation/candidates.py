"""The items a long session's plan chooses from: those that could matter, not all 10,000.

A plan scores every item against the new message (the scores stay whole, for the panel), but
choosing, demoting and filling the summary section then walk the candidates, several passes each.
Past :data:`CANDIDATE_FLOOR` candidates only these are kept, in conversation order: the best
:data:`TOP` by score, every item a plan must see whatever its score (active ones, which it sends or
demotes; the user's kept and forgotten ones; attached ones), and the latest :data:`LATEST`. What is
left out is summarized or pruned already, and ranks below a thousand others: it stays as it is.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from engine.curation.items import Item, ItemState

CANDIDATE_FLOOR = 2_000
"""Up to this many candidates a plan walks them all (every LoCoMo conversation, most sessions)."""
TOP = 1_000
"""The best-scoring candidates kept: far more than a request carries verbatim or summarized
(a 128,000-token window holds a few hundred messages)."""
LATEST = 200
"""The latest items always kept (by position in the session)."""


def narrow(
    candidates: Sequence[Item],
    totals: Mapping[int, float],
    *,
    session_size: int,
    floor: int | None = None,
    top: int | None = None,
    latest: int | None = None,
    keep: Container[int] = (),
) -> list[Item]:
    """``candidates`` (in conversation order, each scored in ``totals``) cut down to the ones a
    plan must see (and those in ``keep``: what a keep rule matches) and the best ``top``, when
    there are more than ``floor``; else all of them (the module's figures by default)."""
    floor = CANDIDATE_FLOOR if floor is None else floor
    top = TOP if top is None else top
    latest = LATEST if latest is None else latest
    if len(candidates) <= floor:
        return list(candidates)
    # The top-th best score: sorting floats runs in C, far faster than a heap of items.
    values = sorted([totals[i.id] for i in candidates], reverse=True)
    cut = values[min(top, len(values)) - 1]
    recent = session_size - latest
    active = ItemState.ACTIVE
    return [
        i
        for i in candidates
        if totals[i.id] >= cut
        or i.state is active
        or i.position >= recent
        or i.kept_by_user
        or i.forgotten
        or i.pinned
        or i.id in keep
    ]
