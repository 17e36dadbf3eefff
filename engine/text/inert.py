"""Make untrusted text inert before it reaches a terminal, a file meant for reading, or a widget.

No terminal or Textual render path removes ESC or C1 control codes, so text holding an OSC 52
sequence would write the user's clipboard; bidi overrides and zero-width characters make text read
differently from what it is. Every string from a model, a file, a server or the user passes
through :func:`inert` before display, and JSON meant for reading through :func:`inert_json`.
A leaf module (standard library only) so that the engine, the store, the shell and the UI share it.
"""

from __future__ import annotations

import re
import unicodedata

ESCAPE_SYMBOL = "\u241b"  # ␛: shows where an escape sequence was, without its effect
REPLACEMENT = "\ufffd"

# C0 controls except tab and newline, DEL, and the C1 range (U+0080-U+009F, which terminals may
# read as 8-bit CSI/OSC introducers).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]")
_LONE_SURROGATES = re.compile(r"[\ud800-\udfff]")

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Arabic letter mark, LRM/RLM, the embeddings and overrides (LRE..RLO) and the isolates (LRI..PDI)."""
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
"""Zero-width space, non-joiner, joiner, word joiner, and the zero-width no-break space (BOM)."""
HIDDEN_FORMAT = (
    "\u00ad\u2061\u2062\u2063\u2064\u206a\u206b\u206c\u206d\u206e\u206f\ufff9\ufffa\ufffb\U000e0001"
)
"""Soft hyphen, invisible math operators, deprecated format controls, interlinear annotation marks
and the language tag: invisible format characters that in a chat only hide or split text."""
TAGS = "".join(map(chr, range(0xE0020, 0xE0080)))
"""The tag characters: invisible copies of ASCII ("ASCII smuggling"), shown as markers except in an
emoji tag sequence (the flags of England, Scotland and Wales: 🏴 then tags then U+E007F)."""
NOTATION_FORMAT = "\u180e" + "".join(
    map(chr, [*range(0x13430, 0x13440), *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B)])
)
"""Format characters of one script or notation (Mongolian vowel separator, Egyptian hieroglyph,
Duployan and musical format controls): kept between characters of that script, else markers."""
_NOTATIONS = ((0x1800, 0x18AF), (0x13000, 0x1345F), (0x1BC00, 0x1BCAF), (0x1D100, 0x1D1FF))
_SELECTOR_CLASS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_SELECTORS = re.compile(f"[{_SELECTOR_CLASS}]")
_PRESENTATION = "\ufe0e\ufe0f"
"""Text and emoji presentation selectors: after any visible character (©️, 1️⃣)."""
# The classes as ranges, BMP and astral apart: a class of single characters, or of astral ranges,
# is several times slower to scan, and most text holds no astral character at all.
_BMP_FORMAT_CLASS = (
    f"{BIDI_CONTROLS}{ZERO_WIDTH}\u00ad\u180e\u2061-\u2064\u206a-\u206f\ufff9-\ufffb\ufe00-\ufe0d"
)
_ASTRAL_FORMAT_CLASS = (
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
    "\U000e0100-\U000e01ef"
)
_FORMAT_CLASS = _BMP_FORMAT_CLASS + _ASTRAL_FORMAT_CLASS
"""Every invisible character looked at, presentation selectors (U+FE0E, U+FE0F) aside."""
_SUSPECT_PRESENTATION = (
    f"[{_PRESENTATION}](?:(?=[{_SELECTOR_CLASS}])|(?<=[\\s{_SELECTOR_CLASS}{_FORMAT_CLASS}].))"
)
"""A presentation selector before another selector or after a space or an invisible character.
Only these are looked at: there are thousands of ❤️ in an emoji-rich reply."""
_INVISIBLE = re.compile(f"[{_FORMAT_CLASS}]|{_SUSPECT_PRESENTATION}")
_BMP_INVISIBLE = re.compile(f"[{_BMP_FORMAT_CLASS}]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_ASTRAL_INVISIBLE = re.compile(f"[{_ASTRAL_FORMAT_CLASS}]")
_PRESENTATION_TO_ASK = re.compile(_SUSPECT_PRESENTATION)
_JOINERS = "\u200c\u200d"
_TAG_SPEC = "\U000e0030-\U000e0039\U000e0061-\U000e007a"  # the tags of a subdivision code: a-z, 0-9
_FLAGS = re.compile(f"\U0001f3f4[{_TAG_SPEC}]{{1,7}}\U000e007f")
"""An emoji tag sequence, whole: a piece of one (a streamed reply split inside a flag) shows its
tags as markers, as any run of tags could be the start of a hidden text."""

# What a JSON document may carry raw but a terminal must not see: C1 and DEL (json.dumps escapes
# C0 itself), bidi, zero-width and the other invisible format characters, and lone surrogates
# (which cannot even be encoded). Variation selectors are escaped where :func:`inert` marks them.
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f\ud800-\udfff{_FORMAT_CLASS}]|{_SUSPECT_PRESENTATION}")
_BMP_JSON_UNSAFE = re.compile(f"[\x7f-\x9f\ud800-\udfff{_BMP_FORMAT_CLASS}]")


def marker(char: str) -> str:
    """How an invisible character is shown: its code point between angle brackets, e.g. ⟨U+202E⟩."""
    return f"\u27e8U+{ord(char):04X}\u27e9"


def inert(text: str) -> str:
    """``text`` with every terminal control made visible and harmless.

    ESC becomes ␛, other control characters become U+FFFD, carriage returns become newlines (a
    bare CR would let text overwrite its own line), lone surrogates become U+FFFD, and bidi and
    zero-width characters become visible markers (:func:`marker`), except a joiner (ZWJ, ZWNJ)
    inside an emoji sequence or a word of a script that joins letters (see :func:`_joins`).
    Tabs and newlines are kept. The other invisible format characters, tag characters and variation
    selectors are marked too, except where they shape the text (see :func:`mark_invisible`).
    """
    if text.isprintable() and _SELECTORS.search(text) is None:
        return text
    return mark_invisible(inert_controls(text))


def inert_controls(text: str) -> str:
    """Only the controls of :func:`inert` (not bidi or zero-width characters): for text that is
    edited and sent as shown, where a marker would change what is sent."""
    if text.isprintable():
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x1b", ESCAPE_SYMBOL)
    text = _CONTROLS.sub(REPLACEMENT, text)
    return _LONE_SURROGATES.sub(REPLACEMENT, text)


def replaced_controls(text: str) -> int:
    """How many characters of ``text`` :func:`inert_controls` shows as ␛ or U+FFFD: line ends (CR,
    CRLF) and tabs are kept as line breaks and tabs, so they are not counted."""
    if text.isprintable():
        return 0
    text = text.replace("\r", "\n")
    return text.count("\x1b") + len(_CONTROLS.findall(text)) + len(_LONE_SURROGATES.findall(text))


def mark_invisible(text: str) -> str:
    """``text`` with each bidi control, zero-width and other invisible format character, tag
    character and stray variation selector shown as a marker; kept where they shape the text: a
    joiner in an emoji or a joining script, a flag's tags, a script's own format character between
    its letters, one variation selector after the character it selects a form of."""
    if not _holds(_BMP_INVISIBLE, text):
        return text
    flags = _flag_positions(text)

    def shown(found: re.Match[str]) -> str:
        at = found.start()
        return found.group() if _shapes(text, at, flags) else marker(found.group())

    return _INVISIBLE.sub(shown, text)


def _holds(bmp: re.Pattern[str], text: str) -> bool:
    """Whether ``text`` may hold a character to mark or escape (``bmp``: those of the BMP), in
    three quick scans rather than the one slow scan of an alternation."""
    return (
        bmp.search(text) is not None
        or _PRESENTATION_TO_ASK.search(text) is not None
        or (_ASTRAL.search(text) is not None and _ASTRAL_INVISIBLE.search(text) is not None)
    )


def _shapes(text: str, at: int, flags: frozenset[int]) -> bool:
    """True when the invisible character at ``at`` does its job in ``text`` (so it is kept)."""
    char = text[at]
    if char in _JOINERS:
        return _joins(text[at - 1 : at] + text[at + 1 : at + 2])
    if char in TAGS:
        return at in flags
    if char in NOTATION_FORMAT:
        return _in_notation(char, text[at - 1 : at] + text[at + 1 : at + 2])
    if _SELECTORS.fullmatch(char):
        return _selects(text, at)
    return False


def _flag_positions(text: str) -> frozenset[int]:
    """Where the tag characters of emoji tag sequences (🏴 with a subdivision code) are in ``text``."""
    if "\U000e007f" not in text and "\U0001f3f4" not in text:
        return frozenset()
    return frozenset(at for found in _FLAGS.finditer(text) for at in range(found.start(), found.end()))


def _in_notation(char: str, neighbours: str) -> bool:
    """A script's format character between two characters of its script."""
    code = ord(char)
    for start, end in _NOTATIONS:
        if start <= code <= end:
            return len(neighbours) == 2 and all(
                start <= ord(c) <= end and c not in NOTATION_FORMAT for c in neighbours
            )
    return False


def _selects(text: str, at: int) -> bool:
    """A variation selector selects a form of the visible character before it, one selector each; a
    run of them or one after a space only hides data. Presentation selectors follow any character
    (1️⃣, ©️); the others only a non-Latin one (CJK ideographs, mathematical symbols), so that plain
    words cannot carry a hidden byte per letter. A streamed piece may start with a selector."""
    after = text[at + 1 : at + 2]
    if after and _SELECTORS.fullmatch(after):
        return False
    if at == 0:
        return True
    before = text[at - 1]
    if _SELECTORS.fullmatch(before) or before.isspace() or not before.isprintable():
        return False
    return text[at] in _PRESENTATION or (ord(before) > 0x7F and not _latin(before))


def _latin(char: str) -> bool:
    return unicodedata.name(char, "").startswith("LATIN")


def _joins(neighbours: str) -> bool:
    """A joiner next to these is doing its job: all emoji (👩‍💻), or all letters or marks of a
    script written with joining forms (Persian, Devanagari...), never Latin or ASCII. At the text's
    edge one neighbour is enough: a streamed reply arrives in pieces that may split an emoji."""
    return bool(neighbours) and (all(map(_emoji, neighbours)) or all(map(_joining_letter, neighbours)))


def _emoji(char: str) -> bool:
    code = ord(char)
    return (
        0x1F000 <= code <= 0x1FAFF  # pictographs, emoticons, skin tones, transport, symbols
        or 0x2600 <= code <= 0x27BF  # miscellaneous symbols and dingbats (♀, ♂, ❤)
        or 0x2B00 <= code <= 0x2BFF
        or code in (0xFE0F, 0x20E3)  # emoji presentation selector, combining keycap
    )


def _joining_letter(char: str) -> bool:
    if ord(char) < 0x0370 or unicodedata.category(char)[0] not in "LM":
        return False
    return not _latin(char)


def inert_json(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with every character a terminal
    must not see raw written as a ``\\uXXXX`` escape: still valid JSON, and it reads back exactly.

    Such characters can only occur inside JSON strings, where an escape means the same character.
    """

    def escaped(found: re.Match[str]) -> str:
        char = found.group()
        if _SELECTORS.fullmatch(char) and _selects(text, found.start()):
            return char
        code = ord(char)
        if code > 0xFFFF:  # JSON escapes a character beyond the BMP as its UTF-16 surrogate pair
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"

    return _JSON_UNSAFE.sub(escaped, text) if _holds(_BMP_JSON_UNSAFE, text) else text


def inert_line(text: str) -> str:
    """:func:`inert` on one line: a newline shows as ␤ and a tab as ␉ (a file name, a title)."""
    return inert(text).replace("\n", "\u2424").replace("\t", "\u2409")


def quoted(text: str) -> str:
    """A path or a user's string inside a message: between quotes, on one line, inert."""
    return f"'{inert_line(text)}'"
