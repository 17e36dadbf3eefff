"""The standing-instructions section of the request (issue 36): an instruction stays in the model's
view verbatim however old its message, within a bounded share of the budget; a superseded one comes
back only when the new message is about its subject, and the panel says why. The user has agreed
to have their messages summarized (as `heedful replay --consent summarize`)."""

from __future__ import annotations

from engine.curation.consent import ConsentChoice
from engine.curation.context_building import build_view
from engine.curation.items import Item, ItemState
from engine.curation.result import CurationResult
from engine.standing.section import share
from tests.curationhelpers import Chat, garden

FRENCH = "From now on answer in French."
POSTGRES = "We decided to use PostgreSQL, not MySQL."
SQLITE = "Actually, switch to SQLite."


def standing_text(result: CurationResult) -> str:
    return "\n".join(m.content for m in result.messages if m.form == "standing")


def long_chat() -> tuple[Chat, Item, Item, Item]:
    chat = Chat(policy=ConsentChoice.SUMMARIZE)
    french = chat.say("user", f"Hi there. {FRENCH} Thanks!")
    chat.say("assistant", "D'accord.")
    postgres = chat.say("user", POSTGRES)
    chat.say("assistant", "Noted.")
    for turn in range(6):
        chat.say("user", f"Tell me about the garden {turn}?")
        chat.say("assistant", garden(turn))
    sqlite = chat.say("user", SQLITE)
    chat.say("assistant", "Switching.")
    for turn in range(6, 14):
        chat.say("user", f"Tell me about the garden {turn}?")
        chat.say("assistant", garden(turn))
    return chat, french, postgres, sqlite


def test_an_old_instruction_stays_in_view_verbatim_within_its_share() -> None:
    chat, french, _, _ = long_chat()
    _, result = chat.ask("What flowers grow in the garden?")
    assert french.state is not ItemState.ACTIVE  # curation let the message itself go
    assert all(french.id not in m.sources for m in result.messages if m.form == "verbatim")
    section = [m for m in result.messages if m.form == "standing"]
    assert len(section) == 1
    assert FRENCH in section[0].content and SQLITE in section[0].content
    assert POSTGRES not in section[0].content  # superseded, and the question is not about it
    assert section[0].tokens <= share(result.budget_tokens) <= 0.15 * result.budget_tokens
    assert french.id in section[0].sources
    assert result.tokens <= result.budget_tokens


def test_the_superseded_decision_comes_back_when_the_question_is_about_the_change() -> None:
    chat, _, postgres, sqlite = long_chat()
    new, result = chat.ask("Why did we move off Postgres?")
    text = standing_text(result)
    assert POSTGRES in text and SQLITE in text
    assert text.index(SQLITE) < text.index(POSTGRES)  # the current one, then the earlier under its heading
    assert {postgres.id, sqlite.id} <= set(next(m for m in result.messages if m.form == "standing").sources)
    view = build_view(chat.curation, result, new_id=new.id)
    reasons = {i.id: i.reason for i in view.items}
    assert "replaced standing instruction" in reasons[postgres.id]
    assert "about its subject" in reasons[postgres.id]
    assert "kept: standing instruction" in reasons[sqlite.id]


def test_a_session_without_standing_instructions_sends_no_section() -> None:
    chat = Chat(policy=ConsentChoice.SUMMARIZE)
    for turn in range(3):
        chat.say("user", f"Tell me about the garden {turn}?")
        chat.say("assistant", garden(turn))
    _, result = chat.ask("And the roses?")
    assert standing_text(result) == ""


def test_many_instructions_take_no_more_than_the_share_and_the_newest_go_first() -> None:
    chat = Chat(policy=ConsentChoice.SUMMARIZE)
    said = [f"Always use tool{n} for task{n} and nothing else." for n in range(40)]  # forty subjects
    for text in said:
        chat.say("user", text)
        chat.say("assistant", "Understood.")
    _, result = chat.ask("What flowers grow in the garden?")
    [section] = [m for m in result.messages if m.form == "standing"]
    assert section.tokens <= share(result.budget_tokens)
    assert said[-1] in section.content and said[0] not in section.content
    assert any("standing instructions were left out" in note for note in result.notes)


def test_a_standing_instruction_too_long_to_send_every_turn_is_asked_about_not_cut() -> None:
    chat = Chat(policy=ConsentChoice.SUMMARIZE)
    beds = ", ".join(f"mention the garden bed number {n} and its soil" for n in range(12))
    long = f"From now on, {beds}."
    assert len(long) > 400
    chat.say("user", long)
    chat.say("assistant", "Understood.")
    chat.say("user", "Always use metric units.")
    chat.say("assistant", "Understood.")
    _, result = chat.ask("What flowers grow in the garden?")
    text = standing_text(result)
    assert "Always use metric units." in text
    assert "garden bed" not in text  # never shortened or rewritten by Heedful: left to the user
    assert any("too long to send with every request: shorten it in /standing" in n for n in result.notes)
