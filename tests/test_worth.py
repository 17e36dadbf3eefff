"""The room is shared: what else a request carries is ranked by worth (score per square root of
cost), so a long reply that shares the question's words does not crowd out the short message
that answers it, while among short messages relevance alone decides."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.curation.choosing import SHORT_COST, worth
from engine.curation.result import cost
from tests.curationhelpers import Chat, garden, sent

TRAILS = ("Cedar", "Falcon", "Juniper", "Otter", "Granite", "Willow", "Heron", "Aspen")


def advice(turn: int, sentences: int) -> str:
    """A long reply that shares the question's words throughout, and answers nothing."""
    return " ".join(
        f"Trail advice {turn}.{k}: which trail you hike depends on the weather, the season and your boots."
        for k in range(sentences)
    )


@pytest.mark.parametrize("sentences", [8, 12, 24])
def test_short_answers_are_not_crowded_out_by_long_replies_that_share_the_question_words(
    sentences: int,
) -> None:
    chat = Chat()
    answers, long_replies = [], []
    for turn, trail in enumerate(TRAILS):
        chat.say("user", "And then?")
        answers.append(chat.say("assistant", f"You hiked the {trail} trail yesterday."))
        if turn % 3 == 0:
            chat.say("user", "Advice?")
            long_replies.append(chat.say("assistant", advice(turn, sentences)))
    for turn in range(6):
        chat.say("user", f"Tell me about the garden {turn}?")
        chat.say("assistant", garden(turn))

    _, result = chat.ask("Which trail did I hike?")

    # Each long reply scores above each answer (more of the question's words) ...
    scores = result.scores
    assert min(scores[r.id].total for r in long_replies) > max(scores[a.id].total for a in answers)
    # ... yet all eight answers reach the model, in what room the budget has.
    assert {a.id for a in answers} <= sent(result)
    assert result.tokens <= result.budget_tokens
    assert not {r.id for r in long_replies} <= sent(result)  # the room could not hold everything


@given(
    score=st.floats(min_value=0.01, max_value=10.0),
    one=st.integers(min_value=0, max_value=SHORT_COST),
    other=st.integers(min_value=0, max_value=SHORT_COST),
)
def test_being_short_earns_no_more_below_the_short_cost(score: float, one: int, other: int) -> None:
    small = [t for t in (one, other) if cost(t) <= SHORT_COST]
    assert len({worth(score, t) for t in small}) <= 1


@given(
    score=st.floats(min_value=0.01, max_value=10.0),
    tokens=st.integers(min_value=SHORT_COST, max_value=100_000),
    extra=st.integers(min_value=1, max_value=100_000),
)
def test_a_longer_message_must_score_higher_to_rank_as_high(score: float, tokens: int, extra: int) -> None:
    assert worth(score, tokens + extra) < worth(score, tokens)
    # ... but relevance stays first: a little over twice the score outranks four times the cost.
    assert worth(score * 2.01, (cost(tokens) * 4) - cost(0)) > worth(score, tokens)
