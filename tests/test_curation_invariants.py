"""Property tests: the curation engine's promises hold for any conversation, budget and consent policy.

Each example plays a generated conversation through :class:`SessionCuration` the way the app does
(add a message; on a user message plan, apply), interleaved with the user's own actions (pin,
unpin, restore, answer consent), and checks after every step:

* pinned items are never pruned or summarized, and are always sent verbatim;
* a user item never changes state without a consent record for it in the same step;
* the prompt fits the budget, unless pinned items plus the new message alone exceed it (flagged);
* every state change has a ledger entry saying from what to what;
* restore gives back the exact original text; nothing is ever removed from the session.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.curation.consent import ConsentChoice
from engine.curation.items import ItemState
from engine.curation.ledger import EntryKind
from engine.curation.result import CurationDelta
from engine.curation.session_curation import CurationRefused, SessionCuration
from engine.text.tokens import load_counter

COUNTER = load_counter("gpt-4o-mini")

SENTENCES = (
    "The login fails with JWTError in auth.py:42 since this morning.",
    "Let's set max_retries = 3 in config.toml and retry.",
    "I prefer tabs over spaces, always.",
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "It costs $30 and takes 20 minutes by train to Boston.",
    "ok thanks",
    "Run `pip install -e .` then `pytest -q`.",
    "The cause was an old JWT_SECRET on staging.",
    "Melanie painted a sunrise in 2022 and read “Becoming Nicole”.",
    "See https://example.com/docs/setup for the steps.",
)

texts = st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=6).map(" ".join)


@dataclass(frozen=True)
class Step:
    kind: str
    text: str = ""
    target: int = 0
    choice: ConsentChoice = ConsentChoice.KEEP


steps = st.one_of(
    texts.map(lambda t: Step("user", t)),
    texts.map(lambda t: Step("assistant", t)),
    texts.map(lambda t: Step("tool", t)),
    st.integers(0, 60).map(lambda n: Step("pin", target=n)),
    st.integers(0, 60).map(lambda n: Step("unpin", target=n)),
    st.integers(0, 60).map(lambda n: Step("restore", target=n)),
    st.integers(0, 60).map(lambda n: Step("forget", target=n)),
    st.just(Step("compact")),
    st.tuples(st.integers(0, 60), st.sampled_from(list(ConsentChoice))).map(
        lambda t: Step("answer", target=t[0], choice=t[1])
    ),
)


def check_delta(curation: SessionCuration, delta: CurationDelta, before: dict[int, ItemState]) -> None:
    consented = {e.target for e in delta.ledger if e.kind is EntryKind.CONSENT}
    logged = {(e.target, e.before, e.after) for e in delta.ledger if e.kind is EntryKind.OPERATION}
    for item in curation.items:
        old = before[item.id]
        if item.state is old:
            continue
        assert (str(item.id), old.value, item.state.value) in logged, f"unlogged change of {item.id}"
        if item.user_owned and item.state is not ItemState.ACTIVE:
            assert str(item.id) in consented, f"user item {item.id} changed without consent"
    for item in curation.items:
        if item.pinned:
            assert item.state is ItemState.ACTIVE, f"pinned item {item.id} is {item.state}"


KEPT_LOGIN = "The login fails with JWTError in auth.py:42 since this morning."


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(  # a message the user chose to keep whole takes the next request past a small budget
    script=[
        Step("user", " ".join([KEPT_LOGIN] * 6)),
        Step("answer", target=0, choice=ConsentChoice.KEEP),
        Step("user", " ".join([KEPT_LOGIN] * 3)),
    ],
    window=200,
    policy=None,
    stored=False,
)
@example(  # the recent turns do not all fit: the user's paste goes before the reply after it
    script=[
        Step("user", KEPT_LOGIN),
        Step("user", " ".join([KEPT_LOGIN] * 4)),
        Step("assistant", KEPT_LOGIN),
        Step("user", " ".join([KEPT_LOGIN] * 3)),
    ],
    window=200,
    policy=None,
    stored=False,
)
@given(
    script=st.lists(steps, min_size=1, max_size=40),
    window=st.integers(200, 3000),
    policy=st.sampled_from([None, *ConsentChoice]),
    stored=st.booleans(),
)
def test_the_engines_promises_hold(
    script: list[Step], window: int, policy: ConsentChoice | None, stored: bool
) -> None:
    curation = SessionCuration(window=window, counter=COUNTER, policy=policy)
    originals: dict[int, str] = {}
    if stored:  # as in the app: items not sent verbatim let go of their texts and read them back
        curation.state.text_source = originals.__getitem__
    next_id = 1
    for step in script:
        before = {i.id: i.state for i in curation.items}
        ids = [i.id for i in curation.items]
        delta: CurationDelta | None = None
        if step.kind in ("user", "assistant", "tool"):
            item = curation.add_message(next_id, step.kind, step.text, COUNTER.count(step.text))  # type: ignore[arg-type]
            originals[next_id] = step.text
            next_id += 1
            before[item.id] = item.state
            if step.kind == "user":
                result = curation.plan(item)
                sent = [m for m in result.messages]
                verbatim = {s for m in sent if m.form == "verbatim" for s in m.sources}
                # Pins are always sent verbatim; the new message is always last.
                assert all(i.id in verbatim for i in curation.items if i.pinned)
                # What the user told Heedful to forget stays out until they restore it.
                assert not any(curation.by_id[i].forgotten for i in verbatim)
                assert sent[-1].sources == (item.id,) and sent[-1].content == step.text
                # Verbatim means verbatim: the original text, unchanged.
                for message in sent:
                    if message.form == "verbatim":
                        assert message.content == originals[message.sources[0]]
                # Only what the user chose to keep whole may take a request past the budget, and
                # then the request says which messages do.
                if not result.over_budget and not result.past_budget:
                    assert result.tokens <= result.budget_tokens
                assert all(curation.by_id[i].kept_by_user for i in result.past_budget)
                for op in result.operations:
                    assert not curation.by_id[op.target].pinned, "an operation touched a pinned item"
                # In the recent turns the user's words go before the replies: a reply sent whole
                # never took the room of a message of theirs that is left out.
                recent = [
                    i
                    for i in curation.items
                    if i.turn >= result.recent_from
                    and i is not item
                    and not i.pinned
                    and i.state is ItemState.ACTIVE
                ]
                yours_out = [i.tokens for i in recent if i.user_owned and i.id in result.left_out]
                replies_in = [i.tokens for i in recent if not i.user_owned and i.id in verbatim]
                if yours_out and replies_in:
                    assert max(replies_in) < min(yours_out)
                delta = curation.apply(result)
        elif ids:
            target = ids[step.target % len(ids)]
            if step.kind == "pin":
                delta = curation.pin(target)
            elif step.kind == "unpin":
                delta = curation.pin(target, pinned=False)
            elif step.kind == "restore":
                delta = curation.restore(target)
                assert curation.by_id[target].state is ItemState.ACTIVE
                assert curation.by_id[target].text == originals[target]
            elif step.kind == "forget":
                if curation.by_id[target].pinned:
                    with pytest.raises(CurationRefused):
                        curation.forget(target)
                else:
                    delta = curation.forget(target)
                    assert curation.by_id[target].state is ItemState.PRUNED
            elif step.kind == "compact":
                delta, request = curation.compact()
                # Asked about, not changed: the user's messages wait for the answer.
                for asked in request.items if request else ():
                    assert curation.by_id[asked.item_id].state is before[asked.item_id]
            else:
                delta = curation.answer_consent({target: step.choice})
        if delta is not None:
            check_delta(curation, delta, before)
        # Nothing is ever removed, and originals never change.
        assert [i.id for i in curation.items] == sorted(originals)
        assert all(i.text == originals[i.id] for i in curation.items)
