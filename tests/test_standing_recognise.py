"""Standing instructions, preferences and decisions recognised in the user's words (issue 36):
examples and non-examples, and the invariants of recognition and supersession."""

from __future__ import annotations

import random
import re
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.standing import recognise as recognising
from engine.standing.book import StandingBook, about
from engine.standing.recognise import StandingKind, recognise
from engine.standing.subjects import NameIndex, overlaps

STANDING = [
    ("from now on answer in French", StandingKind.INSTRUCTION, "language"),
    ("Always use metric units.", StandingKind.INSTRUCTION, "units"),
    ("I prefer pytest over unittest", StandingKind.PREFERENCE, "test framework"),
    ("we decided to use PostgreSQL, not MySQL", StandingKind.DECISION, "database"),
    ("don't use emojis", StandingKind.INSTRUCTION, None),
    ("actually, switch to SQLite", StandingKind.DECISION, "database"),
    ("Could you answer in French from now on?", StandingKind.INSTRUCTION, "language"),
    ("Please always cite your sources.", StandingKind.INSTRUCTION, None),
    ("Going forward, use British spelling.", StandingKind.INSTRUCTION, None),
    ("I'd rather you used type hints everywhere.", StandingKind.PREFERENCE, None),
    ("I like Vim better than Emacs.", StandingKind.PREFERENCE, None),
    ("We'll go with FastAPI.", StandingKind.DECISION, "web framework"),
    ("Stop apologizing.", StandingKind.INSTRUCTION, None),
    ("Never use semicolons in JavaScript.", StandingKind.INSTRUCTION, None),  # JavaScript qualifies
    ("Let's stick with Poetry.", StandingKind.DECISION, "package manager"),
]

NOT_STANDING = [
    "answer this in French",  # a one-off request
    "Can you answer in French?",  # a question
    "Do you always use metric units?",
    "why did we move off Postgres?",
    "```\n# always use tabs\nfrom now on = 1\n```",  # code
    "Run `always use tabs` please",  # inline code
    'The README says "always use tabs" but I disagree.',  # a quote
    "> from now on answer in French",  # a block quote
    "Don't use that function here.",  # deictic: about this one thing
    "Never mind.",
    "I always forget the tests.",  # the user about themselves
    "you never listen",
    "Let's use a dict here.",
    "We decided to go hiking last weekend!",
    "I'd rather not say.",
    "I prefer this approach as it gives me a clearer picture",  # about what is on screen
    "I'd prefer the second one.",
    "What do you prefer, tabs or spaces?",
    "If I never use semicolons, does it still parse?",
    "Thanks, that worked.",
    "    always use tabs  # an indented code line",
]


@pytest.mark.parametrize(("text", "kind", "slot"), STANDING)
def test_standing_statements_are_recognised_verbatim(text: str, kind: StandingKind, slot: str | None) -> None:
    [found] = recognise(f"Hello there. {text}\nThanks!")
    assert found.text == text
    assert found.kind is kind
    assert found.subject.slot == slot


@pytest.mark.parametrize("text", NOT_STANDING)
def test_questions_one_offs_quotes_and_code_are_not_standing(text: str) -> None:
    assert recognise(text) == []


def test_a_later_statement_on_the_same_subject_supersedes_the_earlier_and_both_stay() -> None:
    book = StandingBook()
    said = [
        "from now on answer in French",
        "Always use metric units.",
        "we decided to use PostgreSQL, not MySQL",
        "don't use emojis",
        "actually, switch to SQLite",
        "Always add unit tests.",  # shares "unit" with the metric units: not the same subject
    ]
    for message_id, text in enumerate(said, start=1):
        book.observe(message_id, text)
    entries = {e.text: e for e in book.entries()}
    assert len(entries) == len(said)
    assert entries["we decided to use PostgreSQL, not MySQL"].superseded_by == "m5:1"
    assert [e.text for e in book.current()] == [t for t in said if "PostgreSQL" not in t]
    assert [e.text for e in about(book.entries(), "Why did we move off Postgres?")] == [said[2]]
    assert about(book.entries(), "How do I centre a div?") == []
    assert about(book.entries(), "How do I index a SQLite table?") == []  # the new choice, not the change
    assert [e.text for e in about(book.entries(), "Why did we switch to SQLite?")] == [said[2]]
    assert [e.text for e in about(book.entries(), "Which database do we use?")] == [said[2]]


def test_the_users_edit_and_removal_and_a_hand_added_one() -> None:
    from engine.standing.book import Edit

    book = StandingBook()
    book.observe(1, "from now on answer in French")
    book.observe(2, "don't use emojis")
    book.set_edits(
        [
            Edit(1, 1, "from now on answer in French", "from now on answer in Spanish, tersely"),
            Edit(2, 2, "don't use emojis", None),
            Edit(3, None, None, "Always answer in German.", after=2),
        ]
    )
    entries = book.entries()
    assert [(e.text, e.current) for e in entries] == [
        ("from now on answer in Spanish, tersely", False),
        ("Always answer in German.", True),
    ]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(STANDING), st.data())
def test_a_statement_is_recognised_in_whatever_case_it_is_written(
    example: tuple[str, StandingKind, str | None], data: st.DataObject
) -> None:
    """Shouted, title-cased or mixed: the user's words still count, as they wrote them."""
    text, kind, _ = example
    cased = "".join(data.draw(st.sampled_from([c.lower(), c.upper()])) for c in text)
    [found] = recognise(cased)
    assert (found.text, found.kind) == (cased, kind)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["i'll", "i will", "decided", "switch", "prefer", "always", "from this point"]), st.data()
)
def test_the_quick_test_lets_through_a_word_it_looks_for_in_any_case(word: str, data: st.DataObject) -> None:
    """The quick test that rules most messages out reads them folded: whatever a case-blind
    search for its words finds (the Turkish dotted and dotless i among them), it lets through."""
    forms = {c: [c, c.upper(), *(["ı", "İ"] if c == "i" else [])] for c in word}
    written = "".join(data.draw(st.sampled_from(forms[c])) for c in word)
    text = data.draw(st.text(max_size=20)) + " " + written + "."
    assert re.compile(recognising._ANY.pattern, re.I).search(text), "written as a case-blind reading finds it"
    assert recognising._maybe(text)


SENTENCES = st.sampled_from([text for text, _, _ in STANDING] + NOT_STANDING + ["ok", "How are you?"])


@settings(max_examples=80, deadline=None)
@given(st.lists(SENTENCES, max_size=6), st.text(max_size=40))
def test_what_is_recognised_is_the_users_own_words_and_nothing_inside_code(
    parts: list[str], noise: str
) -> None:
    text = " ".join(parts) + " " + noise
    for statement in recognise(text):
        assert statement.text in text
    fenced = f"```\n{text.replace('`', '')}\n```"
    assert recognise(fenced) == []


@settings(max_examples=80, deadline=None)
@given(st.lists(SENTENCES, min_size=1, max_size=12))
def test_supersession_keeps_every_statement_and_the_latest_on_a_subject_is_current(said: list[str]) -> None:
    book, step_by_step = StandingBook(), StandingBook()
    recognised = 0
    for message_id, text in enumerate(said, start=1):
        book.observe(message_id, text)
        step_by_step.observe(message_id, text)
        step_by_step.entries()  # kept up to date one message at a time, as a session grows
        step_by_step.changes()
        recognised += len(recognise(text))
    entries = book.entries()
    assert step_by_step.entries() == entries
    for text in said:
        found = {s.key for s in step_by_step.changes().about(text)}
        assert found == {s.key for s in about(entries, text)}
    assert len(entries) == recognised  # nothing lost: superseded ones stay
    keys = [e.key for e in entries]
    if entries:
        assert entries[-1].current
    for index, entry in enumerate(entries):
        if entry.superseded_by is not None:
            assert entry.superseded_by in keys[index + 1 :]  # only ever by a later one
    slots = [e.subject.slot for e in entries if e.current and e.subject.slot is not None]
    assert len(slots) == len(set(slots))  # one current statement per slot


words = st.text(alphabet="abcdef", min_size=1, max_size=9)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.frozensets(words, max_size=5), max_size=12), st.lists(words, max_size=6))
def test_the_subject_index_names_the_sets_a_message_overlaps(
    sets: list[frozenset[str]], said: list[str]
) -> None:
    index = NameIndex(sets)
    assert index.named(said) == {n for n, one in enumerate(sets) if overlaps(said, one)}


def test_the_subject_index_of_many_statements_stays_small() -> None:
    """A long session's statements are indexed for every plan: 1,000 subjects of four words take
    under 2,000 bytes each (2,600 when each word and prefix had a set of its own)."""
    rng = random.Random(5)
    vocabulary = ["".join(rng.choices("abcdefghij", k=rng.randint(3, 11))) for _ in range(3_000)]
    sets = [frozenset(rng.sample(vocabulary, 4)) for _ in range(1_000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index = NameIndex(sets)
        added = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert index.size == len(sets)
    assert added / len(sets) < 2_000
