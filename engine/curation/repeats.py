"""Repeated errors and debugging threads in a plan (see :mod:`engine.debugging`).

The same error pasted again and again competes for the budget once: an assistant's or a tool's
copy other than the latest paste stands aside, pruned (restorable) with the reason "same error as
#N (xK)", once curation has something to leave out. The user's copies only rank last:
one that then cannot fit is asked about like any message of theirs (the consent rule), and with the
user's session-wide answer (summarize / remove) it follows that answer with the same reason. Each
debugging thread not wholly sent verbatim gets a line in a small section of its own.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from engine.curation.items import Item, ItemState
from engine.curation.operations import Operation, Scores
from engine.curation.result import ContextMessage, cost
from engine.debugging.threads import DebugThread, RepeatGroup
from engine.protocols.models import TokenCounter

THREADS_HEADER = (
    "Debugging threads (made by Heedful; each line: cause -> attempted fixes -> result -> learning, "
    "naming its sources):"
)
THREADS_SHARE = 0.05
"""The room set aside for the section before older messages are chosen: at most this share of
the budget, and only what the lines of threads with messages not in the recent turns need."""
THREADS_FLOOR = 300
"""In a small window the room set aside may reach this many tokens."""
MAX_THREAD_LINES = 8


def standing_aside(
    groups: Sequence[RepeatGroup], by_id: Mapping[int, Item], kept: Collection[int] = ()
) -> dict[int, RepeatGroup]:
    """Each repeated paste other than its group's representative, with its group (nothing when
    the user took the representative out: then the copies are all there is; not those ``kept``,
    which the user restored)."""
    aside: dict[int, RepeatGroup] = {}
    for group in groups:
        representative = by_id.get(group.representative)
        if representative is None or representative.forgotten:
            continue
        for item_id in group.ids[:-1]:
            if item_id not in kept:
                aside[item_id] = group
    return aside


def rank_last(items: list[Item], aside: Collection[int]) -> list[Item]:
    """``items`` with the repeated copies moved after the others, each part in its order."""
    if not aside:
        return items
    return [i for i in items if i.id not in aside] + [i for i in items if i.id in aside]


def compete_once(eligible: list[Item], aside: Collection[int]) -> list[Item]:
    """What may be sent, best first, once each error competes once: an assistant's or a tool's
    copy stands aside (its latest paste is the one that competes), the user's rank last."""
    if not aside:
        return eligible
    return rank_last([i for i in eligible if i.id not in aside or i.role == "user"], aside)


def copy_reason(item_id: int, group: tuple[int, ...]) -> str:
    """Why a message a thread's line stands for is not sent whole, in the panel's words."""
    if group and group[-1] != item_id:
        return f"same error as #{group[-1]} (x{len(group)})"
    return "not sent whole"


def prune_copy(item: Item, group: RepeatGroup, score: Scores, turn: int) -> Operation:
    """An assistant's or a tool's copy of an error that stays out: pruned, restorable."""
    return Operation.moving(item, ItemState.PRUNED, group.reason(), turn, scores=score)


def relevant_threads(
    threads: Sequence[DebugThread], older: Collection[int], totals: Mapping[int, float], threshold: float
) -> list[DebugThread]:
    """The threads worth a line: those that draw on ``older`` messages (not sure to be sent
    whole) and that the new message relates to (one of their messages scores ``threshold`` or
    more), and the latest thread, in conversation order."""
    found = [t for t in threads if any(s in older for s in t.sources)]
    latest = found[-1] if found else None
    return [t for t in found if t is latest or max(totals.get(s, 0.0) for s in t.sources) >= threshold][
        -MAX_THREAD_LINES:
    ]


def threads_room(threads: Sequence[DebugThread], counter: TokenCounter, budget: int) -> int:
    """The tokens to set aside for the lines of ``threads`` (the newest first), up to the
    section's share of the budget."""
    cap = min(budget // 2, max(THREADS_FLOOR, int(budget * THREADS_SHARE)))
    header = need = cost(counter.count(THREADS_HEADER))
    for thread in reversed(threads):
        line = counter.count("- " + thread.line()) + 1
        if need + line > cap:
            break
        need += line
    return need if need > header else 0


def thread_section(
    threads: Sequence[DebugThread],
    sent: Collection[int],
    counter: TokenCounter,
    room: int,
) -> ContextMessage | None:
    """One line per debugging thread that some of whose messages are not sent verbatim, newest
    threads first while they fit ``room`` tokens, then in conversation order."""
    wanted = [t for t in threads if any(s not in sent for s in t.sources)]
    if not wanted:
        return None
    whole = room
    room -= cost(counter.count(THREADS_HEADER))
    lines: list[tuple[int, str, tuple[int, ...], int]] = []
    for thread in reversed(wanted[-MAX_THREAD_LINES:]):
        line = "- " + thread.line()
        tokens = counter.count(line) + 1
        if tokens <= room:
            lines.append((thread.first, line, thread.sources, tokens))
            room -= tokens
    lines.sort()
    while lines:  # the joined lines may count a token or two more than the lines apart
        content = "\n".join([THREADS_HEADER, *(line for _, line, _, _ in lines)])
        tokens = cost(counter.count(content))
        if tokens <= whole:
            sources = tuple(sorted({s for _, _, found, _ in lines for s in found}))
            return ContextMessage("system", content, sources, "summary", tokens)
        lines.pop(0)
    return None
