"""Rules shared by everything that builds a request: which stored messages belong to the
conversation, what the chat format costs per message, and how a session gets its title."""

from __future__ import annotations

from collections.abc import Sequence

from engine.chat import MessageStatus, PromptMessage, StoredMessage
from engine.text.clipping import clip_text
from engine.text.thinking import sent_text

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
    # A reply cut off while its model was still thinking has nothing to send.
    return bool(message.sent_text) or message.role == "user"


def title_from(text: str, limit: int = 48) -> str:
    """A session title from its first message: the first non-empty line, shortened at a word."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = " ".join(line.split())
    if not line:
        return "New chat"
    return clip_text(line, limit)


CONTINUE_INSTRUCTION = (
    "Your previous reply was cut off. Continue it exactly where it stopped: do not repeat anything "
    "already written, and do not comment on the interruption."
)
"""Sent (never stored) after a cut-off reply to ask the model for the rest of it."""


def continuation(prompt: Sequence[PromptMessage], partial: str) -> list[PromptMessage]:
    """The request that asks for the rest of ``partial``: the curated prompt, the partial reply last,
    then the instruction to go on (wherever curation placed the partial reply, it moves to the end).

    A reasoning model's partial reply goes without its thinking, as every reply does; cut off
    while it was still thinking, there is no partial answer to send.
    """
    sent = sent_text("assistant", partial)
    body = [m for m in prompt if not (m.role == "assistant" and m.content == sent)]
    cut = [PromptMessage("assistant", sent)] if sent else []
    return [*body, *cut, PromptMessage("user", CONTINUE_INSTRUCTION)]
