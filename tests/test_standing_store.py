"""Standing instructions survive a restart: recognised again from the stored messages, with the
user's edits, removals and additions stored per session, one ledger line "by you" each. The context
service the app uses, a real store, the fake OpenAI server."""

from __future__ import annotations

from engine.curation.ledger import EntryKind
from tests.fake_openai import FakeOpenAIServer
from tests.turnhelpers import Start, send_text


async def test_edits_removals_and_additions_are_kept_across_a_reopen(
    fake_server: FakeOpenAIServer, started: Start
) -> None:
    fake_server.reply = "Noted."
    with started() as (turns, context):
        session_id, _ = await send_text(turns, None, "From now on answer in French.")
        await send_text(turns, session_id, "Don't use emojis. We decided to use PostgreSQL, not MySQL.")
        other, _ = await send_text(turns, None, "Always use metric units.")
        french, emojis, _ = await context.standing(session_id)
        await context.change_standing(session_id, french.key, "From now on answer in French, briefly.")
        await context.change_standing(session_id, emojis.key, None)
        entries, view = await context.change_standing(session_id, None, "Actually, switch to SQLite.")
        assert view.standing is not None and "Actually, switch to SQLite." in view.standing.text
        assert [(e.text, e.current) for e in entries] == [
            ("From now on answer in French, briefly.", True),
            ("We decided to use PostgreSQL, not MySQL.", False),
            ("Actually, switch to SQLite.", True),
        ]

    with started() as (_, context):
        assert await context.standing(session_id) == entries
        assert [e.text for e in await context.standing(other)] == ["Always use metric units."]  # per session
        lines = [e for e in await context.ledger(session_id) if e.kind is EntryKind.RULE]
        assert [(e.action, e.reason) for e in lines] == [
            ("standing instruction edited", 'by you: "From now on answer in French, briefly."'),
            ("standing instruction removed", 'by you: "Don\'t use emojis."'),
            ("standing instruction added", 'by you: "Actually, switch to SQLite."'),
        ]
