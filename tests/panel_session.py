"""A stored session that puts every part of the context panel on screen: summaries, a pinned
message, a recall, and a message of the user's too big to be sent (left out until they choose)."""

from __future__ import annotations

import sqlite3

from sessions import paths
from sessions.store import open_store

FIXED_TIME = "2026-11-22T09:30:00+00:00"
WROTE_IT = "gpt-4o-mini"

TOPICS = ("billing", "deploy", "garden", "concert", "invoice", "cache")


def _answer(turn: int, topic: str) -> str:
    return f"Answer {turn}. " + " ".join(f"For the {topic}, item {n} is fine as it is." for n in range(30))


def _question(turn: int, topic: str) -> str:
    return f"Question {turn} about the {topic}: " + " ".join(
        f"the {topic} step {n} needs checking before Friday." for n in range(8)
    )


VALVE_REPLY = (
    "The irrigation valve VX-200 takes a pressure of 2.5 bar; set the VX-200 timer to 06:00 and "
    "the zone 3 sprinkler to 12 minutes. " * 6
)
DOCUMENT = "Quarterly ledger export, row by row:\n" + "\n".join(
    f"row {n}: invoice INV-{1000 + n} customer acct-{n % 37} amount {n * 7 % 500}.{n % 100:02d} EUR"
    for n in range(560)
)
"""The user's own document: larger than the offline model's whole budget."""
LAST_QUESTION = "Back to the irrigation valve VX-200: what pressure and timer did we set?"


def seed_panel_session() -> dict[str, int]:
    """The session, stored with the engine's decisions of earlier turns: two replies summarized,
    the valve reply pruned (the last question recalls it), the first question pinned, and the
    user's document not sent. Returns the message ids by name."""
    store = open_store(paths.database_path()).store
    session = store.create_session("Ops questions, a week of them")
    ids: dict[str, int] = {}
    script: list[tuple[str, str, str]] = []
    for turn, topic in enumerate(TOPICS):
        script.append((f"q{turn}", "user", _question(turn, topic)))
        script.append((f"a{turn}", "assistant", _answer(turn, topic)))
        if turn == 1:
            script.append(("valve-q", "user", "How should the irrigation valve VX-200 be set up?"))
            script.append(("valve", "assistant", VALVE_REPLY))
        if turn == 3:
            script.append(("document", "user", DOCUMENT))
            script.append(("document-reply", "assistant", "Thanks, I have the export; ask me about any row."))
    script.append(("last", "user", LAST_QUESTION))
    for name, role, content in script:
        message = store.add_message(session.id, role, content, tokens=len(content) // 4, model=WROTE_IT)  # type: ignore[arg-type]
        ids[name] = message.id
    store.close()
    states = [
        (ids["q0"], "active", 1, None),
        (ids["a0"], "summarized", 0, "The billing items 0 to 29 are fine as they are."),
        (ids["a1"], "summarized", 0, "The deploy items 0 to 29 are fine as they are."),
        (ids["valve"], "pruned", 0, None),
        (ids["a3"], "pruned", 0, None),
    ]
    with sqlite3.connect(paths.database_path()) as db:
        db.execute("UPDATE messages SET created_at = ?, updated_at = ?", (FIXED_TIME, FIXED_TIME))
        db.execute("UPDATE sessions SET created_at = ?, updated_at = ?", (FIXED_TIME, FIXED_TIME))
        db.executemany(
            "INSERT INTO item_state (message_id, state, pinned, kept_by_user, summary, forgotten)"
            " VALUES (?, ?, ?, 0, ?, 0)",
            [(message_id, state, pinned, summary) for message_id, state, pinned, summary in states],
        )
    return ids
