"""Property tests: what README says is always sent is sent, for any conversation and budget, and
the panel's marks and picture say what the request really carries.

README: system messages, pinned messages and the new message are always sent, whole; the last
two turns go in full before anything older, while they fit (the user's first, then the replies,
each newest first). A message is marked "summarized" only when the request carries its summary;
the picture's parts add up to the request's tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.curation.context_building import SHORTENED, build_view, unscored_reason
from engine.curation.context_view import ContextView, Mark
from engine.curation.items import ItemState
from engine.curation.prompt import REPLY_PRIMING_TOKENS
from engine.curation.result import CurationResult, cost
from engine.curation.session_curation import RECENT_TURNS, SessionCuration
from engine.text.tokens import load_counter
from tests.curation_words import Say, word_texts

COUNTER = load_counter("gpt-4o-mini")

texts = word_texts(60)


says = st.builds(
    Say,
    role=st.sampled_from(["user", "assistant", "assistant", "tool", "system"]),
    text=texts,
    pin=st.booleans(),
)


@dataclass
class Played:
    curation: SessionCuration
    result: CurationResult
    view: ContextView
    new_id: int


def play(script: list[Say], window: int, last: str) -> Played:
    """``script`` through the engine as the app plays it (a plan and its decisions on each user
    message), pins within what the engine allows, then a plan for ``last``."""
    curation = SessionCuration(window=window, counter=COUNTER)
    next_id = 1
    for say in [*script, Say("user", last)]:
        item = curation.add_message(next_id, say.role, say.text, COUNTER.count(say.text))  # type: ignore[arg-type]
        next_id += 1
        if say.pin and say.role != "system":
            pinned = sum(cost(i.tokens) for i in curation.items if i.pinned)
            if pinned + cost(item.tokens) <= curation.budget.tokens // 3:
                curation.pin(item.id)
        if say.role == "user" and next_id <= len(script) + 1:
            curation.apply(curation.plan(item))
    new = curation.items[-1]
    result = curation.plan(new)
    return Played(curation, result, build_view(curation, result, new_id=new.id), new.id)


def verbatim(result: CurationResult) -> set[int]:
    return {s for m in result.messages if m.form in ("verbatim", "system") for s in m.sources}


def summarized(result: CurationResult) -> set[int]:
    return {s for m in result.messages if m.form == "summary" for s in m.sources}


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
scripts = st.lists(says, min_size=0, max_size=24)
windows = st.integers(300, 4000)


@SETTINGS
@given(script=scripts, window=windows, last=texts)
def test_system_messages_are_always_sent_whole(script: list[Say], window: int, last: str) -> None:
    played = play(script, window, last)
    system = [i for i in played.curation.items if i.role == "system"]
    sent = {m.sources[0]: m.content for m in played.result.messages if m.form == "system" and m.sources}
    for item in system:
        assert sent.get(item.id) == item.text, f"system message {item.id} not sent whole"


@SETTINGS
@given(script=scripts, window=windows, last=texts)
def test_pinned_messages_are_always_sent_whole(script: list[Say], window: int, last: str) -> None:
    played = play(script, window, last)
    for item in played.curation.items:
        if item.pinned:
            assert item.id in verbatim(played.result), f"pinned {item.id} not sent"
            assert played.view.item(item.id).mark is Mark.PINNED  # type: ignore[union-attr]


@SETTINGS
@given(script=scripts, window=windows, last=texts)
def test_the_new_message_is_always_sent_whole_and_last(script: list[Say], window: int, last: str) -> None:
    played = play(script, window, last)
    final = played.result.messages[-1]
    assert final.sources == (played.new_id,) and final.content == last and final.form == "verbatim"


@SETTINGS
@given(script=scripts, window=windows, last=texts)
def test_the_last_two_turns_go_in_full_before_anything_older(
    script: list[Say], window: int, last: str
) -> None:
    """Each message of the last two turns (that the user has not summarized or forgotten) is sent in
    full, or is larger than the room the always-sent parts and the recent messages before it in
    order left: the user's first, then the replies, each newest first."""
    played = play(script, window, last)
    curation, result = played.curation, played.result
    sent = verbatim(result)
    turn = curation.by_id[played.new_id].turn
    room = curation.budget.tokens - REPLY_PRIMING_TOKENS
    fixed = [i for i in curation.items if i.pinned or i.role == "system" or i.id == played.new_id]
    room -= sum(cost(i.tokens) for i in fixed) + sum(m.tokens for m in result.messages if m.form == "memory")
    recent = [
        i
        for i in curation.items
        if i.turn >= turn - RECENT_TURNS and i.state is ItemState.ACTIVE and i not in fixed
    ]
    for item in sorted(reversed(recent), key=lambda i: i.role != "user"):  # as README says
        if cost(item.tokens) <= room:
            assert item.id in sent, f"recent message {item.id} fits but is not sent"
            room -= cost(item.tokens)
        else:
            assert item.id not in sent and item.id in result.left_out
            shown = played.view.item(item.id)
            assert shown is not None
            # Not sent, or (a reply, never the user's words) sent as a quick summary instead.
            if shown.in_prompt:
                assert item.role != "user" and item.id in summarized(result)
                assert shown.mark is Mark.SUMMARIZED and shown.reason == SHORTENED


@SETTINGS
@given(script=scripts, window=windows, last=texts)
def test_a_mark_is_shown_only_for_the_form_the_request_carries(
    script: list[Say], window: int, last: str
) -> None:
    played = play(script, window, last)
    in_summary, whole = summarized(played.result), verbatim(played.result)
    for item in played.view.items:
        if item.mark is Mark.SUMMARIZED:
            assert item.id in in_summary, f"#{item.id} marked summarized, but no summary of it is sent"
        assert item.sent_in_full == (item.id in whole), f"#{item.id} {item.mark} but sent: {item.id in whole}"
        assert item.in_prompt == (item.id in whole or item.id in in_summary)


@SETTINGS
@given(script=scripts, window=windows, last=texts)
def test_the_pictures_parts_add_up_to_the_requests_tokens(script: list[Say], window: int, last: str) -> None:
    view = play(script, window, last).view
    assert sum(p.tokens for p in view.parts) == view.tokens
    assert all(p.tokens > 0 for p in view.parts)
    assert view.fraction == view.tokens / view.budget


@SETTINGS
@given(script=scripts, window=windows, last=texts)
def test_why_a_message_is_unscored_is_true_of_it(script: list[Say], window: int, last: str) -> None:
    played = play(script, window, last)
    turn = played.curation.by_id[played.new_id].turn
    assert played.result.recent_from == turn - RECENT_TURNS  # the new message, not yet answered
    for item in played.curation.items:
        if played.result.scores.get(item.id) is not None:
            continue
        why = unscored_reason(item, played.new_id, played.result.recent_from)
        assert ("pinned" in why) == (item.pinned and item.id != played.new_id)
        if "last 2 turns" in why:
            assert item.turn >= turn - RECENT_TURNS and not item.pinned
        assert "always sent" not in why or item.pinned or item.role == "system" or item.id == played.new_id
