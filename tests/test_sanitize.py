"""Model and user text reaches the terminal inert: no escape sequences, no control codes, and no bidi
or zero-width character that makes text read differently from what it is."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from engine.inert_text import BIDI_CONTROLS, ZERO_WIDTH, inert_json
from tui.sanitize import inert, replaced_controls

DANGEROUS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{BIDI_CONTROLS}\u200b\u2060\ufeff]")
INVISIBLE = BIDI_CONTROLS + ZERO_WIDTH


@given(st.text())
def test_no_control_or_bidi_character_survives(text: str) -> None:
    assert not DANGEROUS.search(inert(text))


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters=INVISIBLE)))
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert inert(text) == text


@given(st.dictionaries(st.text(), st.text()))
def test_json_made_inert_is_the_same_json(document: dict[str, str]) -> None:
    text = inert_json(json.dumps(document, ensure_ascii=False))
    assert json.loads(text) == document
    assert not re.search(f"[\x7f-\x9f{INVISIBLE}\ud800-\udfff]", text)


def test_bidi_overrides_and_zero_width_characters_are_shown_as_markers() -> None:
    assert inert("invoice_\u202egpj.exe") == "invoice_⟨U+202E⟩gpj.exe"
    assert inert("pay\u200bpal \u2066x\u2069 \ufeff") == "pay⟨U+200B⟩pal ⟨U+2066⟩x⟨U+2069⟩ ⟨U+FEFF⟩"
    assert inert("a\u200db \u200c") == "a⟨U+200D⟩b ⟨U+200C⟩"  # joiners between Latin letters: markers


def test_joiners_inside_emoji_and_joining_scripts_are_kept() -> None:
    """ZWJ builds emoji (👩‍💻, 🏳️‍🌈) and ZWNJ/ZWJ shape Persian and Indic words: there they are the text."""
    for text in ("👩\u200d💻", "🏳\ufe0f\u200d🌈", "👨🏽\u200d🦰", "می\u200cخواهم", "क्\u200dष"):
        assert inert(text) == text
    assert inert("👩\u200d") == "👩\u200d"  # a streamed piece may end inside an emoji
    # a joiner on its own, or next to a Latin letter, joins nothing: it is shown
    assert (inert("\u200d"), inert("x\u200d"), inert("👩\u200dx")) == ("⟨U+200D⟩", "x⟨U+200D⟩", "👩⟨U+200D⟩x")


def test_osc52_clipboard_write_is_shown_not_executed() -> None:
    payload = "look\x1b]52;c;UFdORUQ=\x07 here"
    assert inert(payload) == "look␛]52;c;UFdORUQ=\ufffd here"


def test_c1_csi_and_carriage_returns() -> None:
    assert inert("a\x9b2Jb") == "a\ufffd2Jb"
    assert inert("one\r\ntwo\rthree") == "one\ntwo\nthree"


def test_tabs_and_newlines_are_kept() -> None:
    assert inert("a\tb\nc") == "a\tb\nc"


@given(st.text(alphabet=st.sampled_from("ab\t\r\n\x1b\x00\x07\x9b\udcff\ufffd␛")))
def test_the_paste_notice_counts_exactly_the_characters_shown_as_symbols(text: str) -> None:
    def symbols(s: str) -> int:
        return sum(ch in "\ufffd␛" for ch in s)

    assert replaced_controls(text) == symbols(inert(text)) - symbols(text)
