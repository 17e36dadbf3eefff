"""The offline summarizer: shorter than its source, event sentences kept verbatim, no entity lost."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.curation.consent import ConsentChoice
from engine.curation.items import Item
from engine.curation.session_curation import SessionCuration
from engine.entities.extractor import extract_entities
from engine.summaries.offline import ExtractiveSummarizer
from engine.text.tokens import load_counter

COUNTER = load_counter("gpt-4o-mini")
SENTENCES = (
    "The login fails with JWTError in auth.py:42 since this morning.",
    "We decided to move the cron job to 03:00 UTC.",
    "Honestly the weather was lovely and we just walked around for a while.",
    "Maya flew to Lisbon on 3 March 2024 with her colleague Tomás.",
    "It was nice to catch up, talk soon!",
    "Set max_connections = 200 in postgresql.conf and restart with `systemctl restart postgresql`.",
    "I prefer short answers with code first.",
    "The docs at https://example.com/guide explain the OAuth flow in detail.",
    "We read “Becoming Nicole” in our book club and it took about 6 weeks.",
)


def item_for(text: str) -> object:
    curation = SessionCuration(window=8000, counter=COUNTER)
    return curation.analyse(1, "assistant", text, COUNTER.count(text))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=12))
def test_a_summary_keeps_every_entity_of_its_source(sentences: list[str]) -> None:
    text = " ".join(sentences)
    item = item_for(text)
    summary = ExtractiveSummarizer().summarize(item)  # type: ignore[arg-type]
    for mention in extract_entities(text):
        assert mention.label in summary, mention


def test_a_summary_of_a_long_message_is_much_shorter_and_keeps_decisions_verbatim() -> None:
    text = " ".join(SENTENCES * 3)
    summary = ExtractiveSummarizer().summarize(item_for(text))  # type: ignore[arg-type]
    assert len(summary) < len(text) * 0.6
    assert "We decided to move the cron job to 03:00 UTC." in summary
    assert "walked around for a while" not in summary


def test_a_source_with_thousands_of_entities_is_summarized_quickly_and_keeps_them_all() -> None:
    # Short sentences, each naming a new file: ranking every sentence against every entity took
    # 2.25 s at this size (12.7 s at 1 MB) before ranking was bounded.
    text = " ".join(f"See f{n}.py." for n in range(18_000))
    item = item_for(text)
    started = time.process_time()
    summary = ExtractiveSummarizer().summarize(item)  # type: ignore[arg-type]
    assert time.process_time() - started < 1.0
    assert all(mention.label in summary for mention in item.mentions)  # type: ignore[attr-defined]


class _Counted:
    """The offline summarizer, counting the summaries it writes."""

    def __init__(self) -> None:
        self.written = 0
        self._inner = ExtractiveSummarizer()

    def summarize(self, item: Item) -> str:
        self.written += 1
        return self._inner.summarize(item)


def _talk(curation: SessionCuration, texts: list[tuple[str, str]], first_id: int = 1) -> Item:
    """Add the exchanges ``texts``, each user message planned and applied; returns the last one's item."""
    new = None
    for n, (question, answer) in enumerate(texts):
        new = curation.add(curation.analyse(first_id + 2 * n, "user", question, COUNTER.count(question)))
        curation.apply(curation.plan(new))
        curation.add(curation.analyse(first_id + 2 * n + 1, "assistant", answer, COUNTER.count(answer)))
    assert new is not None
    return new


def test_a_turn_that_demotes_many_items_finds_their_summaries_written_ahead() -> None:
    """The next request's preview writes the summaries of the active items; a turn that demotes
    many of them at once (a new subject, a long message) writes none itself, and sends the same
    summaries."""
    deploy = [
        (
            f"Why did deploy {n} of billing fail?",
            f"Deploy {n} failed with ConnectionRefusedError in pool.py. " * 6,
        )
        for n in range(8)
    ]
    counted = _Counted()
    curation = SessionCuration(
        window=1_500, counter=COUNTER, policy=ConsentChoice.SUMMARIZE, summarizer=counted
    )
    _talk(curation, deploy)
    curation.prepare_summaries()  # as the preview after each turn does
    written = counted.written

    # Long, and about the deploys from another side: the replies still matter, and no longer fit.
    text = "Could the billing deploy failures come from the pool.py retry loop instead? " * 20
    new = curation.add(curation.analyse(100, "user", text, COUNTER.count(text)))
    plan = curation.plan(new)
    assert len(plan.new_summaries) >= 4
    assert counted.written == written  # ...with the summaries written ahead
    fresh = ExtractiveSummarizer()
    assert plan.new_summaries == {i: fresh.summarize(curation.by_id[i]) for i in plan.new_summaries}
