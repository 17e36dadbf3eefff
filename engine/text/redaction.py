"""The one gate every text from a server goes through before it is stored, shown, logged or printed.

It takes out the API keys in use (remembered with :func:`remember_secret` wherever a key is read)
and text shaped like a key (``sk-...``, ``Bearer ...``). Any piece of a known key of
:data:`MIN_PIECE` characters or more goes too, so a key cut short (by the server, or by a quote
cut to size) is still caught; :func:`clip` redacts before it cuts.
"""

from __future__ import annotations

import re
import threading

REDACTED = "[redacted]"
MIN_PIECE = 8
"""A run of this many characters of a known key is taken for the key."""
MIN_SECRET = 6
"""A shorter "key" (``"none"``, ``"x"``) is no secret, and redacting it would garble the text."""

_SHAPES = re.compile(
    r"(?P<bearer>\b[Bb]earer\s+)(?=[A-Za-z._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(?:sk|gsk|hf|xai)[-_](?=[A-Za-z_*-]*[0-9])[A-Za-z0-9_*-]{8,}"
    r"|\bAIza[0-9A-Za-z_-]{20,}"
)
"""Keys as the common providers shape them (OpenAI, Anthropic, OpenRouter, Groq, Hugging Face,
xAI, Google), and bearer tokens; with a digit, as random keys have and words (``hf_hub_download``)
do not."""
_SHAPE_HINTS = ("earer", "sk-", "sk_", "hf-", "hf_", "xai-", "xai_", "AIza")
"""Text holding none of these holds no key shape: looked for first, as a plain search is quicker."""
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_lock = threading.Lock()
_secrets: frozenset[str] = frozenset()
_pieces: tuple[str, ...] | None = None


def remember_secret(value: str | None) -> None:
    """Redact ``value`` (an API key in use) from every text from now on; short or empty values are
    no secret and are ignored."""
    global _secrets, _pieces
    if value is None or len(value.strip()) < MIN_SECRET or value in _secrets:
        return
    with _lock:
        _secrets = _secrets | {value}
        _pieces = _pieces_of(_secrets)


def forget_secrets() -> None:
    """Forget every remembered key (for tests, which use a new key each)."""
    global _secrets, _pieces
    with _lock:
        _secrets, _pieces = frozenset(), None


def redact(text: str) -> str:
    """``text`` without any known key, any piece of one, or anything shaped like a key."""
    pieces = _pieces
    if pieces is not None:
        text = _without_pieces(text, pieces)
    if not any(hint in text for hint in _SHAPE_HINTS):
        return text
    return _SHAPES.sub(lambda m: f"{m['bearer'] or ''}{REDACTED}", text)


def clip(text: str, limit: int) -> str:
    """``text`` redacted, on one line, and then cut to ``limit`` characters with an ellipsis."""
    text = " ".join(redact(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class StreamRedactor:
    """Redacts the known keys from a text that arrives in pieces (a streamed reply): the end of
    what came so far that could be the start of a key is held back until the next piece shows
    whether it is one. Key shapes are left to whole texts: in a reply they are too often examples."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """What of ``piece`` (and of what was held back) may be passed on now."""
        pieces, secrets = _pieces, _secrets
        if pieces is None:
            text, self._held = self._held + piece, ""
            return text
        text = self._held + piece
        keep = _start_of_a_secret(text, secrets)  # a key coming in is held whole, then redacted once
        self._held = text[len(text) - keep :]
        return _without_pieces(text[: len(text) - keep], pieces)

    def finish(self) -> str:
        """What was held back, once the text has ended."""
        text, self._held = self._held, ""
        pieces = _pieces
        return text if pieces is None else _without_pieces(text, pieces)


def looks_like_key(value: str) -> bool:
    """True when ``value``, given where the NAME of an environment variable belongs, is a key: it
    is shaped like one, or is long and could not be a variable's name, or is long and random-looking.
    A short value that is no variable's name ("0") is a mistake, not a secret: it may be quoted."""
    value = value.strip()
    if _SHAPES.fullmatch(value):
        return True
    if not _VARIABLE_NAME.fullmatch(value):
        return len(value) >= MIN_PIECE
    has_digit = any(c.isdigit() for c in value)
    has_lower = any(c.islower() for c in value)
    return len(value) >= 20 and has_digit and has_lower and "_" not in value.strip("_")


def _pieces_of(secrets: frozenset[str]) -> tuple[str, ...]:
    """Every piece of :data:`MIN_PIECE` characters of the secrets (a shorter secret whole)."""
    pieces: set[str] = set()
    for secret in secrets:
        if len(secret) < MIN_PIECE:
            pieces.add(secret)
        else:
            pieces.update(secret[i : i + MIN_PIECE] for i in range(len(secret) - MIN_PIECE + 1))
    return tuple(sorted(pieces))


def _start_of_a_secret(text: str, secrets: frozenset[str]) -> int:
    """The length of the longest end of ``text`` that is part of a secret (0 if none)."""
    longest = min(len(text), max((len(s) for s in secrets), default=0))
    for size in range(longest, 0, -1):
        end = text[-size:]
        if any(end in secret for secret in secrets):
            return size
    return 0


def _without_pieces(text: str, pieces: tuple[str, ...]) -> str:
    """``text`` with every run of overlapping or touching pieces replaced by :data:`REDACTED`
    (found with ``str.find``: the texts may be long, a replay's whole output)."""
    found: list[tuple[int, int]] = []
    for piece in pieces:
        at = text.find(piece)
        while at != -1:
            found.append((at, at + len(piece)))
            at = text.find(piece, at + 1)
    if not found:
        return text
    spans: list[list[int]] = []
    for start, end in sorted(found):
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    out, at = [], 0
    for start, end in spans:
        out += [text[at:start], REDACTED]
        at = end
    out.append(text[at:])
    return "".join(out)
