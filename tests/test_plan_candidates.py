"""A long session's plan chooses from candidates (engine.curation.candidates), never at the cost of
what must be sent: pinned and system items, the new message, the recent turns, the user's own
messages (changed only with consent) and what they kept. Property tests, with the candidate limits
made small so that a few dozen messages are "long"."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.curation import candidates as candidates_module
from engine.curation.candidates import narrow
from engine.curation.items import Item, ItemState
from engine.curation.operations import OpKind
from engine.curation.prompt import REPLY_PRIMING_TOKENS
from engine.curation.result import CurationResult, cost
from engine.curation.session_curation import RECENT_TURNS, SessionCuration
from engine.text.tokens import load_counter
from tests.curation_words import Say, word_texts

COUNTER = load_counter("gpt-4o-mini")
texts = word_texts(40)


@dataclass(frozen=True)
class Shape:
    state: ItemState
    kept: bool
    forgotten: bool
    pinned: bool
    score: float


shapes = st.builds(
    Shape,
    state=st.sampled_from(list(ItemState)),
    kept=st.booleans(),
    forgotten=st.booleans(),
    pinned=st.booleans(),
    score=st.floats(0, 1, allow_nan=False),
)


@given(
    st.lists(shapes, max_size=80),
    st.integers(0, 40),
    st.integers(1, 30),
    st.integers(0, 20),
)
def test_narrowing_keeps_what_a_plan_must_see_and_the_best(
    session: list[Shape], floor: int, top: int, latest: int
) -> None:
    items = [
        Item(
            id=n + 1,
            role="user",
            held_text="x",
            tokens=1,
            turn=1,
            position=n,
            state=s.state,
            kept_by_user=s.kept,
            forgotten=s.forgotten,
            pinned=s.pinned,
        )
        for n, s in enumerate(session)
    ]
    totals = {i.id: s.score for i, s in zip(items, session, strict=True)}
    kept = narrow(items, totals, session_size=len(items), floor=floor, top=top, latest=latest)
    kept_ids = [i.id for i in kept]
    assert kept_ids == sorted(kept_ids)  # in conversation order, each once
    assert set(kept_ids) <= set(totals)
    if len(items) <= floor:
        assert kept == items
        return
    best = sorted(totals.values(), reverse=True)[: min(top, len(items))]
    for item in items:
        must = (
            item.state is ItemState.ACTIVE
            or item.kept_by_user
            or item.forgotten
            or item.pinned
            or item.position >= len(items) - latest
            or totals[item.id] >= best[-1]
        )
        assert (item.id in kept_ids) == must


says = st.builds(
    Say, role=st.sampled_from(["user", "assistant", "assistant", "system"]), text=texts, pin=st.booleans()
)


def play(script: list[Say], window: int, last: str) -> tuple[SessionCuration, CurationResult]:
    """``script`` through the engine as the app plays it (each user message planned and the plan
    applied), then a plan for ``last``."""
    curation = SessionCuration(window=window, counter=COUNTER)
    for n, say in enumerate([*script, Say("user", last)], start=1):
        item = curation.add_message(n, say.role, say.text, COUNTER.count(say.text))  # type: ignore[arg-type]
        if say.pin and say.role != "system" and item.tokens < curation.budget.tokens // 20:
            curation.pin(item.id)
        if say.role == "user" and n <= len(script):
            curation.apply(curation.plan(item))
    return curation, curation.plan(curation.items[-1])


def _said(role: str, pin: bool, *texts: str) -> list[Say]:
    return [Say(role=role, text=text, pin=pin) for text in texts]


def _words(*counts: tuple[int, int]) -> str:
    """So many "deploy"s, then so many "JWTError"s, for each pair."""
    return " ".join(" ".join(["deploy"] * d + ["JWTError"] * j) for d, j in counts)


TIGHT_WITH_A_THREAD = (
    [
        *_said("user", True, *["deploy"] * 7),
        *_said("assistant", False, "JWTError"),
        *_said("user", True, "JWTError", _words((2, 1)), _words((5, 0)), _words((5, 0)), _words((5, 2))),
        *_said("user", True, _words((9, 2)), _words((12, 0))),
        *_said("user", False, "invoice", "deploy deploy port 5432"),
        *_said("assistant", False, "deploy deploy", "deploy garden deploy", "JWTError"),
        *_said("system", False, "Maya port 5432", "port 5432 port 5432"),
        *_said("assistant", False, _words((4, 0)), _words((13, 1))),
    ],
    400,
    _words((13, 0)),
)
"""A budget smaller than the rooms set aside (the summaries', the debugging threads'): the sections
together once took the request past it."""


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(says, min_size=10, max_size=50), st.integers(400, 3_000), texts)
@example(*TIGHT_WITH_A_THREAD)
def test_a_plan_from_candidates_sends_what_must_be_sent_within_the_budget(
    script: list[Say], window: int, last: str
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(candidates_module, "CANDIDATE_FLOOR", 3)
        patch.setattr(candidates_module, "TOP", 2)
        patch.setattr(candidates_module, "LATEST", 1)
        curation, result = play(script, window, last)
    new = curation.items[-1]
    sent = {s for m in result.messages if m.form in ("verbatim", "system") for s in m.sources}
    assert new.id in sent
    for item in curation.items:
        if item.pinned or item.role == "system":
            assert item.id in sent, f"{item.label} is pinned or a system message"
    if not result.over_budget and not result.past_budget:
        assert result.tokens <= result.budget_tokens
    # The recent turns go in full while they fit, newest first: the newest one surely does when
    # it fits in the room the always-sent parts (pins, system messages, the new one) leave.
    fixed = [i for i in curation.items if i.pinned or i.role == "system" or i is new]
    room = result.budget_tokens - REPLY_PRIMING_TOKENS - sum(cost(i.tokens) for i in fixed)
    room -= sum(m.tokens for m in result.messages if m.form == "memory")
    recent = [
        i
        for i in curation.items
        if i.turn >= new.turn - RECENT_TURNS and i not in fixed and i.state is ItemState.ACTIVE
    ]
    if recent and cost(recent[-1].tokens) <= room:
        assert recent[-1].id in sent
    # Every active message is sent, or the plan says what becomes of it (not one forgotten).
    decided = {o.target for o in result.operations} | set(result.left_out) | set(result.past_budget)
    summarized = {s for m in result.messages if m.form == "summary" for s in m.sources}
    for item in curation.items:
        if item.state is ItemState.ACTIVE and item.id not in sent:
            assert item.id in decided | summarized, f"{item.label} is active, not sent, not decided"
    # The user's own messages change only with their consent (none was given here).
    for operation in result.operations:
        if operation.op in (OpKind.TRANSFORM, OpKind.PRUNE):
            assert curation.by_id[operation.target].role != "user"
