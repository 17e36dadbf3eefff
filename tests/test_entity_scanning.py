"""Entity extraction takes any text: odd and hostile input, dense machine output and a huge paste
stay fast and valid, the same text always gives the same mentions, and the extractor imports no UI."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.entities.extractor import Mention, extract_entities


@pytest.mark.parametrize(
    "text",
    ["", " \n\t", "\x00\x00", "\ud800 Caroline \udfff", "\x1b[31mError: red\x1b[0m", "```", "`", "${", "İİ"],
)
def test_odd_input_is_accepted(text: str) -> None:
    check_invariants(text, extract_entities(text))


def test_a_chat_message_takes_well_under_a_millisecond() -> None:
    message = (
        "Hey Mel! I finally fixed the JWTError in src/auth.py:42, it was timeouts.read = 5 instead of 30. "
        "Caroline says the LGBTQ group meets next Tuesday in New York, see https://example.org/events."
    )
    extract_entities(message)
    started = time.perf_counter()
    for _ in range(200):
        extract_entities(message)
    assert (time.perf_counter() - started) / 200 < 0.003  # ~0.15 ms here; generous for slow CI


@pytest.mark.parametrize("unit", ["a/", "a.", "a_", "aB", "$a", "=a ", '"A" ', "Aa ", "1 km ", "a(", "\n```"])
def test_dense_machine_output_stays_fast(unit: str) -> None:
    text = unit * (100_000 // len(unit))
    started = time.perf_counter()
    check_invariants(text, extract_entities(text))
    assert time.perf_counter() - started < 5  # ~0.1 s here; quadratic would take hours


def test_huge_input_is_scanned_at_both_ends() -> None:
    line = "Nothing to see here, just filler text for the log.\n"
    text = "Caroline opened src/start.py\n" + line * 200_000 + "ValueError in src/end.py\n"
    assert len(text) > 10_000_000
    labels = {m.label for m in extract_entities(text)}
    assert {"Caroline", "src/start.py", "ValueError", "src/end.py"} <= labels


def test_engine_does_not_import_the_ui() -> None:
    code = (
        "import sys, engine.entities.extractor, engine.text.terms;"
        " print(' '.join({m.split('.')[0] for m in sys.modules}))"
    )
    run = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    loaded = set(run.stdout.split())
    assert not loaded & {"textual", "rich", "tui", "themes", "sessions"}


def check_invariants(text: str, mentions: list[Mention]) -> None:
    refs = [m.ref for m in mentions]
    assert len(refs) == len(set(refs))
    for m in mentions:
        assert m.label and m.label in text
        assert m.label == m.label.strip()
        assert m.ref.startswith(m.kind + ":") and len(m.ref) > len(m.kind) + 1


# Fragments that exercise every extractor, so that generated texts hit the interesting paths.
FRAGMENTS = [
    *("src/a.py:1", "/", ".", "_", "$", "${", "}", "%", "`", "```", "```bash\n", "\n", " ", "\t", "Error: "),
    *("ValueError", "http://x.y/(z)", "www.", "(", ")", '"', "'", "“", "”", "‘", "’", "May", "Monday"),
    *(" last week", " 5 km", "$30", "2023-05-08", "7 May 2023", "Caroline", "New York", "The", "I", "Hey"),
    *("a=b", "KEY=1", "x: y", "[tool.x]", "$ git status", "\x00", "\ud800", "İ", "e.g.", "foo()", "obj.m()"),
    *("getX", "HTTPServer", "ENOENT", "HTTP 404", "~/x", "C:\\x\\y.txt", ".env", "Dockerfile", ":"),
    *("\x1b[0m", "1", ",", "x", "A"),
]
texts = st.text() | st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(texts)
def test_any_text_gives_valid_unique_deterministic_mentions(text: str) -> None:
    mentions = extract_entities(text)
    check_invariants(text, mentions)
    assert extract_entities(text) == mentions
