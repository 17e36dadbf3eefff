"""Keep rules (``/keep``): the ``keep_rules`` table. A part of :class:`sessions.store.SqliteChatStore`;
each change is written with its ledger line in one transaction."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from sessions.database import Database
from sessions.rows import inserted_id, now_text, select

if TYPE_CHECKING:
    from engine.curation.keep_rules import KeepRule
    from engine.curation.ledger import LedgerEntry


def _write_ledger(conn: sqlite3.Connection, session_id: int, entry: LedgerEntry, now: str) -> None:
    conn.execute(
        "INSERT INTO ledger (session_id, turn, kind, target, action, reason, scores, before, after,"
        " requires_consent, reversible, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            entry.turn,
            entry.kind,
            entry.target,
            entry.action,
            entry.reason,
            json.dumps(entry.scores),
            entry.before,
            entry.after,
            int(entry.requires_consent),
            int(entry.reversible),
            now,
        ),
    )


class KeepRuleRecords(Database):
    def keep_rules(self, session_id: int) -> list[KeepRule]:
        from engine.curation.keep_rules import rule

        with self._transaction() as conn:
            rows = select(
                conn, "SELECT id, text FROM keep_rules WHERE session_id = ? ORDER BY id", (session_id,)
            )
        return [rule(int(row["id"]), str(row["text"])) for row in rows]

    def add_keep_rule(self, session_id: int, text: str, entry: LedgerEntry) -> KeepRule:
        from engine.curation.keep_rules import rule

        with self._transaction() as conn:
            now = now_text()
            cursor = conn.execute(
                "INSERT INTO keep_rules (session_id, text, created_at) VALUES (?, ?, ?)",
                (session_id, text, now),
            )
            _write_ledger(conn, session_id, entry, now)
        return rule(inserted_id(cursor), text)

    def remove_keep_rule(self, session_id: int, rule_id: int, entry: LedgerEntry) -> bool:
        with self._transaction() as conn:
            gone = conn.execute(
                "DELETE FROM keep_rules WHERE session_id = ? AND id = ?", (session_id, rule_id)
            ).rowcount
            if gone:
                _write_ledger(conn, session_id, entry, now_text())
        return bool(gone)
