"""Model summaries in the plan: an item waits as it is until its summary exists, then uses it."""

from __future__ import annotations

from engine.curation.consent import ConsentChoice
from engine.curation.items import Item, ItemState
from engine.curation.operations import OpKind
from engine.curation.session_curation import SessionCuration
from engine.summaries.book import SummaryBook
from engine.summaries.model import StoredSummary, SummaryLevel, SummaryRequest
from engine.text.tokens import load_counter

COUNTER = load_counter("gpt-4o-mini")
DETAIL = (
    "We decided to deploy the billing service from deploy.sh on Friday 14 March at 02:00 UTC. "
    "The migration failed with ECONNREFUSED on port 5432 because db-stage-2 was down. "
)


def session(window: int = 1_200) -> tuple[SessionCuration, SummaryBook]:
    """Twelve turns; the replies carry details worth summarizing rather than pruning."""
    curation = SessionCuration(window=window, counter=COUNTER)
    book = curation.state.model_summaries = SummaryBook(SummaryLevel.DETAILED)
    for turn in range(12):
        base = 2 * turn + 1
        question = f"What did we decide about deploy.sh and db-stage-2? (question {turn})"
        curation.add_message(base, "user", question, COUNTER.count(question))
        answer = DETAIL * 3
        curation.add_message(base + 1, "assistant", answer, COUNTER.count(answer))
    return curation, book


def turn(curation: SessionCuration, text: str) -> Item:
    new = curation.add_message(max(curation.by_id) + 1, "user", text, COUNTER.count(text))
    curation.apply(curation.plan(new))
    return new


def written(request: SummaryRequest, text: str) -> StoredSummary:
    return StoredSummary(request.source_id, request.level, request.hash, text, "fake-model")


def test_an_item_waits_as_it_is_with_a_quick_summary_standing_in_until_the_models_arrives() -> None:
    curation, book = session()
    new = curation.add_message(100, "user", "And what about deploy.sh on Friday?", 12)
    result = curation.plan(new)
    curation.apply(result)

    assert result.stand_ins, "on this budget some replies want summaries"
    section = next(m for m in result.messages if m.form == "summary")
    # A quick summary stands in for it meanwhile; the item stays as it was.
    waiting = next(i for i in section.sources if i in result.stand_ins)
    assert curation.by_id[waiting].state is ItemState.ACTIVE
    requests = {r.source_id: r for r in book.take_wanted()}
    assert set(result.stand_ins) <= set(requests)
    request = requests[waiting]
    assert {"deploy.sh", "ECONNREFUSED"} <= set(request.entities)
    assert request.entities == tuple(dict.fromkeys(m.label for m in curation.by_id[waiting].mentions))
    assert book.take_wanted() == []  # asked once, not every turn while it is written

    model_text = (
        "Billing deploys from deploy.sh on Friday 14 March 02:00 UTC; db-stage-2 (ECONNREFUSED) failed it."
    )
    curation.adopt_summary(written(request, model_text), "fake-model")
    after = curation.add_message(101, "user", "And what about deploy.sh on Friday, again?", 12)
    result = curation.plan(after)
    curation.apply(result)
    transform = next(op for op in result.operations if op.target == waiting)
    assert transform.op is OpKind.TRANSFORM
    assert curation.by_id[waiting].summary == model_text
    assert curation.by_id[waiting].state is ItemState.SUMMARIZED


def test_when_the_model_cannot_write_a_summary_the_offline_one_takes_its_place() -> None:
    curation, book = session()
    new = curation.add_message(100, "user", "And what about deploy.sh on Friday?", 12)
    curation.apply(curation.plan(new))
    requests = book.take_wanted()
    for request in requests:
        book.failed(request)
    after = curation.add_message(101, "user", "And what about deploy.sh on Friday, again?", 12)
    result = curation.plan(after)
    curation.apply(result)
    transformed = {op.target for op in result.operations if op.op is OpKind.TRANSFORM}
    assert transformed & {r.source_id for r in requests}
    assert not set(result.stand_ins) & transformed
    for item_id in transformed:
        summary = curation.by_id[item_id].summary
        assert summary is not None and "deploy.sh" in summary


def test_a_summary_of_text_that_changed_since_is_not_used() -> None:
    curation, book = session()
    new = curation.add_message(100, "user", "And what about deploy.sh on Friday?", 12)
    curation.apply(curation.plan(new))
    request = book.take_wanted()[0]
    stale = StoredSummary(request.source_id, request.level, "0" * 32, "Stale words.", "fake-model")
    book.add(stale)
    assert book.written(curation.by_id[request.source_id]) is None


def test_a_summary_the_user_asked_for_is_quick_now_and_rewritten_by_the_model_later() -> None:
    curation, book = session(window=100_000)
    pasted = "Here are my notes from the incident: " + DETAIL * 2
    user_item = curation.add_message(300, "user", pasted, COUNTER.count(pasted))
    delta = curation.answer_consent({user_item.id: ConsentChoice.SUMMARIZE})
    assert user_item.state is ItemState.SUMMARIZED
    quick = user_item.summary
    assert quick  # the user asked now: an offline summary at once
    (request,) = [r for r in book.take_wanted() if r.source_id == user_item.id]
    model_text = "The user asked what was decided about deploy.sh and db-stage-2."
    delta = curation.adopt_summary(written(request, model_text), "fake-model")
    assert user_item.summary == model_text != quick
    assert delta.items == (user_item,)
    (entry,) = delta.ledger
    assert entry.reason.startswith("summary rewritten by fake-model")


def test_a_message_too_short_for_a_model_summary_to_pay_gets_the_offline_one_at_once() -> None:
    # A one-line reply: a model call of a few hundred tokens to save a handful is not made.
    curation, book = session()
    short = "Yes: deploy.sh runs at 02:00 UTC on db-stage-2."
    item = curation.add_message(200, "assistant", short, COUNTER.count(short))
    summary = book.ready(item)
    assert summary is not None and "deploy.sh" in summary and "db-stage-2" in summary
    book.want(item)
    assert not book.is_waiting(item.id) and not book.take_wanted()


def test_a_stand_in_follows_the_items_text() -> None:
    """The stand-in carried while a model summary is written is the offline summary of the item's
    text as it is now: an edited message is not stood in for by what it said before."""
    book = SummaryBook(SummaryLevel.DETAILED)
    item = Item(id=1, role="assistant", held_text=DETAIL, tokens=COUNTER.count(DETAIL), turn=1, position=0)
    first = book.stand_in(item)
    assert first == book.stand_in(item) == book.fallback.summarize(item)
    item.held_text = "The cron job on web-3 was moved to Sunday at 04:00 UTC after the outage. " * 3
    assert book.stand_in(item) == book.fallback.summarize(item) != first
