"""Make untrusted text inert before any widget sees it.

No Textual or Rich render path removes ESC or C1 control codes, so model output such as an OSC 52
sequence would reach the terminal and write the user's clipboard. Every string that came from a
model, a file, a server or the user's clipboard passes through :func:`inert` before display.
"""

from __future__ import annotations

import re

_ESCAPE_SYMBOL = "\u241b"  # ␛: shows where an escape sequence was, without its effect
_REPLACEMENT = "\ufffd"

# C0 controls except tab and newline, DEL, and the C1 range (U+0080-U+009F, which terminals may
# read as 8-bit CSI/OSC introducers).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]")
_LONE_SURROGATES = re.compile(r"[\ud800-\udfff]")


def inert(text: str) -> str:
    """``text`` with every terminal control made visible and harmless.

    ESC becomes ␛, other control characters become U+FFFD, carriage returns become newlines
    (a bare CR would let text overwrite its own line), and lone surrogates, which cannot be
    encoded for the terminal, become U+FFFD. Tabs and newlines are kept.
    """
    if text.isprintable():
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x1b", _ESCAPE_SYMBOL)
    text = _CONTROLS.sub(_REPLACEMENT, text)
    return _LONE_SURROGATES.sub(_REPLACEMENT, text)


def replaced_controls(text: str) -> int:
    """How many characters of ``text`` :func:`inert` shows as ␛ or U+FFFD: line ends (CR, CRLF)
    and tabs are kept as line breaks and tabs, so they are not counted."""
    if text.isprintable():
        return 0
    text = text.replace("\r", "\n")
    return text.count("\x1b") + len(_CONTROLS.findall(text)) + len(_LONE_SURROGATES.findall(text))
