"""Planning a turn: which of a session's items the request carries, and how, within the budget.

Functions over a session's :class:`engine.curation.curation_state.CurationState`, called by
:class:`engine.curation.session_curation.SessionCuration`. :func:`plan` scores the items against the
new message, fits a prompt into the budget and proposes operations, in phases that hand a
:class:`PlanDraft` on (the middle ones in :mod:`engine.curation.choosing`); it changes nothing
(``SessionCuration.apply`` carries a plan out), so ``heedful replay`` can plan probe questions side
by side.

The prompt, in order (:mod:`engine.curation.assembling`): the system prompt, the memory section
(memories of earlier sessions, when the session has one and it fits), the standing instructions
(:mod:`engine.standing`), system items, the story so far (:mod:`engine.summaries.story`), a summary
section for summarized items that still matter, the debugging threads (:mod:`engine.debugging`),
then verbatim items in conversation order (pinned, retained, recalled, the recent turns) and the
new message last.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.advice.advice import AdviceOutcome, AdviceSource
from engine.advice.rules import (
    CURATOR,
    Guidance,
    explain_entities,
    judge,
)
from engine.curation.assembling import assemble
from engine.curation.candidates import narrow
from engine.curation.choosing import choose, left_out_note, operate
from engine.curation.cold_recall import NONE, ColdCandidates, admit
from engine.curation.consent import ConsentRequest
from engine.curation.curation_state import CurationState
from engine.curation.items import Item, ItemState
from engine.curation.keep_rules import matches
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.operations import Operation, OpKind
from engine.curation.plan_draft import PlanDraft
from engine.curation.prompt import REPLY_PRIMING_TOKENS
from engine.curation.repeats import relevant_threads, standing_aside, threads_room
from engine.curation.result import ContextMessage, CurationResult, cost
from engine.curation.scoring import ScoreTable, score_items
from engine.curation.user_room import (
    ask_about_new,
    fit,
    over_budget_note,
    past_budget_note,
    pin_suggestions,
    relevant_again,
    with_left_out_questions,
)
from engine.entities.registry import EntityState
from engine.standing.section import (
    TOO_LONG_NOTE,
    StandingSection,
    section_for,
    standing_left_out_note,
)
from engine.standing.section import share as standing_share
from engine.text.terms import terms

RECENT_TURNS = 2
"""The last this-many turns before the new message are always sent verbatim (when they fit)."""


def plan(
    state: CurationState,
    new: Item,
    *,
    system_prompt: str = "",
    guidance: Guidance | None = None,
    cold: ColdCandidates = NONE,
) -> CurationResult:
    """The prompt for ``new`` (the newest user message) and the operations that get there.

    In phases, each on a :class:`PlanDraft`: what is always sent, the recent turns, scores,
    what else fits, the operations on the rest, the prompt itself, and what it says of the
    session's entities.

    Args:
        guidance: The curator model's checked advice for ``new`` (ignored if for another message).
        cold: Messages before the session's curated cut that may answer ``new``, read from the
            store (:mod:`engine.curation.cold_recall`): recalled like pruned items when it
            refers to them.
    """
    if guidance is not None and guidance.for_item != new.id:
        guidance = None
    draft = fixed_part(state, new, system_prompt, guidance)
    take_recent(state, draft)
    groups = state.debugging.repeats() if state.debugging.order else []
    if groups:
        draft.repeats = standing_aside(groups, state.by_id, state.debugging.kept)
    scores = score(state, draft)
    if state.debugging.order:
        older = {i.id for i in draft.candidates}
        threshold = state.profile.recall_threshold
        draft.threads = relevant_threads(state.debugging.threads(), older, scores.total, threshold)
        draft.threads_room = threads_room(draft.threads, state.counter, draft.budget)
    if state.keep_rules:
        found = matches(state.keep_rules, draft.candidates, state.term_index, state.dense)
        draft.rule_matches = {i: r.reason for i, r in found.items()}
    draft.candidates = narrow(
        draft.candidates, scores.total, session_size=len(state.items), keep=draft.rule_matches
    )
    if cold.items:
        draft.cold = admit(
            cold,
            scores,
            term_index=state.term_index,
            entity_index=state.entity_index,
            new_refs=new.refs - state.registry.words,
            threshold=state.profile.recall_threshold,
        )
    choose(state, draft, scores)
    operate(state, draft, scores)
    messages, verbatim, summary_message, stand_ins = assemble(state, draft, scores, system_prompt)
    left_out_note(draft, stand_ins.keys() & set(draft.left_out))
    entities, consent = explain(state, draft, verbatim, summary_message)
    turn, retained = draft.turn, draft.retained
    tokens = sum(m.tokens for m in messages) + REPLY_PRIMING_TOKENS
    if draft.past_budget and tokens > state.budget.tokens:
        kept = sorted((state.by_id[i] for i in draft.past_budget), key=lambda i: i.position)
        draft.notes.append(past_budget_note(kept, tokens - state.budget.tokens))
    return CurationResult(
        turn=turn,
        budget_tokens=state.budget.tokens,
        messages=tuple(messages),
        tokens=tokens,
        operations=tuple(draft.operations),
        scores=scores,
        entities=entities,
        consent=consent,
        left_out=tuple(sorted(draft.left_out)),
        over_budget=draft.over_budget,
        notes=tuple(draft.notes),
        new_summaries=draft.new_summaries,
        stand_ins=stand_ins,
        curator_note=None
        if guidance is None
        else LedgerEntry(EntryKind.CURATOR, turn, "curator", guidance.source.value, guidance.note),
        prioritized={i: w for i, w in retained.items() if i in draft.chosen},
        kept_by_rule=draft.kept_by_rule,
        yours=frozenset(draft.protected_ids & draft.chosen),
        recent_from=draft.recent_from,
        verbatim_tokens=verbatim_cost(
            state, new, draft.system_cost + draft.memory_cost + standing_cost(draft)
        ),
        standing=draft.standing,
        recall_reasons=draft.recall_reasons,
        relevant_again=relevant_again(state, draft, scores),
        pin_suggestions=pin_suggestions(state, draft),
        past_budget=tuple(draft.past_budget),
        pinned_tokens=draft.pinned_cost,
        pin_limit_tokens=int(state.budget.tokens * state.pin_limit),
        cold=tuple(i for i in draft.cold if i.id in draft.chosen),
        repeats={i: g.ids for g in groups for i in g.ids},
        story=draft.story,
    )


def fixed_part(state: CurationState, new: Item, system_prompt: str, guidance: Guidance | None) -> PlanDraft:
    """What every request carries (system prompt, memory section, pinned and system items, the
    new message), and the room it leaves."""
    budget = state.budget.tokens - REPLY_PRIMING_TOKENS
    draft = PlanDraft(new, guidance, budget)
    draft.system_cost = cost(state.counter.count(system_prompt)) if system_prompt else 0
    draft.fixed = fixed = [state.by_id[i] for i in sorted(state.fixed) if i != new.id]
    fixed_costs = [cost(i.tokens) for i in fixed]
    draft.pinned_cost = sum(c for i, c in zip(fixed, fixed_costs, strict=True) if i.pinned)
    fixed_cost = draft.system_cost + cost(new.tokens) + sum(fixed_costs)
    # The memory section goes only where it fits beside what is always sent; it never crowds
    # out the conversation's own pinned items or the new message.
    draft.memory_cost = state.memory_cost if fixed_cost + state.memory_cost <= budget else 0
    if state.memory_cost and not draft.memory_cost:
        draft.notes.append("The memory section (earlier sessions) did not fit this request and was left out.")
    fixed_cost += draft.memory_cost
    draft.standing = standing_part(state, new, budget - fixed_cost, draft.notes)
    fixed_cost += draft.standing.tokens if draft.standing is not None else 0
    draft.over_budget = fixed_cost > budget
    if draft.over_budget:
        draft.notes.append(
            over_budget_note(
                system_cost=draft.system_cost + draft.memory_cost + standing_cost(draft),
                fixed=fixed,
                fixed_costs=fixed_costs,
                new=new,
                new_cost=cost(new.tokens),
                # The budget as the panel says it, whole: what frames the reply counts in.
                total=fixed_cost + REPLY_PRIMING_TOKENS,
                budget=state.budget.tokens,
            )
        )
    draft.remaining = max(0, budget - fixed_cost)
    hard = state.budget.hard_tokens - REPLY_PRIMING_TOKENS
    draft.extra = max(0, hard - max(fixed_cost, budget))
    ask_about_new(state, draft, hard)
    return draft


def standing_part(state: CurationState, new: Item, room: int, notes: list[str]) -> StandingSection | None:
    """The standing-instructions section, in its share of the budget and the ``room`` what is
    always sent leaves (see :mod:`engine.standing.section`)."""
    limit = min(standing_share(state.budget.tokens), room)
    section = section_for(state.standing, new.text, limit, state.counter.count)
    if section is not None and section.left_out:
        notes.append(standing_left_out_note(section.left_out))
    if section is not None and section.too_long:
        notes.append(TOO_LONG_NOTE)
    return section


def standing_cost(draft: PlanDraft) -> int:
    return draft.standing.tokens if draft.standing is not None else 0


def take_recent(state: CurationState, draft: PlanDraft) -> None:
    """The last turns go verbatim while they fit: the user's messages first, then the replies,
    each newest first (a reply that does not fit goes as a quick summary, or not at all; the
    user's words are left out only when asked); the rest are candidates."""
    new = draft.new
    fixed_ids = {i.id for i in draft.fixed}
    draft.recent_from = recent_floor = draft.turn - RECENT_TURNS + answered(state, new)
    recent: list[Item] = []
    for item in reversed(state.items):  # turns grow with position: the recent ones are at the end
        if item.turn < recent_floor:
            break
        # A recent message the user chose to forget or summarize is not sent as if it were not.
        if item is not new and item.id not in fixed_ids and item.state is ItemState.ACTIVE:
            recent.append(item)
    recent.reverse()
    draft.recent = recent
    for item in sorted(reversed(recent), key=lambda i: not i.user_owned):
        draft.remaining = fit(draft, item, draft.remaining)
    draft.excluded = fixed_ids | {i.id for i in recent} | {new.id}
    excluded = draft.excluded
    draft.candidates = [i for i in state.items if i.id not in excluded]


def answered(state: CurationState, new: Item) -> bool:
    """``new`` is the session's and a reply follows it: planned again (the panel's picture of the
    next request), its own turn is one of the recent turns, as it will be for the next message;
    counted before them, it made three turns recent, whose replies could crowd out the user's words."""
    if state.by_id.get(new.id) is not new:
        return False
    for item in reversed(state.items):
        if item is new:
            return False
        if item.role == "assistant":
            return True
    return False


def score(state: CurationState, draft: PlanDraft) -> ScoreTable:
    """Every candidate scored against the new message (and what the curator says matters)."""
    new, guidance = draft.new, draft.guidance
    recent_terms: dict[str, int] = {}
    recent_refs: set[str] = set()
    for item in draft.recent[-2 * RECENT_TURNS :]:
        for term, count in state.terms_of(item).items():
            recent_terms[term] = recent_terms.get(term, 0) + count
        recent_refs |= item.refs
    words = state.registry.words  # names the conversation also writes as words: not entities
    recent_refs -= words
    new_refs = new.refs - words
    new_terms, new_labels = state.terms_of(new), [m.label for m in new.mentions if m.ref in new_refs]
    if guidance is not None and guidance.retain_entities:
        # What the curator says still matters counts as if the new message named it.
        records = state.registry.records
        labels = [records[ref].label for ref in guidance.retain_entities if ref in records]
        new_refs = new_refs | (frozenset(guidance.retain_entities) - words)
        new_labels += labels
        new_terms = dict(new_terms)
        for term in (t for label in labels for t in terms(label)):
            new_terms[term] = new_terms.get(term, 0) + 1
    dense = state.dense.similarities(new.text, draft.candidates) if state.dense is not None else None
    return score_items(
        draft.candidates,
        dense=dense,
        session=state.items,
        by_id=state.by_id,
        excluded=draft.excluded,
        new_terms=new_terms,
        new_refs=new_refs,
        new_entity_terms=frozenset(t for label in new_labels for t in terms(label)),
        recent_terms=recent_terms,
        recent_refs=recent_refs,
        turn=draft.turn,
        profile=state.profile,
        term_index=state.term_index,
        entity_index=state.entity_index,
        registry=state.registry,
    )


def explain(
    state: CurationState, draft: PlanDraft, verbatim: list[Item], summary_message: ContextMessage | None
) -> tuple[dict[str, tuple[EntityState, str]], ConsentRequest | None]:
    """Each entity's state and reason in this prompt, the curator's roles and notes, and the
    consent question about the user's messages, if any."""
    new, guidance, turn, notes = draft.new, draft.guidance, draft.turn, draft.notes
    kept_refs = refs_kept(state, verbatim, summary_message, new)
    entities = state.registry.classify(turn, kept_refs)
    if guidance is not None:
        explain_entities(entities, guidance)
        for item_id, role in guidance.roles.items():
            item = state.by_id[item_id]
            if item.memory_role is not role:
                draft.operations.append(
                    Operation(OpKind.TAG, item_id, f"memory role from {CURATOR}", turn, detail=role.value)
                )
        if guidance.source is AdviceSource.FALLBACK:
            times = guidance.repeats
            notes.append(
                f"The curator model gave no advice ({guidance.problem}); the heuristic decided alone"
                + (f" (×{times} in a row)." if times > 1 else ".")
            )
        elif draft.advised_consent:
            notes.append(
                f"The curator model suggested forgetting {len(draft.advised_consent)} of your messages; "
                "they stay unless you agree."
            )
    words = state.registry.words
    for mention in new.mentions:
        if mention.ref not in words:
            entities[mention.ref] = (EntityState.ACTIVE, "in the new message")
    consent_items = draft.consent_items
    if consent_items:
        notes.append(
            f"Heedful would like to summarize or remove {len(consent_items)} of your messages "
            f"({sum(i.tokens for i in consent_items):,} tokens); they stay as they are until you answer."
        )
    if draft.asked_left_out:
        consent_items = with_left_out_questions(state, draft, consent_items)
    consent = ConsentRequest(turn, tuple(consent_items)) if consent_items else None
    return entities, consent


def verbatim_cost(state: CurationState, new: Item, fixed_cost: int) -> int:
    """What sending the whole conversation verbatim for ``new`` costs, with ``fixed_cost`` for
    the system prompt and the memory section."""
    others = state.all_cost - (cost(new.tokens) if new.id in state.by_id else 0)
    return fixed_cost + others + cost(new.tokens) + REPLY_PRIMING_TOKENS


def judge_advice(state: CurationState, outcome: AdviceOutcome, new: Item) -> Guidance:
    """The curator model's answer about ``new``, checked against this session."""
    return judge(
        outcome,
        new=new,
        by_id=state.by_id,
        entities=state.registry.records,
        recent_from=new.turn - RECENT_TURNS,
    )


def fits_verbatim(state: CurationState, new: Item, *, system_prompt: str = "") -> bool:
    """Whether the whole conversation, every message verbatim, fits the budget for ``new``:
    then there is nothing to forget, and the curator model is not asked (a round trip and its
    tokens on every message of a short chat, for no change)."""
    system_cost = cost(state.counter.count(system_prompt)) if system_prompt else 0
    return verbatim_cost(state, new, system_cost + state.memory_cost) <= state.budget.tokens


def refs_kept(
    state: CurationState, verbatim: Iterable[Item], summary: ContextMessage | None, new: Item
) -> dict[str, str]:
    kept: dict[str, str] = {}
    for item in verbatim:
        why = f"in pinned message {item.label}" if item.pinned else f"in message {item.label}, sent verbatim"
        for ref in item.refs:
            kept.setdefault(ref, why)
    if summary is not None:
        for source in summary.sources:
            for ref in state.by_id[source].refs:
                kept.setdefault(ref, f"in the summary of message {state.by_id[source].label}")
    return kept
