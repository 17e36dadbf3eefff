"""The story so far: a chronological digest of the messages not sent in full, each line naming the
messages it quotes, within its share of the budget (engine.summaries.story)."""

from __future__ import annotations

import random
import re
import tracemalloc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.curation.consent import ConsentChoice
from engine.curation.context_view import Part
from engine.curation.request_parts import request_parts
from engine.curation.result import CurationResult
from engine.curation.session_curation import SessionCuration
from engine.summaries.story import Fragment, Story, central_sentence, key_phrase
from engine.summaries.story_lines import StoryLines
from engine.text.analysis import term_counts
from engine.text.tokens import load_counter

COUNTER = load_counter("gpt-4o-mini")
LARGE = 24_000
"""A window whose budget gives the story a share of its own (told before the summaries)."""

TOPICS = (
    ("garden", "tomato", "seedlings", "compost", "watering", "greenhouse"),
    ("invoice", "billing", "refund", "payment", "receipt", "accountant"),
    ("triangle", "hypotenuse", "angle", "geometry", "perimeter", "theorem"),
    ("marathon", "training", "running", "stretching", "mileage", "sneakers"),
)


def sentence(topic: int, seed: int) -> str:
    words = TOPICS[topic]
    picked = [words[(seed + k * 3) % len(words)] for k in range(4)]
    return f"I keep thinking about the {picked[0]} and the {picked[1]}, then {picked[2]} with {picked[3]}."


conversations = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50)), min_size=4, max_size=40)


def play(
    turns: list[tuple[int, int]], *, window: int, plan_each: bool
) -> tuple[SessionCuration, CurationResult]:
    """User and assistant messages on the given topics; planned (and applied) after each user
    message when ``plan_each``, else only once at the end."""
    curation = SessionCuration(window=window, counter=COUNTER, policy=ConsentChoice.SUMMARIZE)
    next_id = 1
    result: CurationResult | None = None
    for topic, seed in turns:
        for role in ("user", "assistant"):
            text = " ".join(sentence(topic, seed + k) for k in range(6 if role == "assistant" else 2))
            item = curation.add_message(next_id, role, text, COUNTER.count(text))
            next_id += 1
            if role == "user" and plan_each:
                result = curation.plan(item)
                curation.apply(result)
    last = curation.last_user()
    assert last is not None
    final = curation.plan(last)
    assert result is None or result.turn <= final.turn
    return curation, final


def story_of(result: CurationResult) -> list[tuple[tuple[int, ...], str]]:
    return list(result.story)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations, st.sampled_from([2_000, 4_000, 60_000]))
def test_the_story_is_chronological_names_real_unsent_messages_and_keeps_its_share(
    turns: list[tuple[int, int]], window: int
) -> None:
    curation, result = play(turns, window=window, plan_each=True)
    messages = [m for m in result.messages if m.form == "story"]
    assert len(messages) <= 1
    sent_whole = {s for m in result.messages if m.form == "verbatim" for s in m.sources}
    budget = curation.budget.tokens
    assert result.tokens <= budget
    if not messages:
        return
    story = messages[0]
    # Its share (the summaries' room when the window is small), never more.
    share = max(
        int((budget - 3) * curation.profile.story_share), int((budget - 3) * curation.profile.memory_share)
    )
    assert story.tokens <= share
    assert COUNTER.count(story.content) + 4 <= story.tokens
    positions = []
    for sources, line in story_of(result):
        if "the session so far" in line:  # the session's line, first: its sources span the session
            assert (sources, line) == story_of(result)[0] and len(sources) <= 3
        assert 1 <= len(sources) <= 6
        for source in sources:
            item = curation.by_id[source]  # a real message of the session
            assert source not in sent_whole
            assert item.label in line  # the line names it
        first = [curation.by_id[s].position for s in sources]
        assert first == sorted(first)
        positions.append(first[0])
    assert positions == sorted(positions)  # oldest first
    assert story.sources == tuple(dict.fromkeys(s for sources, _ in story_of(result) for s in sources))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations)
def test_a_story_grown_turn_by_turn_is_the_story_read_at_once(turns: list[tuple[int, int]]) -> None:
    grown, _ = play(turns, window=3_000, plan_each=True)
    at_once, _ = play(turns, window=3_000, plan_each=False)

    def segments(curation: SessionCuration) -> list[tuple[bool, list[tuple[int, str, str]]]]:
        return [
            (s.closed, [(f.item_id, f.text, f.phrase) for f in s.fragments])
            for s in curation.state.story.segments
        ]

    assert segments(grown) == segments(at_once)
    # With the same messages sent whole, the same lines, however the story was grown (and
    # whatever the lines cached from earlier plans).
    states = (grown.state, at_once.state)
    for room in (120, 400, 5_000):
        lines = [s.story_lines.render(s.story_lines.told(s.story, set()), room) for s in states]
        assert lines[0] == lines[1]
        assert sum(line.tokens for line in lines[0]) + grown.state.story_lines.header_tokens() <= room


def test_a_change_of_topic_starts_a_new_line_and_each_line_quotes_its_message() -> None:
    turns = [(0, n) for n in range(4)] + [(1, n) for n in range(4)] + [(2 + n % 2, n) for n in range(150)]
    curation, result = play(turns, window=LARGE, plan_each=False)
    segments = curation.state.story.segments
    assert len(segments) >= 3
    topic = {2 * n + k: t for n, (t, _) in enumerate(turns) for k in (1, 2)}  # ids by construction
    assert [{topic[f.item_id] for f in s.fragments} for s in segments[:2]] == [{0}, {1}]
    assert result.story
    for sources, line in result.story:
        for source in sources:
            quoted = re.sub(r"^- \[[^]]*\] (\w+: )?", "", line).split(" | ")
            assert any(piece.split(": ")[-1].rstrip("…") in curation.by_id[source].text for piece in quoted)


def test_a_message_the_user_forgot_is_never_quoted() -> None:
    turns = [(n % 4, n) for n in range(160)]
    curation, result = play(turns, window=LARGE, plan_each=False)
    quoted = [s for sources, _ in result.story for s in sources]
    assert quoted
    curation.forget(quoted[0])
    last = curation.last_user()
    assert last is not None
    after = curation.plan(last)
    assert quoted[0] not in {s for sources, _ in after.story for s in sources}


def test_while_the_conversation_fits_whole_there_is_no_story() -> None:
    _, result = play([(0, 1), (1, 2), (2, 3)], window=60_000, plan_each=True)
    assert not result.story
    assert all(m.form != "story" for m in result.messages)


def test_the_panel_counts_the_story_as_its_own_part() -> None:
    _, result = play([(n % 4, n) for n in range(160)], window=LARGE, plan_each=False)
    story = next(m for m in result.messages if m.form == "story")
    parts = {p.part: p for p in request_parts(result, ())}
    assert parts[Part.STORY].tokens == story.tokens
    assert parts[Part.STORY].messages == len(story.sources)
    assert sum(p.tokens for p in parts.values()) == result.tokens


def test_a_message_of_yours_waiting_for_your_answer_is_not_quoted() -> None:
    curation = SessionCuration(window=LARGE, counter=COUNTER)  # no consent policy: you are asked
    next_id = 1
    for topic, seed in [(n % 4, n) for n in range(160)]:
        for role in ("user", "assistant"):
            text = " ".join(sentence(topic, seed + k) for k in range(6 if role == "assistant" else 2))
            if next_id == 3:  # a document of yours too big to send
                text = " ".join(sentence(k % 4, k) for k in range(900))
            curation.add_message(next_id, role, text, COUNTER.count(text))
            next_id += 1
    last = curation.last_user()
    assert last is not None
    result = curation.plan(last)
    assert 3 in result.left_out and result.story
    assert 3 not in {s for sources, _ in result.story for s in sources}


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab …,;:-(.!?\n\té"), max_size=400))
def test_a_fragment_gives_back_the_sentence_and_phrase_it_was_made_of(text: str) -> None:
    found = central_sentence(text, {})
    if found is None:
        return
    sentence, terms = found
    phrase = key_phrase(sentence, lambda term: float(len(term)))
    fragment = Fragment.of(1, "#1", "user", "user", sentence, phrase, terms)
    assert (fragment.text, fragment.phrase) == (sentence, phrase)


def test_a_long_story_keeps_a_few_hundred_bytes_a_message() -> None:
    """A long session keeps a fragment of each message for the life of the session: 2,000 messages
    of long sentences (each shortened, with its phrase) add under 600 bytes a message (886 when each
    fragment kept its phrase, its ellipsis and an empty set of its own)."""
    rng = random.Random(3)
    words = [f"w{chr(97 + n % 26)}{chr(97 + n // 26 % 26)}ord" for n in range(600)]
    messages = []
    for n in range(1_000, 3_000):
        text = ". ".join(" ".join(rng.choices(words, k=rng.randint(20, 40))) for _ in range(3)) + "."
        messages.append((n, "user" if n % 2 == 0 else "assistant", text, term_counts(text, None), f"#{n}"))
    story = Story()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for item_id, role, text, counts, label in messages:
            story.add(item_id, role, text, counts, label=label)  # type: ignore[arg-type]
        added = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert sum(len(s.fragments) for s in story.segments) == len(messages)
    assert added / len(messages) < 600


def test_the_story_told_of_a_long_session_keeps_little_for_each_segment() -> None:
    """Every plan tells the story of a long session, and what the telling keeps for the next plan
    stays small: under 1,230 bytes a segment for 700 segments told by their index (1,920 when each
    kept its exchanges grouped and its lines in a dict, 1,280 when the counted texts kept each
    segment's top phrase, made anew from its sentence)."""
    rng = random.Random(3)
    words = [f"w{chr(97 + n % 26)}{chr(97 + n // 26 % 26)}ord" for n in range(600)]
    story = Story()
    for n in range(1_000, 7_000):
        text = ". ".join(" ".join(rng.choices(words, k=rng.randint(8, 14))) for _ in range(3)) + "."
        role = "user" if n % 2 == 0 else "assistant"
        story.add(n, role, text, term_counts(text, None), label=f"#{n}")  # type: ignore[arg-type]
    lines = StoryLines(COUNTER.count)
    COUNTER.count("the counter's tables loaded")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        told = lines.render(lines.told(story, set()), 4_000)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert told and len(story.segments) > 600
    assert kept / len(story.segments) < 1_230


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    topics=st.lists(st.integers(0, len(TOPICS) - 1), min_size=6, max_size=40),
    plans=st.lists(st.tuples(st.integers(1, 40), st.sets(st.integers(0, 39))), min_size=1, max_size=6),
    room=st.sampled_from([120, 400, 5_000]),
)
def test_lines_kept_between_plans_equal_lines_told_afresh(
    topics: list[int], plans: list[tuple[int, set[int]]], room: int
) -> None:
    """Whatever the request sends whole from plan to plan, and however the story grew meanwhile,
    the lines a long-lived StoryLines tells are those a fresh one tells (its cached parts never
    stand in for a segment whose messages changed)."""
    story = Story()
    kept = StoryLines(COUNTER.count)
    added = 0
    for grown, sent in plans:
        for n in range(added, min(len(topics), added + grown)):
            text = sentence(topics[n], n)
            role = "user" if n % 2 == 0 else "assistant"
            story.add(n, role, text, term_counts(text, None), label=f"#{n}")  # type: ignore[arg-type]
        added = min(len(topics), added + grown)
        fresh = StoryLines(COUNTER.count)
        assert kept.render(kept.told(story, sent), room) == fresh.render(fresh.told(story, sent), room)
