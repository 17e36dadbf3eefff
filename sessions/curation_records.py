"""A session's curation state: item states, entity records, ledger, consent policy, and what the
curation saved and cost. A part of :class:`sessions.store.SqliteChatStore`."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from sessions.database import Database
from sessions.rows import now_text, select, select_in, select_one

if TYPE_CHECKING:
    from engine.advice.calls import CallUsage
    from engine.chat import StoredMessage
    from engine.curation.consent import ConsentChoice
    from engine.curation.ledger import LedgerEntry
    from engine.entities.registry import EntityRecord
    from engine.protocols.store import CurationSnapshot, ItemRecord


def _item_from(row: sqlite3.Row) -> ItemRecord:
    from engine.curation.items import ItemState
    from engine.protocols.store import ItemRecord

    return ItemRecord(
        message_id=int(row["message_id"]),
        state=ItemState(row["state"]),
        pinned=bool(row["pinned"]),
        kept_by_user=bool(row["kept_by_user"]),
        summary=row["summary"],
        forgotten=bool(row["forgotten"]),
    )


def _entity_from(row: sqlite3.Row) -> EntityRecord:
    from engine.entities.mentions import EntityKind
    from engine.entities.registry import EntityRecord, EntityState

    return EntityRecord(
        ref=row["ref"],
        kind=EntityKind(row["kind"]),
        label=row["label"],
        turns=[int(t) for t in json.loads(row["turns"])],
        state=EntityState(row["state"]) if row["state"] else None,
        reason=row["reason"],
    )


def _entry_from(row: sqlite3.Row) -> LedgerEntry:
    from engine.curation.ledger import EntryKind, LedgerEntry

    return LedgerEntry(
        kind=EntryKind(row["kind"]),
        turn=int(row["turn"]),
        target=row["target"],
        action=row["action"],
        reason=row["reason"],
        scores={str(k): float(v) for k, v in json.loads(row["scores"]).items()},
        before=row["before"],
        after=row["after"],
        requires_consent=bool(row["requires_consent"]),
        reversible=bool(row["reversible"]),
        id=int(row["id"]),
    )


def write_ledger(conn: sqlite3.Connection, session_id: int, entries: Sequence[LedgerEntry], now: str) -> None:
    """Append ``entries`` to the session's ledger, in the caller's transaction (so a change and its
    ledger lines are written together)."""
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
            for e in entries
        ],
    )


_PINNED_BEFORE = (
    "FROM item_state i INDEXED BY item_state_pinned CROSS JOIN messages m ON m.id = i.message_id"
    " WHERE i.pinned = 1 AND i.message_id <= ? AND i.forgotten = 0 AND m.session_id = ?"
)
"""The pinned, not taken out, messages of a session up to an id: the pinned rows first, through
their own index (a CROSS JOIN keeps that order; SQLite would walk the session's history)."""


class CurationRecords(Database):
    """The curation part of the store (see the module)."""

    def load_curation(self, session_id: int, *, after: int = 0) -> CurationSnapshot:
        from engine.curation.consent import ConsentChoice
        from engine.protocols.store import CurationSnapshot

        with self._transaction() as conn:
            columns = "i.message_id, i.state, i.pinned, i.kept_by_user, i.summary, i.forgotten"
            items = select(
                conn,
                f"SELECT {columns} FROM item_state i JOIN messages m ON m.id = i.message_id"
                " WHERE m.session_id = ? AND i.message_id > ?",
                (session_id, after),
            )
            if after:  # and those pinned before (through their own index: a long history is not read)
                items += select(conn, f"SELECT {columns} {_PINNED_BEFORE}", (after, session_id))
            row = select_one(
                conn,
                "SELECT consent_policy, saved_tokens FROM session_curation WHERE session_id = ?",
                (session_id,),
            )
            return CurationSnapshot(
                items={item.message_id: item for item in map(_item_from, items)},
                policy=ConsentChoice(row["consent_policy"]) if row and row["consent_policy"] else None,
                saved_tokens=int(row["saved_tokens"]) if row else 0,
            )

    def load_entities(self, session_id: int, refs: Collection[str]) -> list[EntityRecord]:
        sql = (
            "SELECT ref, kind, label, turns, state, reason FROM entities WHERE session_id = ? AND ref IN ({})"
        )
        with self._transaction() as conn:
            return [_entity_from(row) for row in select_in(conn, sql, (session_id,), list(refs))]

    def pinned_before(self, session_id: int, upto: int) -> list[StoredMessage]:
        from sessions.message_records import MESSAGE_COLUMNS, message_from

        columns = ", ".join(f"m.{c.strip()}" for c in MESSAGE_COLUMNS.split(","))
        with self._transaction() as conn:
            rows = select(conn, f"SELECT {columns} {_PINNED_BEFORE} ORDER BY m.id", (upto, session_id))
            return [message_from(row) for row in rows]

    def forgotten_between(self, session_id: int, after: int, upto: int) -> set[int]:
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT i.message_id FROM item_state i JOIN messages m ON m.id = i.message_id"
                " WHERE i.forgotten = 1 AND i.message_id > ? AND i.message_id <= ? AND m.session_id = ?",
                (after, upto, session_id),
            )
            return {int(message_id) for (message_id,) in rows}

    def saved_tokens(self, session_id: int) -> int:
        """The tokens the session's requests saved against sending everything verbatim (0 before
        its first curation)."""
        with self._transaction() as conn:
            row = select_one(
                conn, "SELECT saved_tokens FROM session_curation WHERE session_id = ?", (session_id,)
            )
            return int(row["saved_tokens"]) if row and row["saved_tokens"] else 0

    def save_curation(
        self,
        session_id: int,
        *,
        items: Sequence[ItemRecord],
        entities: Sequence[EntityRecord],
        ledger: Sequence[LedgerEntry],
        policy: ConsentChoice | None = None,
        policy_changed: bool = False,
        saved_tokens: int = 0,
    ) -> None:
        """Upsert item states and entity records, append ledger entries, set the policy if it
        changed, and add ``saved_tokens`` to the session's total: one transaction."""
        with self._transaction() as conn:
            now = now_text()
            conn.executemany(
                "INSERT INTO item_state (message_id, state, pinned, kept_by_user, summary, forgotten)"
                " VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (message_id) DO UPDATE SET state = excluded.state, pinned = excluded.pinned,"
                " kept_by_user = excluded.kept_by_user, summary = excluded.summary,"
                " forgotten = excluded.forgotten",
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
                [
                    (session_id, e.ref, e.kind, e.label, json.dumps(e.turns), e.state, e.reason)
                    for e in entities
                ],
            )
            write_ledger(conn, session_id, ledger, now)
            if policy_changed:
                conn.execute(
                    "INSERT INTO session_curation (session_id, consent_policy) VALUES (?, ?)"
                    " ON CONFLICT (session_id) DO UPDATE SET consent_policy = excluded.consent_policy",
                    (session_id, policy),
                )
            if saved_tokens:
                conn.execute(
                    "INSERT INTO session_curation (session_id, saved_tokens) VALUES (?, ?) ON CONFLICT"
                    " (session_id) DO UPDATE SET saved_tokens = saved_tokens + excluded.saved_tokens",
                    (session_id, saved_tokens),
                )

    def add_curation_calls(self, session_id: int, usage: CallUsage) -> None:
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO session_curation"
                " (session_id, calls_prompt_tokens, calls_completion_tokens, calls) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (session_id) DO UPDATE SET"
                " calls_prompt_tokens = calls_prompt_tokens + excluded.calls_prompt_tokens,"
                " calls_completion_tokens = calls_completion_tokens + excluded.calls_completion_tokens,"
                " calls = calls + excluded.calls",
                (session_id, usage.prompt_tokens, usage.completion_tokens, usage.calls),
            )

    def curation_calls(self, session_id: int) -> CallUsage:
        from engine.advice.calls import CallUsage

        with self._transaction() as conn:
            row = select_one(
                conn,
                "SELECT calls_prompt_tokens, calls_completion_tokens, calls FROM session_curation"
                " WHERE session_id = ?",
                (session_id,),
            )
            if row is None:
                return CallUsage()
            return CallUsage(
                prompt_tokens=row["calls_prompt_tokens"],
                completion_tokens=row["calls_completion_tokens"],
                calls=row["calls"],
            )

    def ledger(self, session_id: int, *, target: str | None = None) -> list[LedgerEntry]:
        query = (
            "SELECT id, kind, turn, target, action, reason, scores, before, after, requires_consent,"
            " reversible FROM ledger WHERE session_id = ?"
        )
        params: tuple[object, ...] = (session_id,)
        if target is not None:
            query += " AND target = ?"
            params = (session_id, target)
        return self._read(_entry_from, query + " ORDER BY id", params)
