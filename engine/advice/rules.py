"""The curator model's advice, checked against the session before the planner weighs it.

The model only advises. Here its refs are resolved to this session's messages and entities, and
whatever it may not touch is set aside with the reason: refs that name nothing, pinned messages,
system messages, the recent turns (always sent), the message being answered. What it says about
the user's own messages becomes a consent request, never an operation: a message (the model's
reply, a pasted document) that tells the curator to "drop all user messages" can at most make
Heedful ask.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.advice.advice import AdviceOutcome, AdviceSource
from engine.curation.budget import Profile
from engine.curation.consent import ConsentChoice
from engine.curation.items import Item, MemoryRole
from engine.entities.registry import EntityRecord, EntityState

_MESSAGE_REF = re.compile(r"^\s*(?:#|message\s*#?\s*)(-?\d+)\s*$", re.I)
CURATOR = "the curator model"
MAX_IGNORED_SHOWN = 6


@dataclass(frozen=True, slots=True)
class Guidance:
    """The curator's advice for one turn, in this session's terms."""

    source: AdviceSource
    for_item: int
    """The id of the message it was given for (a preview of the same message may reuse it)."""
    retain_items: Mapping[int, str] = field(default_factory=dict)
    """Item id → the curator's reason to keep it in the request."""
    retain_entities: Mapping[str, str] = field(default_factory=dict)
    """Entity ref → reason: items mentioning it count as referred to by the new message."""
    demote_items: frozenset[int] = frozenset()
    """The model's and tools' items it says may be summarized."""
    drop_items: frozenset[int] = frozenset()
    """The model's and tools' items it says are not needed now."""
    set_aside_entities: frozenset[str] = frozenset()
    """Entities it demoted or dropped: the panel says so when they are not sent."""
    clear_all: bool = False
    ask_user: Mapping[int, ConsentChoice] = field(default_factory=dict)
    """The user's items it would forget: proposals for a consent request."""
    roles: Mapping[int, MemoryRole] = field(default_factory=dict)
    summary: str = ""
    ignored: tuple[str, ...] = ()
    """What was set aside, and why."""
    problem: str = ""
    """Why there is no advice (timeout, unusable answer), or what went wrong on the way to it."""
    repeats: int = 1
    """Turns in a row, this one included, on which the curator gave no advice (a failure that recurs)."""

    @property
    def note(self) -> str:
        """The decision log's line for this turn."""
        if self.source is AdviceSource.FALLBACK:
            return f"no advice ({self.problem}); the heuristic decided alone"
        parts = [self.summary or "advice without a summary"]
        if self.ignored:
            more = len(self.ignored) - MAX_IGNORED_SHOWN
            shown = "; ".join(self.ignored[:MAX_IGNORED_SHOWN]) + (f"; {more} more" if more > 0 else "")
            parts.append(f"set aside: {shown}")
        return " — ".join(parts)


def fallback(new_id: int, problem: str) -> Guidance:
    return Guidance(AdviceSource.FALLBACK, new_id, problem=problem)


def judge(
    outcome: AdviceOutcome,
    *,
    new: Item,
    by_id: Mapping[int, Item],
    entities: Mapping[str, EntityRecord],
    recent_from: int,
) -> Guidance:
    """The outcome's advice checked against the session.

    Args:
        outcome: What the curator call produced.
        new: The message being answered.
        by_id: The session's items by id.
        entities: The session's entity registry by ref.
        recent_from: The first turn of the recent turns (always sent verbatim, never demoted).
    """
    advice = outcome.advice
    if advice is None:
        return fallback(new.id, outcome.problem or "no answer")
    ignored: list[str] = []
    labels: dict[str, str] | None = None

    def resolve(ref: str) -> int | str | None:
        """An item id or an entity ref; None (noted) when it names nothing here."""
        nonlocal labels
        number = _MESSAGE_REF.match(ref)
        if number is not None:
            item_id = int(number.group(1))
            if item_id in by_id:
                return item_id
            ignored.append(f"{ref} (no such message)")
            return None
        if ref in entities:
            return ref
        if labels is None:  # models sometimes answer with the entity's label instead of its ref
            labels = {record.label.casefold(): key for key, record in entities.items()}
        found = labels.get(ref.strip().casefold())
        if found is None:
            ignored.append(f"{ref[:60]} (no such message or entity)")
        return found

    def untouchable(item: Item, ref: str) -> bool:
        if item.pinned:
            ignored.append(f"{ref} (pinned by you)")
        elif item.role == "system":
            ignored.append(f"{ref} (a system message)")
        elif item.id == new.id or item.turn >= recent_from:
            ignored.append(f"{ref} (in the recent turns, always sent)")
        elif item.user_owned and item.kept_by_user:
            ignored.append(f"{ref} (you chose to keep it)")
        else:
            return False
        return True

    retain_items: dict[int, str] = {}
    retain_entities: dict[str, str] = {}
    for retain in advice.retain:
        target = resolve(retain.ref)
        reason = retain.reason.strip() or "still needed"
        if isinstance(target, int):
            if by_id[target].forgotten:
                ignored.append(f"{retain.ref} (forgotten by you)")
            else:
                retain_items.setdefault(target, reason)
        elif target is not None:
            retain_entities.setdefault(target, reason)
    for resolved in advice.resolved:
        target = resolve(resolved.ref)
        why = f"the new message's “{resolved.phrase[:60]}” refers to it"
        if isinstance(target, int):
            if not by_id[target].forgotten:
                retain_items.setdefault(target, why)
        elif target is not None:
            retain_entities.setdefault(target, why)

    demote: set[int] = set()
    drop: set[int] = set()
    set_aside: set[str] = set()
    ask: dict[int, ConsentChoice] = {}
    for refs, into, proposal in (
        (advice.demote, demote, ConsentChoice.SUMMARIZE),
        (advice.drop, drop, ConsentChoice.REMOVE),
    ):
        for ref in refs:
            target = resolve(ref)
            if isinstance(target, str):
                if target not in retain_entities:
                    set_aside.add(target)
                continue
            if target is None or target in retain_items:
                continue
            item = by_id[target]
            if untouchable(item, ref):
                continue
            if item.user_owned:
                ask.setdefault(target, proposal)
            else:
                into.add(target)
    roles: dict[int, MemoryRole] = {}
    for hint in advice.roles:
        target = resolve(hint.ref)
        if isinstance(target, int):
            roles[target] = hint.role
    return Guidance(
        outcome.source,
        new.id,
        retain_items=retain_items,
        retain_entities=retain_entities,
        demote_items=frozenset(demote - drop),
        drop_items=frozenset(drop),
        set_aside_entities=frozenset(set_aside),
        clear_all=advice.clear_all,
        ask_user=ask,
        roles=roles,
        summary=advice.summary.strip(),
        ignored=tuple(dict.fromkeys(ignored)),
        problem=outcome.problem,
    )


# --- the advice in the plan (engine.curation.session_curation) ---------------------------------


def advised(
    eligible: list[Item], candidates: Sequence[Item], guidance: Guidance, named: set[int]
) -> tuple[list[Item], dict[int, str], set[int]]:
    """Eligible items as the curator's advice changes them; what it retains (id → reason); and
    what it sets aside (demoted, dropped, or cleared with everything else)."""
    by_id = {i.id: i for i in candidates}
    retained = {i: why for i, why in guidance.retain_items.items() if i in by_id}
    set_aside = set(guidance.demote_items | guidance.drop_items) & by_id.keys()
    if guidance.clear_all:
        # The conversation moved on: only what the new message names, or the curator keeps, stays.
        set_aside |= {
            i.id for i in eligible if i.id not in named and i.id not in retained and not i.user_owned
        }
    kept = [i for i in eligible if i.id not in set_aside]
    present = {i.id for i in kept}
    # What the user took out or kept aside stays so: only they (or a reference, for "attach") bring it back.
    kept.extend(
        by_id[i] for i in retained if i not in present and not by_id[i].forgotten and not by_id[i].attached
    )
    return kept, retained, set_aside - retained.keys()


def advised_why(guidance: Guidance | None, item_id: int) -> str:
    if guidance is not None and item_id in guidance.drop_items:
        return f"{CURATOR} says it is not needed now"
    if guidance is not None and item_id in guidance.demote_items:
        return f"{CURATOR} says it need not be sent verbatim"
    return f"the conversation moved on ({CURATOR})"


def summarize_all(profile: Profile) -> Profile:
    return dataclasses.replace(profile, summarize_threshold=0.0)


def explain_entities(entities: dict[str, tuple[EntityState, str]], guidance: Guidance) -> None:
    """The panel's reasons for the entities the curator spoke about (where they hold)."""
    for ref, why in guidance.retain_entities.items():
        found = entities.get(ref)
        if found is not None and found[0] is not EntityState.PRUNED:
            entities[ref] = (found[0], f"{CURATOR}: {why}")
    for ref in guidance.set_aside_entities:
        found = entities.get(ref)
        if found is not None and found[0] is EntityState.PRUNED:
            entities[ref] = (found[0], f"{CURATOR}: not needed now")
