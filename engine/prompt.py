"""What the model is sent, and what that costs.

The walking skeleton sends the whole conversation verbatim; the curation engine replaces
:func:`build_prompt` with a budgeted plan. Both share the rules here about which stored messages
belong to the conversation at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.chat import MessageStatus, PromptMessage, StoredMessage

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens the chat format adds around each message (role and separators), as OpenAI counts them."""
REPLY_PRIMING_TOKENS = 3
"""Tokens that prime the assistant's reply in every request."""


def in_conversation(message: StoredMessage) -> bool:
    """Whether a stored message is part of the conversation the model sees.

    Superseded replies were replaced by a retry, failed ones hold no text, and a reply still
    streaming is the one being written. An interrupted reply stays: the user read it.
    """
    if message.status in (MessageStatus.SUPERSEDED, MessageStatus.FAILED, MessageStatus.STREAMING):
        return False
    return bool(message.content) or message.role == "user"


def build_prompt(system_prompt: str, history: Sequence[StoredMessage]) -> list[PromptMessage]:
    """The messages of the next request: the system prompt, then the conversation verbatim."""
    prompt = [PromptMessage("system", system_prompt)] if system_prompt else []
    prompt.extend(PromptMessage(m.role, m.content) for m in history if in_conversation(m))
    return prompt


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """How much of the model's window the next request would take."""

    system_tokens: int
    conversation_tokens: int
    message_count: int
    window: int
    exact: bool
    """False when any count is an approximation."""

    @property
    def total(self) -> int:
        return self.system_tokens + self.conversation_tokens + REPLY_PRIMING_TOKENS

    @property
    def fraction(self) -> float:
        return self.total / self.window if self.window else 1.0


def measure_context(
    system_tokens: int, history: Sequence[StoredMessage], *, window: int, exact: bool
) -> ContextUsage:
    """Tokens of the next request from the stored per-message counts (no re-tokenizing)."""
    included = [m for m in history if in_conversation(m)]
    conversation = sum((m.tokens or 0) + MESSAGE_OVERHEAD_TOKENS for m in included)
    uncounted = any(m.tokens is None for m in included)
    return ContextUsage(
        system_tokens=system_tokens + (MESSAGE_OVERHEAD_TOKENS if system_tokens else 0),
        conversation_tokens=conversation,
        message_count=len(included),
        window=window,
        exact=exact and not uncounted,
    )


def title_from(text: str, limit: int = 48) -> str:
    """A session title from its first message: the first non-empty line, shortened at a word."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = " ".join(line.split())
    if not line:
        return "New chat"
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,.;:") + "…"
