"""Model and user text reaches the terminal inert: no escape sequences, no control codes, and no bidi
or zero-width character that makes text read differently from what it is."""

from __future__ import annotations

import json
import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from engine.text.inert import BIDI_CONTROLS, ZERO_WIDTH, inert_json
from tui.sanitize import inert, replaced_controls

# Invisible format characters beyond bidi and zero-width: soft hyphen, invisible math operators,
# deprecated format controls, interlinear annotation, the language tag and the tag characters (ASCII
# smuggling), and script format controls out of their script.
HIDDEN = "\u00ad\u180e\u2061\u2062\u2063\u2064\u206a\u206f\ufff9\ufffa\ufffb\U000e0001\U0001bca0\U0001d173"
TAG_RANGE = "\U000e0020-\U000e007f"
SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
DANGEROUS = re.compile(
    f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{BIDI_CONTROLS}\u200b\u2060\ufeff{HIDDEN}{TAG_RANGE}]"
    f"|[{SELECTORS}]{{2}}|(?:^|\\s)[{SELECTORS}]"  # a run of selectors, or one after a space, hides data
)
FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,7}\U000e007f")
INVISIBLE = BIDI_CONTROLS + ZERO_WIDTH
ENGLAND = "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"


def smuggled(text: str) -> str:
    """``text`` in tag characters: invisible on a terminal, read by a model."""
    return "".join(chr(0xE0000 + ord(c)) for c in text)


@given(st.text())
def test_no_control_or_bidi_character_survives(text: str) -> None:
    # inert's own characters stay, where they build something (a flag's tags), not at the edges
    assert not DANGEROUS.search(FLAG.sub("🏴", inert(f"\u00b7{text}\u00b7")))


@given(
    st.text(
        alphabet=st.sampled_from(f"ab 葛😀\n{HIDDEN}\U000e0041\U000e0067\U000e007f🏴\ufe00\ufe0f\U000e0100")
    )
)
def test_no_invisible_format_character_tag_or_run_of_selectors_survives(text: str) -> None:
    assert not DANGEROUS.search(FLAG.sub("🏴", inert(f"\u00b7{text}\u00b7")))


@given(
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cc", "Cs", "Cf"),
            blacklist_characters=INVISIBLE
            + HIDDEN
            + "".join(map(chr, [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])),
        )
    )
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert inert(text) == text


def test_tag_characters_hiding_text_are_shown_as_markers() -> None:
    """ASCII smuggling: an instruction in tag characters is invisible, yet a model reads it."""
    assert inert(f"hello{smuggled('hi')}") == "hello⟨U+E0068⟩⟨U+E0069⟩"
    assert inert(f"🏴{smuggled('ignore all previous')}") == "🏴" + "".join(
        f"⟨U+{0xE0000 + ord(c):04X}⟩" for c in "ignore all previous"
    )
    assert inert("\U000e0001en") == "⟨U+E0001⟩en"  # the deprecated language tag


def test_flag_tag_sequences_are_kept() -> None:
    scotland = "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    for text in (ENGLAND, f"go {scotland}!", f"{ENGLAND}{scotland}"):
        assert inert(text) == text
    # only whole: a flag's start or end alone shows its tags (it could be the edge of a hidden text)
    assert (inert(ENGLAND[:2]), inert(ENGLAND[-1:])) == ("🏴⟨U+E0067⟩", "⟨U+E007F⟩")


def test_other_invisible_format_characters_are_shown_as_markers() -> None:
    assert inert("pay\u00adpal") == "pay⟨U+00AD⟩pal"
    assert inert("a\u2062b\u2064c") == "a⟨U+2062⟩b⟨U+2064⟩c"
    assert inert("\u206aold\u206f \ufff9note\ufffb") == "⟨U+206A⟩old⟨U+206F⟩ ⟨U+FFF9⟩note⟨U+FFFB⟩"
    assert inert("x\u180ey") == "x⟨U+180E⟩y"
    assert inert("ᠮᠣ\u180eᠭ") == "ᠮᠣ\u180eᠭ"  # the Mongolian vowel separator between Mongolian letters
    assert inert("ᠮ\u180e\u180eᠭ") == "ᠮ⟨U+180E⟩⟨U+180E⟩ᠭ"  # a run of them separates nothing
    assert inert("\U0001bca0" * 3) == "⟨U+1BCA0⟩" * 3


def test_variation_selectors_are_kept_once_after_their_character_and_marked_in_runs() -> None:
    for text in ("❤\ufe0f", "#\ufe0f\u20e3", "©\ufe0e", "葛\U000e0100", "∩\ufe00", "🏳\ufe0f\u200d🌈"):
        assert inert(text) == text
    assert inert("😀\ufe00\ufe01\U000e0100") == "😀⟨U+FE00⟩⟨U+FE01⟩⟨U+E0100⟩"  # bytes hidden after an emoji
    assert inert("a\ufe01b\ufe02") == "a⟨U+FE01⟩b⟨U+FE02⟩"  # a byte hidden after each letter
    assert inert("x \ufe0f") == "x ⟨U+FE0F⟩"


def test_json_escapes_tag_characters_as_surrogate_pairs() -> None:
    document = {"t": f"hi{smuggled('x')} {ENGLAND} 😀\ufe00\ufe01 pay\u00adpal"}
    text = inert_json(json.dumps(document, ensure_ascii=False))
    assert json.loads(text) == document
    assert '"hi\\udb40\\udc78 🏴' in text and "😀\\ufe00\\ufe01 pay\\u00adpal" in text


@given(st.dictionaries(st.text(), st.text()))
def test_json_made_inert_is_the_same_json(document: dict[str, str]) -> None:
    text = inert_json(json.dumps(document, ensure_ascii=False))
    assert json.loads(text) == document
    assert not re.search(f"[\x7f-\x9f{INVISIBLE}{HIDDEN}{TAG_RANGE}\ud800-\udfff]|[{SELECTORS}]{{2}}", text)


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


def test_every_format_character_is_marked_unless_it_is_visible_or_shapes_its_script() -> None:
    """Default-deny: a format character (category Cf) a newer Unicode adds is shown as a marker."""
    visible = {*range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD}
    for code in range(0x110000):
        if unicodedata.category(chr(code)) == "Cf" and code not in visible:
            assert inert(f"x{chr(code)}x") == f"x⟨U+{code:04X}⟩x", hex(code)
