"""Assembling a plan's prompt: its sections in order (system, memory, standing instructions,
system items, the story so far, summaries, debugging threads), then what is sent verbatim."""

from __future__ import annotations

from engine.curation.choosing import STORY_OWN_SHARE_FROM
from engine.curation.curation_state import CurationState
from engine.curation.items import Item, ItemState
from engine.curation.plan_draft import PlanDraft
from engine.curation.repeats import thread_section
from engine.curation.result import ContextMessage, cost
from engine.curation.scoring import ScoreTable
from engine.summaries.story_section import story_section


def assemble(
    state: CurationState, draft: PlanDraft, scores: ScoreTable, system_prompt: str
) -> tuple[list[ContextMessage], list[Item], ContextMessage | None, dict[int, str]]:
    """The prompt's messages in order; also the items sent verbatim, the summary section and
    the quick summaries standing in for ones a model is still writing."""
    new, chosen, new_summaries = draft.new, draft.chosen, draft.new_summaries
    # An item whose summary a model is still writing stays as it is, and a quick summary
    # stands in for it in this request.
    stand_ins = {i: stand_in(state, state.by_id[i]) for i in draft.waiting}
    # A recent reply too long for the room left: a quick summary of it stands in for it in this
    # request, before the other summaries (the user's own words are never summarized unasked).
    left_out = set(draft.left_out)
    cut = [i for i in draft.recent if i.id in left_out and not i.user_owned]
    stand_ins.update((i.id, stand_in(state, i)) for i in cut)
    first = frozenset(i.id for i in cut)
    threads = None
    # What the summaries and the story may take beyond draft.room and draft.reserve (less than
    # nothing when the threads took some of them).
    extra = 0
    if draft.threads_room:  # its room set aside, and what verbatim items left
        in_full = {*chosen, *(i.id for i in draft.fixed), new.id}
        # The sections together never take more than the budget has left: in a tight budget the
        # rooms set aside can add up to more than it.
        left = min(draft.room + draft.reserve + draft.threads_room, draft.remaining)
        room = min(draft.threads_room + draft.room, left)
        threads = thread_section(draft.threads, in_full, state.counter, room)
        extra = left - (threads.tokens if threads is not None else 0) - draft.room - draft.reserve
    after, summarized, repeats = draft.after_state.get, ItemState.SUMMARIZED, draft.repeats
    summarized_items = cut + [
        i
        for i in draft.candidates
        if i.id not in chosen
        and (after(i.id, i.state) is summarized or i.id in stand_ins)
        and i.id not in repeats  # a copy of an error: its latest paste and thread stand for it
    ]
    summaries = {**new_summaries, **stand_ins} if stand_ins else new_summaries
    free = draft.room + min(draft.reserve, draft.remaining) + extra  # what the budget has left
    story_message: ContextMessage | None = None
    if draft.story_reserve >= STORY_OWN_SHARE_FROM:  # its own share: told first
        story_message, draft.story = story_section(state, draft, min(draft.story_reserve, free))
        story_used = story_message.tokens if story_message is not None else 0
        room = draft.room + draft.reserve + extra - story_used
        summary_message = state.summary_section.build(summarized_items, summaries, scores, room, first=first)
    else:  # sharing the summaries' room (a small window): told in what they leave
        room = draft.room + draft.reserve + extra
        summary_message = state.summary_section.build(summarized_items, summaries, scores, room, first=first)
        if draft.story_reserve:
            left = free - (summary_message.tokens if summary_message is not None else 0)
            story_message, draft.story = story_section(state, draft, min(draft.story_reserve, left))
    if first:  # a quick summary the section had no room for stands in for nothing
        in_section = set(summary_message.sources) if summary_message is not None else set()
        stand_ins = {i: text for i, text in stand_ins.items() if i not in first or i in in_section}
    messages: list[ContextMessage] = []
    if system_prompt:
        messages.append(ContextMessage("system", system_prompt, (), "system", draft.system_cost))
    if draft.memory_cost:
        messages.append(ContextMessage("system", state.memory, (), "memory", draft.memory_cost))
    if draft.standing is not None:
        section = draft.standing
        messages.append(ContextMessage("system", section.text, section.sources, "standing", section.tokens))
    messages.extend(
        ContextMessage(i.role, i.text, (i.id,), "system", cost(i.tokens))
        for i in draft.fixed
        if i.role == "system"
    )
    if story_message is not None:
        messages.append(story_message)
    if summary_message is not None:
        messages.append(summary_message)
    if threads is not None:
        messages.append(threads)
    verbatim = [
        i for i in state.items if i is not new and (i.id in chosen or (i.pinned and i.role != "system"))
    ]
    if draft.cold:  # from before the cut: first in the conversation
        verbatim[:0] = [i for i in draft.cold if i.id in chosen]
    # In the conversation's order: the new message is the last, except in the preview of a
    # request already answered (the screen's "next request"), where its replies follow it.
    sent = sorted([*verbatim, new], key=lambda i: i.position)
    messages.extend(ContextMessage(i.role, i.text, (i.id,), "verbatim", cost(i.tokens)) for i in sent)
    return messages, verbatim, summary_message, stand_ins


def stand_in(state: CurationState, item: Item) -> str:
    book = state.model_summaries
    return book.stand_in(item) if book is not None else state.summarizer.summarize(item)
