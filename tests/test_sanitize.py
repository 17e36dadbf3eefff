"""Model and user text reaches the terminal inert: no escape sequences, no control codes."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tui.sanitize import inert, replaced_controls

DANGEROUS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


@given(st.text())
def test_no_control_character_survives(text: str) -> None:
    assert not DANGEROUS.search(inert(text))


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs"))))
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert inert(text) == text


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
