"""Keep rules survive a restart: stored per session, with one ledger line "by you" for each rule
added or removed. The context service the app uses, a real store, the fake OpenAI server."""

from __future__ import annotations

from pathlib import Path

from engine.curation.ledger import EntryKind
from sessions.store import SqliteChatStore
from tests.fake_openai import FakeOpenAIServer
from tests.turnhelpers import Start, send_text


async def test_rules_are_kept_across_a_reopen_and_each_change_is_one_ledger_line(
    db_path: Path, fake_server: FakeOpenAIServer, started: Start
) -> None:
    fake_server.reply = "The database schema has a users table and an orders table."
    with started() as (turns, context):
        session_id, _ = await send_text(turns, None, "How should the database schema look?")
        other, _ = await send_text(turns, None, "Something else entirely.")
        rule, matching, _ = await context.add_keep_rule(session_id, "anything about the database schema")
        assert matching == 2  # the question and the reply
        await context.add_keep_rule(session_id, "invoices")

    with started() as (_, context):
        rules = await context.keep_rules(session_id)
        assert [r.text for r in rules] == ["anything about the database schema", "invoices"]
        assert rules[0].id == rule.id
        assert await context.keep_rules(other) == ()  # per session
        await context.remove_keep_rule(session_id, rule.id)
        assert [r.text for r in await context.keep_rules(session_id)] == ["invoices"]
        lines = [e for e in await context.ledger(session_id) if e.kind is EntryKind.RULE]
        assert [(e.action, e.reason) for e in lines] == [
            ("keep rule added", 'by you: "anything about the database schema"'),
            ("keep rule added", 'by you: "invoices"'),
            ("keep rule removed", 'by you: "anything about the database schema"'),
        ]
    store = SqliteChatStore(db_path)
    try:
        assert [r.text for r in store.keep_rules(session_id)] == ["invoices"]
    finally:
        store.close()
