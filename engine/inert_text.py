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
_INVISIBLE = re.compile(f"[{BIDI_CONTROLS}{ZERO_WIDTH}]")
_JOINERS = "\u200c\u200d"

# What a JSON document may carry raw but a terminal must not see: C1 and DEL (json.dumps escapes
# C0 itself), bidi and zero-width characters, and lone surrogates (which cannot even be encoded).
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{BIDI_CONTROLS}{ZERO_WIDTH}\ud800-\udfff]")


def marker(char: str) -> str:
    """How an invisible character is shown: its code point between angle brackets, e.g. ⟨U+202E⟩."""
    return f"\u27e8U+{ord(char):04X}\u27e9"


def inert(text: str) -> str:
    """``text`` with every terminal control made visible and harmless.

    ESC becomes ␛, other control characters become U+FFFD, carriage returns become newlines (a
    bare CR would let text overwrite its own line), lone surrogates become U+FFFD, and bidi and
    zero-width characters become visible markers (:func:`marker`), except a joiner (ZWJ, ZWNJ)
    inside an emoji sequence or a word of a script that joins letters (see :func:`_joins`).
    Tabs and newlines are kept.
    """
    if text.isprintable():
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
    """``text`` with each bidi control and zero-width character shown as a marker."""
    if _INVISIBLE.search(text) is None:
        return text

    def shown(found: re.Match[str]) -> str:
        char, at = found.group(), found.start()
        if char in _JOINERS and _joins(text[at - 1 : at] + text[at + 1 : at + 2]):
            return char
        return marker(char)

    return _INVISIBLE.sub(shown, text)


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
    return not unicodedata.name(char, "").startswith("LATIN")


def inert_json(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with every character a terminal
    must not see raw written as a ``\\uXXXX`` escape: still valid JSON, and it reads back exactly.

    Such characters can only occur inside JSON strings, where an escape means the same character.
    """
    return _JSON_UNSAFE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def inert_line(text: str) -> str:
    """:func:`inert` on one line: a newline shows as ␤ and a tab as ␉ (a file name, a title)."""
    return inert(text).replace("\n", "\u2424").replace("\t", "\u2409")


def quoted(text: str) -> str:
    """A path or a user's string inside a message: between quotes, on one line, inert."""
    return f"'{inert_line(text)}'"
