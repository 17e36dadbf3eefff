"""What a plan sends besides the fixed part and the recent turns, and what it does to the rest.

Two phases of :func:`engine.curation.planning.plan` over a :class:`PlanDraft`: :func:`choose` picks
what else is sent verbatim (what the user restored, the user's own messages or a consent question
about them, then the others by :func:`worth` while they fit); :func:`operate` proposes the
operations on the candidates (recall, prioritize, demote).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from engine.advice.rules import CURATOR, advised, advised_why, summarize_all
from engine.curation.cold_recall import recall_earlier
from engine.curation.consent import ConsentChoice, ConsentItem
from engine.curation.curation_state import CurationState
from engine.curation.forgetting import BUDGET, demote
from engine.curation.items import Item, ItemState
from engine.curation.operations import Operation, OpKind
from engine.curation.plan_draft import PlanDraft
from engine.curation.repeats import compete_once, prune_copy, rank_last
from engine.curation.result import cost
from engine.curation.scoring import ScoreTable
from engine.curation.user_room import fit, recall_reason

SHORT_COST = 100
"""In the ranking a message under this many tokens counts as this many: being short earns no more."""


def worth(score: float, tokens: int) -> float:
    """A message's claim on the room: its score over the square root of its cost. The room is
    shared, so a long message must matter more to take the place of several short ones; the
    root keeps relevance first (a message nine times as long needs three times the score)."""
    return score / math.sqrt(max(SHORT_COST, cost(tokens)))


def choose(state: CurationState, draft: PlanDraft, scores: ScoreTable) -> None:
    """What else is sent verbatim: what the user restored, the user's own messages (or a
    consent question about them), then the others by :func:`worth` while they fit."""
    candidates, chosen, guidance = draft.candidates, draft.chosen, draft.guidance
    draft.reserve = (
        int(draft.budget * state.profile.memory_share)
        if any(may_summarize(state, i) for i in candidates)
        else 0
    )
    draft.story_reserve = story_room(state, draft)
    if draft.story_reserve >= STORY_OWN_SHARE_FROM:
        draft.reserve += draft.story_reserve
    # else a small window: the story is told in what the summaries leave, taking no one's room
    # The sections never take more than what is always sent and the recent turns leave: a
    # request past the budget is the user's choice alone.
    draft.reserve = min(draft.reserve, draft.remaining)
    room = max(0, draft.remaining - draft.reserve - draft.threads_room)
    totals = scores.total
    # Tool and search results expire as soon as the new message stops referring to them
    # directly (sitting next to a relevant message is not enough).
    named = scores.named(state.profile.recall_threshold)
    beside = scores.beside(state.profile.recall_threshold)
    active, pruned = ItemState.ACTIVE, ItemState.PRUNED
    eligible = [
        i
        for i in reversed(candidates)
        if not i.forgotten
        and not (i.kept_by_user and i.state is pruned)  # not attached (inline: 10,000 items)
        and (i.id in named or (i.role != "tool" and (i.state is active or i.id in beside)))
    ]
    if guidance is not None:
        eligible, draft.retained, draft.set_aside = advised(eligible, candidates, guidance, named)
    eligible.extend(draft.cold)  # earlier messages the new one refers to compete as pruned ones do
    retained = draft.retained
    # Worth most first (what the curator retains before all); newest first among equals (the
    # list is newest first and sorting is stable).
    keys = [worth(totals[i.id], i.tokens) for i in eligible]
    if retained:
        order = sorted(range(len(keys)), key=lambda n: (eligible[n].id in retained, keys[n]), reverse=True)
    else:  # the usual case, keyed without a lambda call per item (10,000 in a long session)
        order = sorted(range(len(keys)), key=keys.__getitem__, reverse=True)
    eligible = [eligible[n] for n in order]
    eligible = compete_once(eligible, draft.repeats)  # a repeated paste competes once
    smallest = cost(min((i.tokens for i in eligible), default=0))

    ideal: set[int] = set()
    ideal_room = room
    for item in eligible:
        if ideal_room < smallest:
            break  # nothing else can fit
        if cost(item.tokens) <= ideal_room:
            ideal.add(item.id)
            ideal_room -= cost(item.tokens)

    # What the user just restored is sent first, while it fits: they asked for it back.
    for item_id in sorted(state.restored - draft.excluded):
        item = state.by_id[item_id]
        if item.state is active and cost(item.tokens) <= room:
            chosen.add(item.id)
            room -= cost(item.tokens)
    protected = protected_user_items(state, candidates)
    asked = state.consent_items
    draft.advised_consent = advised_consent = (
        guidance.ask_user if guidance is not None and state.policy is None else {}
    )
    draft.protected_ids = protected_ids = {i.id for i in protected}
    # Newest first (candidates are in conversation order), the user's repeated pastes last.
    for item in rank_last(protected[::-1], draft.repeats):
        if item.id not in chosen:
            room = fit(draft, item, room)
    # Kept aside by the user ("attach"): sent whole when the new message refers to it.
    for item in reversed(candidates):
        if item.attached and item.id in named and item.id not in chosen:
            room = fit(draft, item, room)
    if draft.rule_matches:
        room = keep_by_rule(draft, room, totals, protected_ids)
    for item in protected:
        if item.id in draft.asked_left_out:
            continue  # asked about as a message that cannot fit
        proposed = advised_consent.get(item.id)
        if proposed is None and item.id not in ideal and not item.kept_by_user and state.policy is None:
            proposed = (
                ConsentChoice.SUMMARIZE
                if totals[item.id] >= state.profile.summarize_threshold
                else ConsentChoice.REMOVE
            )
        if proposed is not None:
            request = asked.get((item.id, proposed))
            if request is None:
                request = ConsentItem(item.id, item.preview, item.tokens, proposed)
                asked[item.id, proposed] = request
            draft.consent_items.append(request)
    for item in eligible:
        if room < smallest:
            break
        if item.id in protected_ids or item.id in chosen:
            continue
        if cost(item.tokens) <= room:
            chosen.add(item.id)
            room -= cost(item.tokens)
    draft.room = room


STORY_OWN_SHARE_FROM = 1_000
"""The story takes its share beside the summaries' only when that share holds this many tokens
(about 80 key phrases: a story of the conversation, not three lines of it). In a smaller budget
it is told in the room the summaries leave, and takes none from the messages sent whole."""


def story_room(state: CurationState, draft: PlanDraft) -> int:
    """The story's share of this request: none while the whole conversation fits (it would only
    repeat what is sent), messages before a long session's cut included."""
    if not state.story.segments or (state.all_cost <= draft.budget and not state.told_earlier):
        return 0
    return int(draft.budget * state.profile.story_share)


def operate(state: CurationState, draft: PlanDraft, scores: ScoreTable) -> None:
    """The operations on the candidates: recall what comes back, note what the curator
    keeps, and demote (summarize or prune) what does not fit or was advised away."""
    guidance, turn, chosen, retained = draft.guidance, draft.turn, draft.chosen, draft.retained
    active = ItemState.ACTIVE
    recalled, protected = state.recalled, draft.protected_ids
    for item in draft.candidates:
        if item.id in protected:
            continue
        if item.id in chosen:
            why = retained.get(item.id)
            rule = draft.kept_by_rule.get(item.id)
            if item.state is not active:
                reason = f"{CURATOR}: {why}" if why else rule if rule else recall_reason(state, item, scores)
                draft.recall_reasons[item.id] = reason
            # A recall is logged when an item comes back, not again on every turn it stays.
            if item.state is not active and item.id not in recalled:
                draft.operations.append(
                    Operation(
                        OpKind.RECALL,
                        item.id,
                        reason,
                        turn,
                        scores=scores[item.id],
                        reversible=True,
                    )
                )
            elif why is not None and item.state is active and state.prioritized.get(item.id) != why:
                draft.operations.append(
                    Operation(OpKind.PRIORITIZE, item.id, f"{CURATOR}: {why}", turn, scores=scores[item.id])
                )
            elif rule is not None and why is None and state.kept_by_rule.get(item.id) != rule:
                # Logged when a rule starts keeping it, not on every turn it stays.
                kept = Operation(OpKind.PRIORITIZE, item.id, rule, turn, scores=scores[item.id])
                draft.operations.append(kept)
        elif item.state is active:
            forced = guidance is not None and item.id in draft.set_aside
            group = None if forced else draft.repeats.get(item.id)
            if group is not None and item.role != "user":
                copy = prune_copy(item, group, scores[item.id], turn)
                draft.operations.append(copy)
                draft.after_state[item.id] = ItemState.PRUNED
                continue
            operation = demote(
                item,
                scores[item.id],
                turn,
                policy=state.policy,
                # Advised away: summarized when it may be (demote), otherwise pruned.
                profile=summarize_all(state.profile)
                if forced and guidance is not None and item.id in guidance.demote_items
                else state.profile,
                summary_of=lambda item: summary_for_plan(state, item),
                new_summaries=draft.new_summaries,
                waiting=draft.waiting,
                why=advised_why(guidance, item.id) if forced else group.reason() if group else BUDGET,
            )
            if operation is not None:
                draft.operations.append(operation)
                if operation.after is not None:
                    draft.after_state[item.id] = operation.after
    if draft.cold:
        recall_earlier(draft, scores, state.profile.recall_threshold, state.cold_recalled)


def left_out_note(draft: PlanDraft, shortened: Collection[int]) -> None:
    """Notes what did not fit: left out of this request only, or (a recent reply) sent as a quick
    summary. The user's messages asked about have their own (engine.curation.user_room)."""
    left = [i for i in draft.left_out if i not in draft.asked_left_out]
    short = sum(1 for i in left if i in shortened)
    if out := len(left) - short:
        were, them = (
            ("1 message did not fit and was", "it")
            if out == 1
            else (f"{out} messages did not fit and were", "them")
        )
        draft.notes.append(f"{were} left out of this request only; nothing about {them} changed.")
    if short:
        draft.notes.append(
            "1 reply did not fit whole: a quick summary of it is sent instead, in this request only."
            if short == 1
            else f"{short} replies did not fit whole: quick summaries of them are sent instead, in this "
            "request only."
        )


def keep_by_rule(draft: PlanDraft, room: int, totals: Mapping[int, float], protected: set[int]) -> int:
    """Send what a keep rule matches while it fits, best-scored first, after what the user
    restored and their own messages; the room left. What does not fit is curated as usual."""
    chosen, matched = draft.chosen, draft.rule_matches
    pruned = ItemState.PRUNED
    found = [
        i
        for i in draft.candidates
        if i.id in matched
        and i.id not in chosen
        and i.id not in protected
        and not i.forgotten
        and not (i.kept_by_user and i.state is pruned)  # kept aside: sent when referred to
    ]
    found.sort(key=lambda i: totals[i.id], reverse=True)
    for item in found:
        if cost(item.tokens) <= room:
            chosen.add(item.id)
            draft.kept_by_rule[item.id] = matched[item.id]
            room -= cost(item.tokens)
    return room


def protected_user_items(state: CurationState, candidates: Sequence[Item]) -> list[Item]:
    """Active user items that may not be demoted now: no consent yet, or the user said keep
    (their role compared inline, not through Item.user_owned: 10,000 candidates)."""
    active = ItemState.ACTIVE
    if state.policy in (ConsentChoice.SUMMARIZE, ConsentChoice.REMOVE):
        return [i for i in candidates if i.role == "user" and i.state is active and i.kept_by_user]
    return [i for i in candidates if i.role == "user" and i.state is active]


def may_summarize(state: CurationState, item: Item) -> bool:
    return item.state is ItemState.SUMMARIZED or (item.state is ItemState.ACTIVE and not item.pinned)


def summary_for_plan(state: CurationState, item: Item) -> str | None:
    if state.model_summaries is not None:
        return state.model_summaries.ready(item)
    return state.summarizer.summarize(item)
