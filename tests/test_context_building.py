"""The context view reuses the item and entity views of earlier plans: it must never show a stale
one. Each view built with the reuse must equal one built from scratch."""

from __future__ import annotations

from engine.chat import Role
from engine.curation import context_building
from engine.curation.context_building import build_view
from engine.curation.context_view import ContextView, Mark, Section
from engine.curation.items import ItemState
from engine.curation.result import CurationResult
from engine.curation.session_curation import SessionCuration
from engine.text.tokens import CharEstimateCounter

TOPICS = ("deploy of src/api/server.py", "lentil soup for Maya", "the invoice INV-2031", "port 5432")


def _curation() -> SessionCuration:
    curation = SessionCuration(window=1_200, counter=CharEstimateCounter())
    for n in range(23):  # the last message the user's, waiting for its reply
        topic = TOPICS[n % len(TOPICS)]
        role: Role = "user" if n % 2 == 0 else "assistant"
        text = f"Message {n} about {topic}: " + " ".join(f"detail {k} of {topic}" for k in range(12))
        curation.add_message(n + 1, role, text, len(text) // 4)
    return curation


def _view(curation: SessionCuration) -> ContextView:
    new = curation.last_user()
    assert new is not None
    return build_view(curation, curation.plan(new), new_id=new.id)


def _fresh(curation: SessionCuration) -> ContextView:
    context_building._EARLIER.pop(curation, None)
    return _view(curation)


def test_reused_views_show_every_change_the_user_makes_between_plans() -> None:
    curation = _curation()
    new = curation.last_user()
    assert new is not None
    curation.apply(curation.plan(new))  # a turn: older replies are pruned
    first = _view(curation)
    assert first == _fresh(curation)
    pruned = next(i for i in first.items if i.state is ItemState.PRUNED and i.role == "assistant")
    kept = next(i for i in first.items if i.section is Section.ACTIVE and i.role == "assistant")

    curation.restore(pruned.id)
    curation.pin(kept.id)
    curation.add_message(25, "user", "And the invoice INV-2031 again?", 8)
    after = _view(curation)

    assert after == _fresh(curation)
    by_id = {i.id: i for i in after.items}
    assert by_id[kept.id].mark is Mark.PINNED and by_id[kept.id].pinned
    assert by_id[pruned.id].state is not ItemState.PRUNED and by_id[pruned.id] != pruned
    assert after.items != first.items


def huge_reply(window: int) -> tuple[SessionCuration, CurationResult]:
    """A reply of ~4,500 tokens, more than the whole budget, then the user's next message planned."""
    curation = SessionCuration(window=window, counter=CharEstimateCounter())
    curation.add_message(1, "user", "Paste the whole log, please.", 7)
    huge = "log line " * 2_000
    curation.add_message(2, "assistant", huge, len(huge) // 4)
    new = curation.add_message(3, "user", "Thanks. What failed?", 5)
    return curation, curation.plan(new)


def test_a_reply_too_big_for_the_budget_is_sent_as_a_quick_summary_and_the_note_says_so() -> None:
    curation, result = huge_reply(1_200)
    view = build_view(curation, result, new_id=3)
    shortened = view.item(2)
    assert shortened is not None and shortened.mark is Mark.SUMMARIZED and shortened.in_prompt
    assert shortened.reason == context_building.SHORTENED
    (section,) = [m for m in result.messages if m.form == "summary"]
    assert section.sources == (2,) and "log line" in section.content
    assert result.tokens <= result.budget_tokens
    said = "1 reply did not fit whole: a quick summary of it is sent instead, in this request only."
    assert said in view.notes
    # Logged as it was, and nothing about it changed: the next plan finds it whole.
    delta = curation.apply(result)
    (logged,) = [e for e in delta.ledger if e.target == "2"]
    assert "a quick summary of it was sent in its place" in logged.reason
    assert curation.state.by_id[2].state is ItemState.ACTIVE and curation.state.by_id[2].summary is None


def test_a_reply_left_out_with_no_room_even_for_its_summary_is_said_so_in_the_singular() -> None:
    curation, result = huge_reply(60)
    view = build_view(curation, result, new_id=3)
    left_out = view.item(2)
    assert left_out is not None and left_out.mark is Mark.LEFT_OUT and not left_out.in_prompt
    assert not left_out.summary, "no summary is shown for one that is not sent"
    said = "1 message did not fit and was left out of this request only; nothing about it changed."
    assert said in view.notes
