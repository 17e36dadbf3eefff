"""Which stored messages a request may carry, and session titles."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.chat import MessageStatus, Role, StoredMessage
from engine.curation.prompt import in_conversation, title_from
from engine.text.clipping import clip_text

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


@given(st.text(alphabet=" ,.;:ab", max_size=80), st.integers(min_value=2, max_value=60))
def test_a_clipped_text_fits_and_is_the_text_up_to_a_word(text: str, limit: int) -> None:
    """Titles, memory labels and summaries are clipped alike: what fits is kept whole, the rest is
    a start of the text, never over the limit, marked as cut."""
    clipped = clip_text(text, limit)
    assert len(clipped) <= limit
    if len(text) <= limit:
        assert clipped == text
    else:
        assert clipped.endswith("…")
        assert text.startswith(clipped[:-1])
        assert not clipped[:-1].endswith((" ", ",", ".", ";", ":"))
