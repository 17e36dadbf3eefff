"""The recent turns when they do not all fit: the user's words are sent before the replies, so a
long reply never pushes the user's own paste out of a request unasked (found in a tmux walk at a
1,500-token window: an 800-token paste and its 800-token echo; the next message's request sent
the echo and left the paste out, asking only afterwards)."""

from __future__ import annotations

from engine.curation.items import ItemState
from tests.curationhelpers import Chat, sent

# About 800 tokens each: one of them fits beside the short messages, not both.
PASTE = " ".join(f"line {n}: the login handler reads session data from redis" for n in range(66))
ECHO = " ".join(f"step {n}: the cache keeps the session for a day then drops it" for n in range(53))


def test_a_reply_is_left_out_before_the_users_paste_of_the_same_turn() -> None:
    chat = Chat()
    chat.say("user", "Hi, I'm Maya. I'm debugging a KeyError on login.")
    chat.say("assistant", "Happy to help: what does the traceback say?")
    paste = chat.say("user", PASTE)
    echo = chat.say("assistant", ECHO)
    _, result = chat.ask("and what about the cache?")
    whole = sent(result)
    assert paste.id in whole, "the user's paste is sent, not left out to make room for a reply"
    assert echo.id not in whole
    assert result.consent is None, "nothing of the user's needs asking about"
    assert paste.id not in result.left_out
    assert echo.id in result.left_out
    assert result.tokens <= result.budget_tokens
    # In its place, a quick summary of it, for this request only: the reply itself is not
    # pruned or summarized.
    (section,) = [m for m in result.messages if m.form == "summary"]
    assert echo.id in section.sources and "the cache keeps the session" in section.content
    chat.curation.apply(result)
    assert chat.curation.state.by_id[echo.id].state is ItemState.ACTIVE


def test_when_everything_fits_the_recent_turns_all_go_in_order() -> None:
    chat = Chat(window=4_000)
    chat.say("user", "Hi, I'm Maya.")
    paste = chat.say("user", PASTE)
    echo = chat.say("assistant", ECHO)
    new, result = chat.ask("and what about the cache?")
    verbatim = [s for m in result.messages if m.form == "verbatim" for s in m.sources]
    assert verbatim[-3:] == [paste.id, echo.id, new.id]


def test_the_summaries_never_take_a_request_past_the_budget_the_recent_turns_nearly_fill() -> None:
    # The summary section's share of the budget was set aside whole even when the recent turns
    # left less than it: requests went up to 48 tokens past the budget with no word of it.
    for words in range(284, 304, 2):
        chat = Chat()
        for turn in range(6):
            chat.say("user", f"Question {turn} about the garden and its roses in spring {turn}?")
            chat.say("assistant", " ".join(f"The garden note {turn}.{j} is about roses." for j in range(2)))
        chat.say("user", "Now a question about roses: " + " ".join(f"word{k}" for k in range(words)))
        chat.say("assistant", "Roses answer: " + " ".join(f"reply{k}" for k in range(200)))
        _, result = chat.ask("And the roses in spring?")
        assert not result.over_budget and not result.past_budget
        assert result.tokens <= result.budget_tokens, (words, result.tokens)
