"""Planning a turn: which of a session's items the request carries, and how, within the budget.

The planning half of :class:`engine.curation.session_curation.SessionCuration` (a mixin over its
items). It scores the items against the new message, fits a prompt into the budget and proposes operations, in
phases that hand a :class:`PlanDraft` on; it changes nothing (``SessionCuration.apply`` carries a plan
out), so ``heedful replay`` can plan probe questions side by side.

The prompt, in order: the system prompt, the memory section (memories of earlier sessions, when the
session has one and it fits), system items, a summary section for summarized items that still
matter, then verbatim items in conversation order (pinned, retained, recalled, the recent turns) and
the new message last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.advice.advice import AdviceOutcome, AdviceSource
from engine.advice.rules import (
    CURATOR,
    Guidance,
    advised,
    advised_why,
    explain_entities,
    judge,
    summarize_all,
)
from engine.curation.budget import Budget, Profile
from engine.curation.candidates import narrow
from engine.curation.cold_recall import admit, recall_earlier
from engine.curation.consent import ConsentChoice, ConsentItem, ConsentRequest
from engine.curation.forgetting import BUDGET, demote
from engine.curation.items import Item, ItemState
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.operations import Operation, OpKind
from engine.curation.plan_draft import PlanDraft
from engine.curation.prompt import REPLY_PRIMING_TOKENS
from engine.curation.result import ContextMessage, CurationResult, cost
from engine.curation.scoring import ScoreTable, score_items
from engine.curation.user_room import UserRoom, over_budget_note, past_budget_note
from engine.entities.registry import EntityState
from engine.summaries.book import SummaryBook
from engine.summaries.offline import Summarizer
from engine.summaries.section import SummarySection
from engine.text.terms import terms

RECENT_TURNS = 2
"""The last this-many turns before the new message are always sent verbatim (when they fit)."""


class Planning(UserRoom):
    """The planning half of a session's curation (see the module)."""

    # Provided by SessionCuration.
    profile: Profile
    budget: Budget
    summarizer: Summarizer
    model_summaries: SummaryBook | None
    policy: ConsentChoice | None
    memory: str
    _memory_cost: int
    _summary_section: SummarySection
    _recalled: set[int]
    _cold_recalled: set[int]
    _restored: set[int]
    _prioritized: dict[int, str]
    _consent_items: dict[tuple[int, ConsentChoice], ConsentItem]
    _recall_turns: dict[int, list[int]]
    pin_limit: float

    def plan(
        self,
        new: Item,
        *,
        system_prompt: str = "",
        guidance: Guidance | None = None,
        cold: Sequence[Item] = (),
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
        draft = self._fixed_part(new, system_prompt, guidance)
        self._take_recent(draft)
        scores = self._score(draft)
        draft.candidates = narrow(draft.candidates, scores.total, session_size=len(self.items))
        if cold:
            draft.cold = admit(
                cold,
                scores,
                term_index=self._terms,
                entity_index=self._entities,
                new_refs=new.refs,
                threshold=self.profile.recall_threshold,
            )
        self._choose(draft, scores)
        self._operate(draft, scores)
        messages, verbatim, summary_message, stand_ins = self._assemble(draft, scores, system_prompt)
        entities, consent = self._explain(draft, verbatim, summary_message)
        turn, retained = draft.turn, draft.retained
        tokens = sum(m.tokens for m in messages) + REPLY_PRIMING_TOKENS
        if draft.past_budget and tokens > self.budget.tokens:
            kept = sorted((self.by_id[i] for i in draft.past_budget), key=lambda i: i.position)
            draft.notes.append(past_budget_note(kept, tokens - self.budget.tokens))
        return CurationResult(
            turn=turn,
            budget_tokens=self.budget.tokens,
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
            verbatim_tokens=self._verbatim_cost(new, draft.system_cost + draft.memory_cost),
            recall_reasons=draft.recall_reasons,
            relevant_again=self._relevant_again(draft, scores),
            pin_suggestions=self._pin_suggestions(draft),
            past_budget=tuple(draft.past_budget),
            pinned_tokens=draft.pinned_cost,
            pin_limit_tokens=int(self.budget.tokens * self.pin_limit),
            cold=tuple(i for i in draft.cold if i.id in draft.chosen),
        )

    def _fixed_part(self, new: Item, system_prompt: str, guidance: Guidance | None) -> PlanDraft:
        """What every request carries (system prompt, memory section, pinned and system items, the
        new message), and the room it leaves."""
        budget = self.budget.tokens - REPLY_PRIMING_TOKENS
        draft = PlanDraft(new, guidance, budget)
        draft.system_cost = cost(self.counter.count(system_prompt)) if system_prompt else 0
        draft.fixed = fixed = [self.by_id[i] for i in sorted(self._fixed) if i != new.id]
        fixed_costs = [cost(i.tokens) for i in fixed]
        draft.pinned_cost = sum(c for i, c in zip(fixed, fixed_costs, strict=True) if i.pinned)
        fixed_cost = draft.system_cost + cost(new.tokens) + sum(fixed_costs)
        # The memory section goes only where it fits beside what is always sent; it never crowds
        # out the conversation's own pinned items or the new message.
        draft.memory_cost = self._memory_cost if fixed_cost + self._memory_cost <= budget else 0
        if self._memory_cost and not draft.memory_cost:
            draft.notes.append(
                "The memory section (earlier sessions) did not fit this request and was left out."
            )
        fixed_cost += draft.memory_cost
        draft.over_budget = fixed_cost > budget
        if draft.over_budget:
            draft.notes.append(
                over_budget_note(
                    system_cost=draft.system_cost + draft.memory_cost,
                    fixed=fixed,
                    fixed_costs=fixed_costs,
                    new=new,
                    new_cost=cost(new.tokens),
                    # The budget as the panel says it, whole: what frames the reply counts in.
                    total=fixed_cost + REPLY_PRIMING_TOKENS,
                    budget=self.budget.tokens,
                )
            )
        draft.remaining = max(0, budget - fixed_cost)
        hard = self.budget.hard_tokens - REPLY_PRIMING_TOKENS
        draft.extra = max(0, hard - max(fixed_cost, budget))
        self._ask_about_new(draft, hard)
        return draft

    def _take_recent(self, draft: PlanDraft) -> None:
        """The last turns go verbatim while they fit, newest first; the rest are candidates."""
        new = draft.new
        fixed_ids = {i.id for i in draft.fixed}
        recent_floor = draft.turn - RECENT_TURNS
        recent: list[Item] = []
        for item in reversed(self.items):  # turns grow with position: the recent ones are at the end
            if item.turn < recent_floor:
                break
            # A recent message the user chose to forget or summarize is not sent as if it were not.
            if item is not new and item.id not in fixed_ids and item.state is ItemState.ACTIVE:
                recent.append(item)
        recent.reverse()
        draft.recent = recent
        for item in reversed(recent):
            draft.remaining = self._fit(draft, item, draft.remaining)
        draft.excluded = fixed_ids | {i.id for i in recent} | {new.id}
        excluded = draft.excluded
        draft.candidates = [i for i in self.items if i.id not in excluded]

    def _score(self, draft: PlanDraft) -> ScoreTable:
        """Every candidate scored against the new message (and what the curator says matters)."""
        new, guidance = draft.new, draft.guidance
        recent_terms: dict[str, int] = {}
        recent_refs: set[str] = set()
        for item in draft.recent[-2 * RECENT_TURNS :]:
            for term, count in self.terms_of(item).items():
                recent_terms[term] = recent_terms.get(term, 0) + count
            recent_refs |= item.refs
        new_terms, new_refs, new_labels = self.terms_of(new), new.refs, [m.label for m in new.mentions]
        if guidance is not None and guidance.retain_entities:
            # What the curator says still matters counts as if the new message named it.
            records = self.registry.records
            labels = [records[ref].label for ref in guidance.retain_entities if ref in records]
            new_refs = new_refs | frozenset(guidance.retain_entities)
            new_labels += labels
            new_terms = dict(new_terms)
            for term in (t for label in labels for t in terms(label)):
                new_terms[term] = new_terms.get(term, 0) + 1
        return score_items(
            draft.candidates,
            session=self.items,
            by_id=self.by_id,
            excluded=draft.excluded,
            new_terms=new_terms,
            new_refs=new_refs,
            new_entity_terms=frozenset(t for label in new_labels for t in terms(label)),
            recent_terms=recent_terms,
            recent_refs=recent_refs,
            turn=draft.turn,
            profile=self.profile,
            term_index=self._terms,
            entity_index=self._entities,
            registry=self.registry,
        )

    def _choose(self, draft: PlanDraft, scores: ScoreTable) -> None:
        """What else is sent verbatim: what the user restored, the user's own messages (or a
        consent question about them), then the best-scoring others while they fit."""
        candidates, chosen, guidance = draft.candidates, draft.chosen, draft.guidance
        draft.reserve = (
            int(draft.budget * self.profile.memory_share)
            if any(self._may_summarize(i) for i in candidates)
            else 0
        )
        room = max(0, draft.remaining - draft.reserve)
        totals = scores.total
        # Tool and search results expire as soon as the new message stops referring to them
        # directly (sitting next to a relevant message is not enough).
        named = scores.named(self.profile.recall_threshold)
        beside = scores.beside(self.profile.recall_threshold)
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
        # Best first (what the curator retains before all); newest first among equal scores (the
        # list is newest first and sorting is stable).
        if retained:
            eligible.sort(key=lambda i: (i.id in retained, totals[i.id]), reverse=True)
        else:  # the usual case, keyed without a lambda call per item (10,000 in a long session)
            keys = [totals[i.id] for i in eligible]
            eligible = [eligible[n] for n in sorted(range(len(keys)), key=keys.__getitem__, reverse=True)]
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
        for item_id in sorted(self._restored - draft.excluded):
            item = self.by_id[item_id]
            if item.state is active and cost(item.tokens) <= room:
                chosen.add(item.id)
                room -= cost(item.tokens)
        protected = self._protected_user_items(candidates)
        asked = self._consent_items
        draft.advised_consent = advised_consent = (
            guidance.ask_user if guidance is not None and self.policy is None else {}
        )
        draft.protected_ids = protected_ids = {i.id for i in protected}
        for item in reversed(protected):  # newest first: candidates are in conversation order
            if item.id not in chosen:
                room = self._fit(draft, item, room)
        # Kept aside by the user ("attach"): sent whole when the new message refers to it.
        for item in reversed(candidates):
            if item.attached and item.id in named and item.id not in chosen:
                room = self._fit(draft, item, room)
        for item in protected:
            if item.id in draft.asked_left_out:
                continue  # asked about as a message that cannot fit
            proposed = advised_consent.get(item.id)
            if proposed is None and item.id not in ideal and not item.kept_by_user and self.policy is None:
                proposed = (
                    ConsentChoice.SUMMARIZE
                    if totals[item.id] >= self.profile.summarize_threshold
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

    def _operate(self, draft: PlanDraft, scores: ScoreTable) -> None:
        """The operations on the candidates: recall what comes back, note what the curator
        keeps, and demote (summarize or prune) what does not fit or was advised away."""
        guidance, turn, chosen, retained = draft.guidance, draft.turn, draft.chosen, draft.retained
        active = ItemState.ACTIVE
        recalled, protected = self._recalled, draft.protected_ids
        for item in draft.candidates:
            if item.id in protected:
                continue
            if item.id in chosen:
                why = retained.get(item.id)
                if item.state is not active:
                    reason = f"{CURATOR}: {why}" if why else self._recall_reason(item, scores)
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
                elif why is not None and item.state is active and self._prioritized.get(item.id) != why:
                    draft.operations.append(
                        Operation(
                            OpKind.PRIORITIZE, item.id, f"{CURATOR}: {why}", turn, scores=scores[item.id]
                        )
                    )
            elif item.state is active:
                forced = guidance is not None and item.id in draft.set_aside
                operation = demote(
                    item,
                    scores[item.id],
                    turn,
                    policy=self.policy,
                    # Advised away: summarized when it may be (demote), otherwise pruned.
                    profile=summarize_all(self.profile)
                    if forced and guidance is not None and item.id in guidance.demote_items
                    else self.profile,
                    summary_of=self._summary_for_plan,
                    new_summaries=draft.new_summaries,
                    waiting=draft.waiting,
                    why=advised_why(guidance, item.id) if forced else BUDGET,
                )
                if operation is not None:
                    draft.operations.append(operation)
                    if operation.after is not None:
                        draft.after_state[item.id] = operation.after
        if draft.cold:
            recall_earlier(draft, scores, self.profile.recall_threshold, self._cold_recalled)
        # The user's messages asked about have their own note (engine.curation.user_room).
        if left := len([i for i in draft.left_out if i not in draft.asked_left_out]):
            were, them = (
                ("1 message did not fit and was", "it")
                if left == 1
                else (f"{left} messages did not fit and were", "them")
            )
            draft.notes.append(f"{were} left out of this request only; nothing about {them} changed.")

    def _assemble(
        self, draft: PlanDraft, scores: ScoreTable, system_prompt: str
    ) -> tuple[list[ContextMessage], list[Item], ContextMessage | None, dict[int, str]]:
        """The prompt's messages in order; also the items sent verbatim, the summary section and
        the quick summaries standing in for ones a model is still writing."""
        new, chosen, new_summaries = draft.new, draft.chosen, draft.new_summaries
        # An item whose summary a model is still writing stays as it is, and a quick summary
        # stands in for it in this request.
        stand_ins = {i: self._stand_in(self.by_id[i]) for i in draft.waiting}
        after, summarized = draft.after_state.get, ItemState.SUMMARIZED
        summary_message = self._summary_section.build(
            [
                i
                for i in draft.candidates
                if i.id not in chosen and (after(i.id, i.state) is summarized or i.id in stand_ins)
            ],
            {**new_summaries, **stand_ins} if stand_ins else new_summaries,
            scores,
            draft.room + draft.reserve,
        )
        messages: list[ContextMessage] = []
        if system_prompt:
            messages.append(ContextMessage("system", system_prompt, (), "system", draft.system_cost))
        if draft.memory_cost:
            messages.append(ContextMessage("system", self.memory, (), "memory", draft.memory_cost))
        messages.extend(
            ContextMessage(i.role, i.text, (i.id,), "system", cost(i.tokens))
            for i in draft.fixed
            if i.role == "system"
        )
        if summary_message is not None:
            messages.append(summary_message)
        verbatim = [
            i for i in self.items if i is not new and (i.id in chosen or (i.pinned and i.role != "system"))
        ]
        if draft.cold:  # from before the cut: first in the conversation
            verbatim[:0] = [i for i in draft.cold if i.id in chosen]
        # In the conversation's order: the new message is the last, except in the preview of a
        # request already answered (the screen's "next request"), where its replies follow it.
        sent = sorted([*verbatim, new], key=lambda i: i.position)
        messages.extend(ContextMessage(i.role, i.text, (i.id,), "verbatim", cost(i.tokens)) for i in sent)
        return messages, verbatim, summary_message, stand_ins

    def _explain(
        self, draft: PlanDraft, verbatim: list[Item], summary_message: ContextMessage | None
    ) -> tuple[dict[str, tuple[EntityState, str]], ConsentRequest | None]:
        """Each entity's state and reason in this prompt, the curator's roles and notes, and the
        consent question about the user's messages, if any."""
        new, guidance, turn, notes = draft.new, draft.guidance, draft.turn, draft.notes
        kept_refs = self._kept_refs(verbatim, summary_message, new)
        entities = self.registry.classify(turn, kept_refs)
        if guidance is not None:
            explain_entities(entities, guidance)
            for item_id, role in guidance.roles.items():
                item = self.by_id[item_id]
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
        for mention in new.mentions:
            entities[mention.ref] = (EntityState.ACTIVE, "in the new message")
        consent_items = draft.consent_items
        if consent_items:
            notes.append(
                f"Heedful would like to summarize or remove {len(consent_items)} of your messages "
                f"({sum(i.tokens for i in consent_items):,} tokens); they stay as they are until you answer."
            )
        if draft.asked_left_out:
            consent_items = self._with_left_out_questions(draft, consent_items)
        consent = ConsentRequest(turn, tuple(consent_items)) if consent_items else None
        return entities, consent

    def _verbatim_cost(self, new: Item, fixed_cost: int) -> int:
        """What sending the whole conversation verbatim for ``new`` costs, with ``fixed_cost`` for
        the system prompt and the memory section."""
        others = self._all_cost - (cost(new.tokens) if new.id in self.by_id else 0)
        return fixed_cost + others + cost(new.tokens) + REPLY_PRIMING_TOKENS

    def judge(self, outcome: AdviceOutcome, new: Item) -> Guidance:
        """The curator model's answer about ``new``, checked against this session."""
        return judge(
            outcome,
            new=new,
            by_id=self.by_id,
            entities=self.registry.records,
            recent_from=new.turn - RECENT_TURNS,
        )

    def fits_verbatim(self, new: Item, *, system_prompt: str = "") -> bool:
        """Whether the whole conversation, every message verbatim, fits the budget for ``new``:
        then there is nothing to forget, and the curator model is not asked (a round trip and its
        tokens on every message of a short chat, for no change)."""
        system_cost = cost(self.counter.count(system_prompt)) if system_prompt else 0
        return self._verbatim_cost(new, system_cost + self._memory_cost) <= self.budget.tokens

    def _summary_for_plan(self, item: Item) -> str | None:
        if self.model_summaries is not None:
            return self.model_summaries.ready(item)
        return self.summarizer.summarize(item)

    def _stand_in(self, item: Item) -> str:
        book = self.model_summaries
        return book.stand_in(item) if book is not None else self.summarizer.summarize(item)

    def _may_summarize(self, item: Item) -> bool:
        return item.state is ItemState.SUMMARIZED or (item.state is ItemState.ACTIVE and not item.pinned)

    def _protected_user_items(self, candidates: Sequence[Item]) -> list[Item]:
        """Active user items that may not be demoted now: no consent yet, or the user said keep
        (their role compared inline, not through Item.user_owned: 10,000 candidates)."""
        active = ItemState.ACTIVE
        if self.policy in (ConsentChoice.SUMMARIZE, ConsentChoice.REMOVE):
            return [i for i in candidates if i.role == "user" and i.state is active and i.kept_by_user]
        return [i for i in candidates if i.role == "user" and i.state is active]

    def _kept_refs(
        self, verbatim: Iterable[Item], summary: ContextMessage | None, new: Item
    ) -> dict[str, str]:
        kept: dict[str, str] = {}
        for item in verbatim:
            why = (
                f"in pinned message {item.label}"
                if item.pinned
                else f"in message {item.label}, sent verbatim"
            )
            for ref in item.refs:
                kept.setdefault(ref, why)
        if summary is not None:
            for source in summary.sources:
                for ref in self.by_id[source].refs:
                    kept.setdefault(ref, f"in the summary of message {self.by_id[source].label}")
        return kept
