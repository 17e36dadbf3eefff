"""The consent promise as a property: for any sequence of turns, budgets and answers, each of the
user's messages is in the request verbatim, unless the ledger holds the user's own answer that
takes it out (attach, summarize, remove), or a question about it is pending and the panel says so."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.curation.consent import ConsentChoice
from engine.curation.context_building import SHOWN, build_view
from engine.curation.ledger import EntryKind
from engine.curation.session_curation import SessionCuration
from engine.curation.stored import save
from engine.text.tokens import load_counter
from sessions.store import SqliteChatStore

COUNTER = load_counter("gpt-4")
TOPICS = ("harbour", "violin", "glacier", "orchard")


def text(topic: str, sentences: int) -> str:
    return " ".join(f"The {topic} note {i} says {topic}{i} matters." for i in range(sentences))


turn_strategy = st.tuples(
    st.sampled_from(TOPICS),
    st.integers(min_value=1, max_value=160),  # the user's message: ~10 to ~1,600 tokens
    st.integers(min_value=1, max_value=40),  # the reply
    st.lists(st.sampled_from(list(ConsentChoice)), max_size=3),  # answers to what is asked, if any
    st.booleans(),  # pin the message
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    window=st.integers(min_value=500, max_value=4000),
    turns=st.lists(turn_strategy, min_size=1, max_size=10),
)
def test_a_user_message_is_sent_unless_the_user_answered_or_is_being_asked(
    window: int, turns: list[tuple[str, int, int, list[ConsentChoice], bool]]
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        store = SqliteChatStore(Path(scratch) / "p.db")
        try:
            session = store.create_session("property")
            curation = SessionCuration(window=window, counter=COUNTER)

            def add(role: str, content: str) -> int:
                stored = store.add_message(session.id, role, content, tokens=COUNTER.count(content))  # type: ignore[arg-type]
                curation.add_message(stored.id, stored.role, content, stored.tokens or 0)
                return stored.id

            for topic, size, reply_size, answers, pin in turns:
                new_id = add("user", text(topic, size))
                if pin and curation.pin_verdict(new_id).outcome.value == "allowed":
                    save(store, session.id, curation, curation.pin(new_id))
                result = curation.plan(curation.by_id[new_id])
                save(store, session.id, curation, curation.apply(result))
                sent = {s for m in result.messages if m.form == "verbatim" for s in m.sources}
                view = build_view(curation, result, new_id=new_id)
                asked = result.asked_left_out
                named = " ".join(view.alerts)
                took_out = {
                    int(e.target)
                    for e in store.ledger(session.id)
                    if e.kind is EntryKind.CONSENT
                    and e.reason == "answered by you"
                    and e.action != ConsentChoice.KEEP.value
                }
                for item in curation.items:
                    if item.role != "user" or item.id in sent or item.id in took_out:
                        continue
                    assert item.id in asked, f"#{item.id} left out quietly"
                    # The panel says it: by name for the first few, counted for the rest.
                    assert f"Your message #{item.id} " in named or (
                        len(asked) > SHOWN and "more of your" in named
                    )
                add("assistant", text("reply", reply_size))
                if result.consent is not None and answers:
                    chosen = {
                        question.item_id: choice
                        for question, choice in zip(result.consent.items, answers, strict=False)
                        if choice in question.choices
                    }
                    save(store, session.id, curation, curation.answer_consent(chosen))
        finally:
            store.close()
