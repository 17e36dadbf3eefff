"""The built-in offline model: answers locally and deterministically with a digest of its input.

It lets a newcomer with no key and no network use every part of the app, and it shows what a
real model would have been sent. Its replies stream word by word so they take the same path
through the app as a real model's.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator, Sequence

from engine.chat import OFFLINE_MODEL, PromptMessage
from engine.curation.prompt import MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS
from engine.protocols.models import ModelEvent, ReplyFinished, TextDelta, TokenCounter, UsageReport
from engine.text.terms import pieces

OFFLINE_MODEL_NAME = OFFLINE_MODEL
OFFLINE_CONTEXT_WINDOW = 8192
_QUOTE_CHARS = 160


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {plural or word + 's'}"


def digest(messages: Sequence[PromptMessage], counter: TokenCounter) -> str:
    """The offline model's reply to ``messages``: what it received, in numbers."""
    roles = Counter(m.role for m in messages)
    tokens = REPLY_PRIMING_TOKENS + sum(counter.count(m.content) + MESSAGE_OVERHEAD_TOKENS for m in messages)
    approx = "" if counter.exact else "~"
    last = next((m.content for m in reversed(messages) if m.role == "user"), "")
    # In pieces: one split() of a 10 MB paste holds the GIL, and the UI, for a visible moment.
    words = sum(len(piece.split()) for piece in pieces(last))
    parts = [
        "**Offline model.** No model is connected, so this answer was made on your machine.",
        "",
        f"I received {_plural(len(messages), 'message')} ({roles['system']} system, "
        f"{roles['user']} from you, {_plural(roles['assistant'], 'reply', 'replies')}), "
        f"{approx}{tokens:,} tokens in all.",
        f"Your last message has {_plural(len(last), 'character')}, {_plural(words, 'word')} "
        f"and {approx}{_plural(counter.count(last), 'token')}.",
    ]
    opening = " ".join(last[: _QUOTE_CHARS * 8].split())
    first_line = opening[:_QUOTE_CHARS]
    if first_line:
        ellipsis = "…" if len(opening) > _QUOTE_CHARS or len(last) > _QUOTE_CHARS * 8 else ""
        parts += ["", f"> {first_line}{ellipsis}"]
    parts += ["", "Press **F3** to connect a real model (OpenAI, Ollama or any OpenAI-compatible server)."]
    return "\n".join(parts)


class OfflineModel:
    """A :class:`engine.protocols.models.ChatModel` that needs no network."""

    def __init__(self, counter: TokenCounter, *, word_delay: float = 0.004) -> None:
        self._counter = counter
        self._word_delay = word_delay

    @property
    def name(self) -> str:
        return OFFLINE_MODEL_NAME

    @property
    def is_offline(self) -> bool:
        return True

    @property
    def context_window(self) -> int:
        return OFFLINE_CONTEXT_WINDOW

    async def warm_up(self) -> None:
        """Nothing to get ready: it answers locally."""

    async def window_limit(self) -> int | None:
        return None  # the offline model takes whatever it is given

    async def aclose(self) -> None:
        """Nothing to release: the offline model holds no connections."""

    async def stream(
        self, messages: Sequence[PromptMessage], *, temperature: float | None = None
    ) -> AsyncGenerator[ModelEvent, None]:
        del temperature  # the digest is deterministic whatever it is asked
        # Counting a large paste takes a while; keep it off the caller's event loop.
        text = await asyncio.to_thread(digest, messages, self._counter)
        pieces = text.split(" ")
        for i, piece in enumerate(pieces):
            yield TextDelta(piece if i == len(pieces) - 1 else piece + " ")
            if self._word_delay:
                await asyncio.sleep(self._word_delay)
        prompt_tokens = await asyncio.to_thread(lambda: sum(self._counter.count(m.content) for m in messages))
        yield UsageReport(prompt_tokens=prompt_tokens, completion_tokens=len(pieces))
        yield ReplyFinished("stop")
