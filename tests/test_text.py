"""Words and index terms: tokens users and code share, stemmed, without function words."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.text.terms import STOPWORDS, count_terms, encodable, stem, terms, words


def test_stopwords_are_the_common_function_words() -> None:
    assert 120 <= len(STOPWORDS) <= 200
    required = "the a and i you is was of to what when where who how did does would because don ll"
    for word in required.split():
        assert word in STOPWORDS
    for word in ("caroline", "python", "error", "config", "paint", "york"):
        assert word not in STOPWORDS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, World!", ["hello", "world"]),  # lower-cased, punctuation dropped
        ("Caroline's book", ["caroline", "book"]),  # a possessive 's goes
        ("it’s Mel’s", ["it", "mel"]),  # typographic apostrophe too
        ("don't", ["don", "t"]),  # other contractions split at the apostrophe
        ("'sup", ["sup"]),  # an apostrophe before a word that is not "s" only separates
        ("snake_case_name", ["snake_case_name", "snake", "case", "name"]),  # whole identifier, then its parts
        ("camelCase", ["camelcase", "camel", "case"]),
        ("HTTPServer", ["httpserver", "http", "server"]),  # an acronym hump
        ("utf8Decode", ["utf8decode", "utf8", "decode"]),  # digits stay with their hump
        ("MAX_RETRIES", ["max_retries", "max", "retries"]),
        ("__init__", ["init"]),  # edge underscores are not part of the name
        ("_", []),
        ("x86 3.5", ["x86", "3", "5"]),
        ("naïveBayes café", ["naïvebayes", "naïve", "bayes", "café"]),  # letters of any script
        ("東京 Straße", ["東京", "strasse"]),  # case-folded, so "STRASSE" matches too
        ("Caroline", ["caroline"]),  # a capitalised word is one word, not a camel hump
        ("src/auth.py:42", ["src", "auth", "py", "42"]),
        ("", []),
    ],
)
def test_words(text: str, expected: list[str]) -> None:
    assert words(text) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("running", "run"),
        ("generalization", "general"),
        ("painted", "paint"),
        ("paintings", "paint"),
        ("caroline", "carolin"),  # Snowball stems names too; both sides of a match go through it
        ("api", "api"),
    ],
)
def test_stem_is_snowball_english(word: str, expected: str) -> None:
    assert stem(word) == expected
    assert type(stem(word)) is str


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What did Caroline paint?", ["carolin", "paint"]),  # stopwords go
        ("I painted; she paints", ["paint", "paint"]),  # duplicates stay, for term frequency
        ("a b c x y", []),  # 1-character tokens go
        ("verify_token failed", ["verify_token", "verifi", "token", "fail"]),
        ("Don't stop", ["stop"]),  # contraction debris is a stopword
        ("line 12345 failed", ["line", "12345", "fail"]),  # numbers are terms, as they are
    ],
)
def test_terms(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


_REPEATING_WORDS = st.lists(
    st.sampled_from([*"ab_Cé1 .'", "the", "running", "Runs", "12", "xCase"]), max_size=40
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_REPEATING_WORDS)
def test_counting_terms_counts_each_term_of_the_text_in_order(text: str) -> None:
    # Each distinct word is stemmed once, not each occurrence: the counts must come out as if
    # every occurrence had been, keyed in the order the terms first appear.
    found = terms(text)
    assert list(count_terms(text).items()) == [(t, found.count(t)) for t in dict.fromkeys(found)]


def test_a_megabyte_of_repeated_words_counts_every_occurrence() -> None:
    text = "Running runs ran; 404 errors in request_handler. " * 20_000
    assert count_terms(text) == {
        "run": 40_000,
        "ran": 20_000,
        "404": 20_000,
        "error": 20_000,
        "request_handl": 20_000,
        "request": 20_000,
        "handler": 20_000,
    }


@pytest.mark.parametrize("unit", ["a_", "aB", "a'", "'s", "x", "_", "é", " "])
def test_words_is_linear_on_half_a_megabyte(unit: str) -> None:
    text = unit * (500_000 // len(unit))
    started = time.perf_counter()
    words(text)
    assert time.perf_counter() - started < 5  # ~0.1 s here; a quadratic scan would take minutes


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_words_and_terms_accept_any_text(text: str) -> None:
    found = words(text)
    assert all(w and w == w.casefold() for w in found)
    assert words(text) == found
    assert terms(text) == [stem(w) for w in found if len(w) > 1 and w not in STOPWORDS]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["word", "it's", "snake_case", "camelCase", "é", " ", "\n", "x1"]), max_size=400)
)
def test_long_texts_scanned_in_pieces_give_the_same_words(parts: list[str]) -> None:
    # Pieces keep one regex call short (a 10 MB paste must not hold the GIL for long); where they
    # are cut must never change the words found.
    text = "".join(parts)
    whole = words(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("engine.text.terms.PIECE_CHARS", 16)
        assert words(text) == whole


def test_lone_surrogates_become_replacement_characters_and_the_rest_is_kept() -> None:
    assert encodable("ok \U0001f600 \x00") == "ok \U0001f600 \x00"
    assert encodable("a\udcffb\ud800") == "a\ufffdb\ufffd"
    encodable("a\udcffb").encode("utf-8")  # now storable and countable
