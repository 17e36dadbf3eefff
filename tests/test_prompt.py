"""What goes into a request, and what it costs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.chat import MessageStatus, PromptMessage, Role, StoredMessage
from engine.prompt import (
    MESSAGE_OVERHEAD_TOKENS,
    REPLY_PRIMING_TOKENS,
    build_prompt,
    in_conversation,
    measure_context,
    title_from,
)

NOW = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)


def msg(
    i: int, role: Role, content: str, status: MessageStatus = MessageStatus.COMPLETE, tokens: int | None = 5
) -> StoredMessage:
    return StoredMessage(i, 1, role, content, status, NOW, tokens=tokens)


@pytest.mark.parametrize(
    ("message", "sent"),
    [
        (msg(1, "user", "hi"), True),
        (msg(2, "assistant", "hello"), True),
        # The user read an interrupted reply, so the model should know what it said.
        (msg(3, "assistant", "partial", MessageStatus.INTERRUPTED), True),
        # A failed reply holds no text; a superseded one was replaced by a retry.
        (msg(4, "assistant", "", MessageStatus.FAILED), False),
        (msg(5, "assistant", "old answer", MessageStatus.SUPERSEDED), False),
        # The reply being written is not part of its own prompt.
        (msg(6, "assistant", "", MessageStatus.STREAMING), False),
    ],
)
def test_which_messages_the_model_sees(message: StoredMessage, sent: bool) -> None:
    assert in_conversation(message) is sent


def test_prompt_is_system_then_conversation_verbatim() -> None:
    history = [
        msg(1, "user", "first"),
        msg(2, "assistant", "old", MessageStatus.SUPERSEDED),
        msg(3, "assistant", "answer"),
        msg(4, "user", "second\nline"),
    ]
    assert build_prompt("Be brief.", history) == [
        PromptMessage("system", "Be brief."),
        PromptMessage("user", "first"),
        PromptMessage("assistant", "answer"),
        PromptMessage("user", "second\nline"),
    ]


def test_no_system_message_when_the_prompt_is_empty() -> None:
    assert build_prompt("", [msg(1, "user", "x")]) == [PromptMessage("user", "x")]


def test_context_usage_adds_overheads_and_flags_uncounted_messages() -> None:
    history = [msg(1, "user", "a", tokens=10), msg(2, "assistant", "b", tokens=20)]
    usage = measure_context(7, history, window=1000, exact=True)
    assert (
        usage.total == 7 + MESSAGE_OVERHEAD_TOKENS + 30 + 2 * MESSAGE_OVERHEAD_TOKENS + REPLY_PRIMING_TOKENS
    )
    assert usage.message_count == 2
    assert usage.exact
    assert usage.fraction == pytest.approx(usage.total / 1000)
    uncounted = measure_context(7, [msg(1, "user", "a", tokens=None)], window=1000, exact=True)
    assert not uncounted.exact


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("hello", "hello"),
        ("\n\n  Fix the   login bug \nmore detail", "Fix the login bug"),
        ("   \n\t", "New chat"),
        # Long first lines are cut at a word boundary and marked as cut.
        (
            "why does the JWT validation in auth.py fail only for tokens issued before midnight UTC",
            "why does the JWT validation in auth.py fail…",
        ),
    ],
)
def test_titles_come_from_the_first_line(text: str, title: str) -> None:
    assert title_from(text) == title
    assert len(title_from(text)) <= 48
