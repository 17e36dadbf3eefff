"""Reading and writing a session's curation state: item states, entity records, ledger, policy.

Functions over an open connection; :class:`sessions.store.SqliteChatStore` runs each one in a
transaction under its lock.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from engine.advice.calls import CallUsage
from engine.curation.consent import ConsentChoice
from engine.curation.items import ItemState
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.entities.mentions import EntityKind
from engine.entities.registry import EntityRecord, EntityState
from engine.protocols.store import CurationSnapshot, ItemRecord


def load(conn: sqlite3.Connection, session_id: int, *, after: int = 0) -> CurationSnapshot:
    """A session's item states (of its messages after message ``after``), entity records and
    consent policy."""
    items = {
        int(row[0]): ItemRecord(
            int(row[0]), ItemState(row[1]), bool(row[2]), bool(row[3]), row[4], bool(row[5])
        )
        for row in conn.execute(
            "SELECT i.message_id, i.state, i.pinned, i.kept_by_user, i.summary, i.forgotten FROM item_state i"
            " JOIN messages m ON m.id = i.message_id WHERE m.session_id = ? AND i.message_id > ?",
            (session_id, after),
        )
    }
    entities = [
        EntityRecord(
            ref=row[0],
            kind=EntityKind(row[1]),
            label=row[2],
            turns=[int(t) for t in json.loads(row[3])],
            state=EntityState(row[4]) if row[4] else None,
            reason=row[5],
        )
        for row in conn.execute(
            "SELECT ref, kind, label, turns, state, reason FROM entities WHERE session_id = ?",
            (session_id,),
        )
    ]
    row = conn.execute(
        "SELECT consent_policy, saved_tokens FROM session_curation WHERE session_id = ?", (session_id,)
    ).fetchone()
    policy = ConsentChoice(row[0]) if row and row[0] else None
    return CurationSnapshot(items, entities, policy, int(row[1]) if row else 0)


def saved_tokens(conn: sqlite3.Connection, session_id: int) -> int:
    """The tokens the session's requests saved so far (0 before its first curation)."""
    row = conn.execute(
        "SELECT saved_tokens FROM session_curation WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(row[0]) if row and row[0] else 0


def save(
    conn: sqlite3.Connection,
    session_id: int,
    *,
    items: Sequence[ItemRecord],
    entities: Sequence[EntityRecord],
    ledger: Sequence[LedgerEntry],
    policy: ConsentChoice | None,
    policy_changed: bool,
    saved_tokens: int,
    now: str,
) -> None:
    """Upsert item states and entity records, append ledger entries, set the policy if it changed,
    and add ``saved_tokens`` to the session's total."""
    conn.executemany(
        "INSERT INTO item_state (message_id, state, pinned, kept_by_user, summary, forgotten)"
        " VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (message_id) DO UPDATE SET state = excluded.state, pinned = excluded.pinned,"
        " kept_by_user = excluded.kept_by_user, summary = excluded.summary, forgotten = excluded.forgotten",
        [
            (i.message_id, i.state, int(i.pinned), int(i.kept_by_user), i.summary, int(i.forgotten))
            for i in items
        ],
    )
    conn.executemany(
        "INSERT INTO entities (session_id, ref, kind, label, turns, state, reason)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, ref) DO UPDATE SET"
        " kind = excluded.kind, label = excluded.label, turns = excluded.turns,"
        " state = excluded.state, reason = excluded.reason",
        [(session_id, e.ref, e.kind, e.label, json.dumps(e.turns), e.state, e.reason) for e in entities],
    )
    conn.executemany(
        "INSERT INTO ledger (session_id, turn, kind, target, action, reason, scores, before, after,"
        " requires_consent, reversible, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                session_id,
                e.turn,
                e.kind,
                e.target,
                e.action,
                e.reason,
                json.dumps(e.scores),
                e.before,
                e.after,
                int(e.requires_consent),
                int(e.reversible),
                now,
            )
            for e in ledger
        ],
    )
    if policy_changed:
        conn.execute(
            "INSERT INTO session_curation (session_id, consent_policy) VALUES (?, ?)"
            " ON CONFLICT (session_id) DO UPDATE SET consent_policy = excluded.consent_policy",
            (session_id, policy),
        )
    if saved_tokens:
        conn.execute(
            "INSERT INTO session_curation (session_id, saved_tokens) VALUES (?, ?)"
            " ON CONFLICT (session_id) DO UPDATE SET saved_tokens = saved_tokens + excluded.saved_tokens",
            (session_id, saved_tokens),
        )


def add_calls(conn: sqlite3.Connection, session_id: int, usage: CallUsage) -> None:
    """Add ``usage`` to what the session's curation calls have cost."""
    conn.execute(
        "INSERT INTO session_curation (session_id, calls_prompt_tokens, calls_completion_tokens, calls)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET"
        " calls_prompt_tokens = calls_prompt_tokens + excluded.calls_prompt_tokens,"
        " calls_completion_tokens = calls_completion_tokens + excluded.calls_completion_tokens,"
        " calls = calls + excluded.calls",
        (session_id, usage.prompt_tokens, usage.completion_tokens, usage.calls),
    )


def read_calls(conn: sqlite3.Connection, session_id: int) -> CallUsage:
    """What the session's curation calls have cost so far."""
    row = conn.execute(
        "SELECT calls_prompt_tokens, calls_completion_tokens, calls FROM session_curation"
        " WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return CallUsage(*row) if row else CallUsage()


def read_ledger(conn: sqlite3.Connection, session_id: int, target: str | None) -> list[LedgerEntry]:
    """A session's ledger, oldest first; only the entries about ``target`` when given."""
    query = (
        "SELECT id, kind, turn, target, action, reason, scores, before, after, requires_consent,"
        " reversible FROM ledger WHERE session_id = ?"
    )
    params: tuple[object, ...] = (session_id,)
    if target is not None:
        query += " AND target = ?"
        params = (session_id, target)
    return [
        LedgerEntry(
            kind=EntryKind(row[1]),
            turn=int(row[2]),
            target=row[3],
            action=row[4],
            reason=row[5],
            scores={str(k): float(v) for k, v in json.loads(row[6]).items()},
            before=row[7],
            after=row[8],
            requires_consent=bool(row[9]),
            reversible=bool(row[10]),
            id=int(row[0]),
        )
        for row in conn.execute(query + " ORDER BY id", params)
    ]
