"""Names a conversation also writes as ordinary words ("Substitute" opening sentences, "substitute"
in them) are not entities: not in the panel, the ledger or the scores; real names stay, and a word
the conversation goes on to name more often is an entity again."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.advice.advice import AdviceOutcome, AdviceSource, CuratorAdvice, Retain
from engine.chat import Role
from engine.curation.context_building import build_view
from engine.curation.ledger import EntryKind
from engine.curation.session_curation import SessionCuration
from engine.curation.session_curations import SessionCurations
from engine.curation.stored import save
from sessions.store import SqliteChatStore
from tests.curationhelpers import COUNTER, Chat
from tests.held import curation_of

OPENING = [
    "Substitute x = 2 into the first equation.",
    "Caroline asked how to check the answer.",
    "Substitute y = 5 as well, then simplify.",
    "Caroline wants the steps written out.",
]
IN_PROSE = [
    "You can substitute any value you like.",
    "We substitute both values and compare.",
    "Then substitute back to check the result.",
    "Never substitute before you simplify.",
]
SUBSTITUTE, CAROLINE = "name:substitute", "name:caroline"


def _chat(texts: list[str]) -> Chat:
    chat = Chat(window=8000)
    for number, text in enumerate(texts):
        chat.say("user" if number % 2 == 0 else "assistant", text)
    return chat


def _shown(curation: SessionCuration) -> set[str]:
    """The entity labels the context panel would list for the next request."""
    new = curation.last_user()
    assert new is not None
    view = build_view(curation, curation.plan(new), new_id=new.id)
    return {e.label for e in (*view.active, *view.retained, *view.pruned)}


def test_a_name_the_conversation_also_writes_as_a_word_is_no_entity() -> None:
    chat = _chat([*OPENING, *IN_PROSE, "Caroline says thanks."])
    curation = chat.curation
    assert curation.registry.words == {SUBSTITUTE}
    _, result = chat.ask("Substitute z = 1 and tell Caroline.")
    assert CAROLINE in result.entities
    assert SUBSTITUTE not in result.entities
    delta = curation.apply(result)
    assert not [e for e in delta.ledger if e.kind is EntryKind.ENTITY and e.target == SUBSTITUTE]
    shown = _shown(curation)
    assert "Caroline" in shown
    assert "Substitute" not in shown


def test_an_item_sharing_only_the_word_with_the_new_message_scores_nothing_for_it() -> None:
    long_ago = ["Substitute the old value first.", *[f"Note {n}: the garden needs water." for n in range(6)]]
    named, written = _chat([*long_ago, *OPENING]), _chat([*long_ago, *OPENING, *IN_PROSE])
    assert named.curation.registry.words == set()
    assert written.curation.registry.words == {SUBSTITUTE}
    for chat in (named, written):
        chat.curation.fit_window(60)  # the old message is a candidate, not sent whole anyway
    _, as_name = named.ask("Substitute it again.")
    _, as_word = written.ask("Substitute it again.")
    assert as_name.scores[1].entities > 0
    assert as_name.scores[1].recurrence > 0
    assert as_word.scores[1].entities == 0
    assert as_word.scores[1].recurrence == 0


def test_the_curator_saying_a_word_matters_gives_no_entity_credit() -> None:
    chat = _chat([*OPENING, *IN_PROSE])
    new, _ = chat.ask("What was the last step?")
    advice = CuratorAdvice(retain=(Retain(SUBSTITUTE, "the user substitutes values"),))
    guidance = chat.curation.judge(AdviceOutcome(advice, AdviceSource.STRUCTURED), new)
    assert SUBSTITUTE in guidance.retain_entities  # a ref the session's records hold
    result = chat.curation.plan(new, guidance=guidance)
    assert SUBSTITUTE not in result.entities
    assert all(score.entities == 0 for score in result.scores.values())


def test_before_the_conversation_writes_it_as_a_word_it_is_an_entity() -> None:
    chat = _chat([*OPENING, *IN_PROSE[:2]])  # two uses in prose: a heading or list could hold a name twice
    assert chat.curation.registry.words == set()
    assert "Substitute" in _shown(chat.curation)


def test_a_word_named_more_often_than_written_is_an_entity_again() -> None:
    chat = _chat([*OPENING, *IN_PROSE])
    assert chat.curation.registry.words == {SUBSTITUTE}
    for number in range(3):  # five messages name it now, four write it
        chat.say("user", f"Substitute the value {number} next.")
    assert chat.curation.registry.words == set()
    _, result = chat.ask("Substitute once more.")
    assert SUBSTITUTE in result.entities


def test_the_speakers_name_and_longer_names_are_no_evidence() -> None:
    chat = Chat(window=8000)
    curation = chat.curation
    texts = [
        "John Smith called about the invoice.",
        "The invoice from John Smith is late.",
        "John Smith said he would pay on Friday.",
        "John will call again, I think.",
    ]
    for number, text in enumerate(texts, start=1):
        curation.add_message(number, "user", text, COUNTER.count(text), name="Grace")
    for number, text in enumerate(["Grace, that sounds fine.", "Grace asked about John."], start=10):
        curation.add_message(number, "assistant", text, COUNTER.count(text), name="Bot")
    assert curation.registry.words == set()
    assert {"name:john", "name:grace"} <= set(curation.registry.records)


def test_an_offline_digest_is_no_evidence() -> None:
    chat = _chat(OPENING)
    curation = chat.curation
    for number, text in enumerate(IN_PROSE, start=100):  # digests that quote the conversation's words
        curation.add_message(number, "assistant", text, COUNTER.count(text), digest=True)
    assert curation.registry.words == set()


def test_a_reopened_session_leaves_out_the_same_words(store: SqliteChatStore) -> None:
    session = store.create_session("equations")
    curations = SessionCurations(store, COUNTER, window=lambda: 8000, system_prompt="")
    curation = curation_of(curations, session.id)
    for number, text in enumerate([*OPENING, *IN_PROSE]):
        role: Role = "user" if number % 2 == 0 else "assistant"
        message = store.add_message(session.id, role, text, tokens=COUNTER.count(text))
        item = curation.add_message(message.id, role, text, message.tokens or 0)
        if role == "user":  # saved while "Substitute" was still an entity, then after
            save(store, session.id, curation, curation.apply(curation.plan(item)))
    before = _shown(curation)
    again = curation_of(SessionCurations(store, COUNTER, window=lambda: 8000, system_prompt=""), session.id)
    assert again.registry.words == {SUBSTITUTE}
    assert _shown(again) == before
    assert "Substitute" not in before


WORDS = ["Substitute", "substitute", "Caroline", "Solve", "solve", "the", "value", "Solve the value"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1, max_size=14),
    st.randoms(),
)
def test_the_words_do_not_depend_on_the_order_of_the_messages(
    sentences: list[list[str]], shuffle: random.Random
) -> None:
    """Each message counts once whenever it comes: the verdicts after the last message are those of
    the whole conversation, whichever message named a word first."""
    texts = [". ".join(words) + "." for words in sentences]
    shuffled = texts[:]
    shuffle.shuffle(shuffled)
    assert _chat(texts).curation.registry.words == _chat(shuffled).curation.registry.words
