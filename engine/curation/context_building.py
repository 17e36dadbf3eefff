"""Builds the UI's picture of a context (:class:`engine.curation.context_view.ContextView`) from a plan."""

from __future__ import annotations

from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from engine.advice.calls import CallsReport
from engine.curation.context_view import SENT_IN_FULL, ContextView, EntityView, ItemView, Mark, Section
from engine.curation.cut_note import cut_note
from engine.curation.items import Item, ItemState, id_label
from engine.curation.operations import OpKind, Scores
from engine.curation.pins import SUGGEST_TURNS, recalls_lately
from engine.curation.repeats import THREADS_HEADER, copy_reason
from engine.curation.request_parts import request_parts
from engine.curation.result import CurationResult
from engine.curation.session_curation import RECENT_TURNS, SessionCuration
from engine.curation.story_quotes import story_quotes, story_reason
from engine.entities.registry import EntityState
from engine.entities.views import Things, list_entities
from engine.standing.section import standing_reasons


def empty_view(curation: SessionCuration, tokens: int) -> ContextView:
    """A session with no user message yet: only the system prompt would be sent."""
    return ContextView(
        turn=0,
        tokens=tokens,
        budget=curation.budget.tokens,
        window=curation.budget.window,
        saved_tokens=0,
        session_saved_tokens=curation.saved_in_session,
        active=(),
        retained=(),
        pruned=(),
        items=(),
        messages=(),
        notes=cut_note(curation),
        consent=None,
        over_budget=False,
        upcoming=True,
        uncurated_through=curation.cut.after if curation.cut is not None else 0,
        building=curation.building,
    )


def build_view(
    curation: SessionCuration,
    result: CurationResult,
    *,
    new_id: int,
    calls: CallsReport | None = None,
    upcoming: bool = False,
) -> ContextView:
    """The view of ``result``, a plan for the message ``new_id`` (``calls``: what curation's own
    model calls cost so far)."""
    earlier = _earlier_views(curation)
    records = curation.registry.records
    groups, not_shown = list_entities(result.entities, records, result.turn, earlier.entities, earlier.things)
    # Messages before the cut that the plan recalls are listed first, as recalled.
    placed = [*result.cold, *curation.items] if result.cold else curation.items
    items = _ItemPlacer(result, new_id, earlier.items).place(placed)
    return ContextView(
        turn=result.turn,
        tokens=result.tokens,
        budget=result.budget_tokens,
        window=curation.budget.window,
        saved_tokens=result.saved_tokens,
        session_saved_tokens=curation.saved_in_session,
        active=tuple(groups[EntityState.ACTIVE]),
        retained=tuple(groups[EntityState.RETAINED]),
        pruned=tuple(groups[EntityState.PRUNED]),
        entities_not_shown=not_shown,
        items=items,
        messages=result.messages,
        notes=(*result.notes, *cut_note(curation)),
        consent=result.consent,
        over_budget=result.over_budget,
        calls=calls,
        alerts=alerts(curation, result, new_id),
        upcoming=upcoming,
        uncurated_through=curation.cut.after if curation.cut is not None else 0,
        building=curation.building,
        parts=request_parts(result, items),
        standing=result.standing,
    )


@dataclass
class _EarlierViews:
    """A curation's item and entity views of its earlier plans: most items and entities of a long
    session are placed the same way turn after turn, and their views are reused."""

    items: dict[int, ItemView] = field(default_factory=dict)
    entities: dict[str, EntityView] = field(default_factory=dict)
    things: Things = field(default_factory=Things)


_EARLIER: WeakKeyDictionary[SessionCuration, _EarlierViews] = WeakKeyDictionary()


def _earlier_views(curation: SessionCuration) -> _EarlierViews:
    earlier = _EARLIER.get(curation)
    if earlier is None:
        earlier = _EARLIER[curation] = _EarlierViews()
    return earlier


def alerts(curation: SessionCuration, result: CurationResult, new_id: int) -> tuple[str, ...]:
    """What the top of the panel says first: the user's messages not being sent until they choose,
    what they took out that looks relevant again, pins suggested, and pins past their limit."""
    by_id = curation.by_id
    said: list[str] = []
    asked = [i for i in result.consent.items if i.left_out] if result.consent is not None else []
    for question in asked[:SHOWN]:
        label = by_id[question.item_id].label if question.item_id in by_id else id_label(question.item_id)
        said.append(
            f"Your message {label} ({question.tokens:,} tokens) is too big for later requests: it is not "
            "sent again until you choose. F4 to choose"
            if question.item_id == new_id
            else f"Your message {label} ({question.tokens:,} tokens) is not being sent: it does not fit. "
            "F4 to choose"
        )
    if len(asked) > SHOWN:
        said.append(f"… and {len(asked) - SHOWN:,} more of your messages are not being sent. F4 to choose")
    said.extend(f"{by_id[i].label} looks relevant again · Alt+R restores it" for i in result.relevant_again)
    for item_id in result.pin_suggestions:
        times = recalls_lately(curation.recall_turns(item_id), result.turn)
        said.append(
            f"{by_id[item_id].label} was recalled in {times} of the last {SUGGEST_TURNS} turns · "
            "Alt+P pins it"
        )
    budget, pinned, limit = result.budget_tokens, result.pinned_tokens, result.pin_limit_tokens
    if limit and pinned > limit and budget:
        said.append(
            f"Pins take {pinned:,} of the {budget:,}-token budget ({pinned / budget:.0%}), past your pin "
            f"limit of {limit / budget:.0%}: less room for the rest of the conversation"
        )
    return tuple(said)


def unscored_reason(item: Item, new_id: int, recent_from: int) -> str:
    """Why ``item`` has no score in the plan for the message ``new_id`` whose recent turns begin
    at ``recent_from``: only what is sent without competing for room is not scored."""
    if item.id == new_id:
        return "the message being answered: always sent, and what the others are scored against"
    if item.pinned:
        return "pinned: always sent in full, so never scored"
    if item.role == "system":
        return "a system message: always sent, so never scored"
    if item.turn >= recent_from:
        return (
            f"one of the last {RECENT_TURNS} turns, which go in full before anything older while "
            "they fit (yours first, then the replies), so not scored"
        )
    return "not scored for this request"


SHORTENED = "too long for the room left: a quick summary of it is sent in this request instead"
"""Why a recent reply is sent as a summary (engine.curation.assembling); nothing about it changes."""

SHOWN = 3
"""Left-out messages named one by one at the top of the panel; the rest are counted."""


def _uninvolved(state: ItemState, forgotten: bool) -> tuple[Mark, str]:
    """The mark and reason of an item this plan neither sends nor changes."""
    if state is ItemState.SUMMARIZED:
        return Mark.LEFT_OUT, f"summarized as you chose; {SUMMARY_NOT_SENT}" if forgotten else NO_SUMMARY
    if forgotten:
        return Mark.PRUNED, "taken out by you (forgotten or removed); Alt+R restores it"
    if state is ItemState.PRUNED:
        return Mark.PRUNED, "pruned earlier (inspect shows why)"
    return Mark.LEFT_OUT, "not sent this time"


SUMMARY_NOT_SENT = "its summary is not in this request (no room, or not relevant now)"
NO_SUMMARY = f"summarized earlier; {SUMMARY_NOT_SENT}"

_UNINVOLVED = {
    (state, forgotten): _uninvolved(state, forgotten) for state in ItemState for forgotten in (False, True)
}
"""Made once: the reasons are shared strings, so an unchanged view is recognised by identity."""
_ATTACHED = (Mark.PRUNED, "kept aside by you: sent whole when a message refers to it")
YOURS = "your message: sent whole while it fits (Heedful asks before it leaves any of yours out)"


class _ItemPlacer:
    """Puts each item in its section with a mark and a reason, from one plan."""

    def __init__(self, result: CurationResult, new_id: int, earlier: dict[int, ItemView]) -> None:
        self.result = result
        self.new_id = new_id
        self.earlier = earlier
        """Item views of an earlier plan, reused where nothing about the item changed."""
        self.verbatim: set[int] = set()
        self.summarized: set[int] = set()
        self.threaded: set[int] = set()
        """Messages the debugging threads' lines draw on (engine.curation.repeats)."""
        for message in result.messages:
            if message.form in ("verbatim", "system"):  # system items are sent whole, as system
                self.verbatim.update(message.sources)
            elif message.content.startswith(THREADS_HEADER):
                self.threaded.update(message.sources)
            elif message.form == "summary":
                self.summarized.update(message.sources)
        self.repeats = result.repeats
        self.operations = {op.target: op for op in result.operations}
        self.left_out = set(result.left_out)
        self.asked = {c.item_id for c in result.consent.items} if result.consent else set()
        self.asked_left_out = result.asked_left_out
        self.recent_from = result.recent_from
        self.standing = standing_reasons(result.standing)
        self.quoted = story_quotes(result.story)
        """The story lines that quote each message they quote."""

    def place(self, items: list[Item]) -> tuple[ItemView, ...]:
        # Most items of a long session play no part in this plan: they are placed by their state
        # alone, and keep their view while it holds (checked inline: through _placing and _view
        # they were most of a turn's view).
        result = self.result
        involved = (
            {self.new_id}
            | self.verbatim
            | self.summarized
            | self.threaded
            | self.repeats.keys()
            | self.left_out
            | self.operations.keys()
            | result.new_summaries.keys()
            | result.stand_ins.keys()
            | self.standing.keys()
            | self.quoted.keys()
        )
        earlier = self.earlier
        views: list[ItemView] = []
        append = views.append
        for item in items:
            if item.pinned or item.id in involved:
                section, mark, reason = self._placing(item)
                standing = self.standing.get(item.id)
                if standing:
                    reason = f"{reason}; {standing}"
                quoted = self.quoted.get(item.id, ())
                if quoted and mark not in SENT_IN_FULL:
                    reason = f"{reason}; {story_reason(item.id, quoted)}"
                append(self._view(item, section, mark, reason, tuple(line for _, line in quoted)))
                continue
            state = item.state
            mark, reason = _ATTACHED if item.attached else _UNINVOLVED[state, item.forgotten]
            view = earlier.get(item.id)
            if (
                view is not None
                and not view.story
                and view.mark is mark
                and view.reason is reason
                and view.section is Section.PRUNED
                and view.state is state
                and not view.pinned
                and view.summary == item.summary
                and view.tokens == item.tokens
                and view.preview == item.preview
                and view.role == item.role
            ):
                append(view)
            else:
                append(self._view(item, Section.PRUNED, mark, reason))
        return tuple(views)

    def _placing(self, item: Item) -> tuple[Section, Mark, str]:
        if item.id == self.new_id:
            return Section.ACTIVE, Mark.VERBATIM, "the message being answered"
        operation = self.operations.get(item.id)
        if item.pinned:
            return Section.RETAINED, Mark.PINNED, "pinned by you"
        if item.id in self.verbatim:
            if item.role == "system":
                return Section.RETAINED, Mark.VERBATIM, "a system message: always sent"
            if item.state is not ItemState.ACTIVE:
                why = self.result.recall_reasons.get(item.id) or (
                    operation.reason if operation and operation.op is OpKind.RECALL else "referred to again"
                )
                return Section.RETAINED, Mark.RECALLED, f"recalled: {why}"
            if item.turn >= self.recent_from:
                return Section.ACTIVE, Mark.VERBATIM, f"in the last {RECENT_TURNS} turns"
            advised = self.result.prioritized.get(item.id)
            if advised is not None:
                return Section.RETAINED, Mark.VERBATIM, f"the curator model: {advised}"
            rule = self.result.kept_by_rule.get(item.id)
            if rule is not None:
                return Section.RETAINED, Mark.VERBATIM, rule
            if item.id in self.result.yours:
                return Section.RETAINED, Mark.VERBATIM, YOURS
            return Section.RETAINED, Mark.VERBATIM, self._retained_reason(item.id)
        if item.id in self.summarized:
            if item.id in self.left_out:  # a recent reply too long for the room left
                return Section.RETAINED, Mark.SUMMARIZED, SHORTENED
            if item.id in self.result.stand_ins:
                return (
                    Section.RETAINED,
                    Mark.SUMMARIZED,
                    "a quick summary is sent while the model writes its summary",
                )
            why = (
                operation.reason
                if operation
                else "you chose to summarize it"
                if item.forgotten
                else "summarized earlier"
            )
            return Section.RETAINED, Mark.SUMMARIZED, f"its summary is sent ({why})"
        if item.id in self.threaded and item.id not in self.left_out:
            why = operation.reason if operation else copy_reason(item.id, self.repeats.get(item.id, ()))
            return Section.RETAINED, Mark.SUMMARIZED, f"its debugging thread's line is sent ({why})"
        if item.id in self.left_out:
            if item.id in self.asked_left_out:
                return (
                    Section.PRUNED,
                    Mark.LEFT_OUT,
                    "your message does not fit: not sent until you choose to keep it aside, summarize "
                    "it or leave it out (F4)",
                )
            if item.attached:
                return (
                    Section.PRUNED,
                    Mark.LEFT_OUT,
                    "kept aside by you; referred to, but too big for the window",
                )
            why = (
                "waiting for your answer: keep, summarize or remove"
                if item.id in self.asked
                else "did not fit the budget"
            )
            return Section.PRUNED, Mark.LEFT_OUT, f"left out of this request only: {why}"
        state = operation.after if operation and operation.after else item.state
        if item.attached:
            return (Section.PRUNED, *_ATTACHED)
        if operation is not None:
            if state is ItemState.SUMMARIZED:  # summarized now, but its summary is not sent
                return Section.PRUNED, Mark.LEFT_OUT, f"{operation.reason}; {SUMMARY_NOT_SENT}"
            return Section.PRUNED, Mark.PRUNED, operation.reason
        return (Section.PRUNED, *_UNINVOLVED[state, item.forgotten])

    def _retained_reason(self, item_id: int) -> str:
        scores: Scores | None = self.result.scores.get(item_id)
        if scores is None:
            return "sent verbatim"
        return f"relevant now (score {scores.total:.2f})"

    def _view(
        self, item: Item, section: Section, mark: Mark, reason: str, story: tuple[str, ...] = ()
    ) -> ItemView:
        summary = self.result.new_summaries.get(item.id) or self.result.stand_ins.get(item.id) or item.summary
        group = self.repeats.get(item.id, ())
        view = self.earlier.get(item.id)
        if (
            view is not None
            and view.group == group
            and view.section is section
            and view.mark is mark
            and view.state is item.state
            and view.pinned == item.pinned
            and view.reason == reason
            and view.story == story
            and view.summary == summary
            and view.tokens == item.tokens
            and view.preview == item.preview
            and view.role == item.role
        ):
            return view
        view = ItemView(
            item.id,
            item.role,
            item.label,
            item.preview,
            item.tokens,
            item.state,
            item.pinned,
            section,
            mark,
            reason,
            summary,
            group,
            story,
        )
        self.earlier[item.id] = view
        return view
