"""A reasoning model's thinking: stored with its reply, shown apart from it, never sent back.

Reasoning models (DeepSeek-R1, Qwen3, QwQ and others, behind Ollama, vLLM, llama.cpp or LM Studio)
think before they answer: either inline, as a ``<think>…</think>`` block that opens the reply's
content, or in a ``reasoning_content`` (or ``reasoning``) field of each chunk, which the provider
turns into the same inline block. The block stays in the store and in exports with its reply, but
the context carries only the answer: their makers ask that the thinking not be sent back, and it
would spend the budget (and fill the context panel with its entities) on a chain of thought the
next answer does not need.
"""

from __future__ import annotations

OPEN = "<think>"
CLOSE = "</think>"


def split_thinking(text: str) -> tuple[str, str]:
    """A reply's (thinking, answer): ``("", text)`` when it does not open with a think block.

    A block not closed yet (the model still thinking, or cut off while it was) is all thinking.
    """
    opened = text.lstrip()
    if not opened.startswith(OPEN):
        return "", text
    body = opened[len(OPEN) :]
    end = body.find(CLOSE)
    if end < 0:
        return body.strip(), ""
    return body[:end].strip(), body[end + len(CLOSE) :].lstrip()


def sent_text(role: str, content: str) -> str:
    """What the model is sent of a message: a reply without its thinking; anything else as it is
    (the user's words are never changed, even if they open with ``<think>``)."""
    return split_thinking(content)[1] if role == "assistant" else content


class ThinkingSplitter:
    """Splits a reply's text, as it streams in pieces, into its thinking and its answer.

    Fed the pieces in order, it gives back what of each is thinking and what is answer, holding
    back only what may be the start of a tag that the next piece completes, so that the parts
    joined equal :func:`split_thinking` of the whole text.
    """

    def __init__(self, text: str = "") -> None:
        self._held = ""
        """Text not placed yet: the opening before it is known to be a think block or not, or the
        end of the thinking that may be the start of the closing tag."""
        self._state = "start"
        """"start" (nothing but whitespace yet), "thinking", or "answer"."""
        self._trim_answer = False
        """The answer's leading whitespace after the block is dropped, as split_thinking does."""
        if text:
            self.feed(text)

    @property
    def thinking(self) -> bool:
        """Whether the reply opens with a think block that is not closed yet."""
        return self._state == "thinking"

    def feed(self, piece: str) -> tuple[str, str]:
        """The (thinking, answer) text that ``piece`` adds, as far as it can be told yet."""
        text = self._held + piece
        self._held = ""
        if self._state == "start":
            opened = text.lstrip()
            if not opened:
                self._held = text
                return "", ""
            if OPEN.startswith(opened[: len(OPEN)]) and len(opened) < len(OPEN):
                self._held = text  # "<th": may still be the tag
                return "", ""
            if not opened.startswith(OPEN):
                self._state = "answer"
                return "", text
            self._state = "thinking"
            text = opened[len(OPEN) :]
        if self._state == "thinking":
            end = text.find(CLOSE)
            if end < 0:
                keep = _partial_tag(text)
                self._held = text[len(text) - keep :] if keep else ""
                return text[: len(text) - keep], ""
            self._state, self._trim_answer = "answer", True
            thinking, text = text[:end], text[end + len(CLOSE) :]
            return thinking, self._answer(text)
        return "", self._answer(text)

    def finish(self) -> tuple[str, str]:
        """What was held back, once the reply is whole."""
        held, self._held = self._held, ""
        if self._state == "thinking":
            return held, ""
        if self._state == "start":
            self._state = "answer"
        return "", self._answer(held) if held else ""

    def _answer(self, text: str) -> str:
        if self._trim_answer:
            stripped = text.lstrip()
            if not stripped:
                return ""
            self._trim_answer = False
            return stripped
        return text


def _partial_tag(text: str) -> int:
    """How many of ``text``'s last characters may begin the closing tag."""
    for size in range(min(len(CLOSE) - 1, len(text)), 0, -1):
        if CLOSE.startswith(text[-size:]):
            return size
    return 0
