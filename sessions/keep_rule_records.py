"""Keep rules (``/keep``): the ``keep_rules`` table. A part of :class:`sessions.store.SqliteChatStore`;
each change is written with its ledger line in one transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessions.curation_records import write_ledger
from sessions.database import Database
from sessions.rows import inserted_id, now_text

if TYPE_CHECKING:
    from engine.curation.keep_rules import KeepRule
    from engine.curation.ledger import LedgerEntry


class KeepRuleRecords(Database):
    def keep_rules(self, session_id: int) -> list[KeepRule]:
        from engine.curation.keep_rules import rule

        return self._read(
            lambda row: rule(int(row["id"]), str(row["text"])),
            "SELECT id, text FROM keep_rules WHERE session_id = ? ORDER BY id",
            (session_id,),
        )

    def add_keep_rule(self, session_id: int, text: str, entry: LedgerEntry) -> KeepRule:
        from engine.curation.keep_rules import rule

        with self._transaction() as conn:
            now = now_text()
            cursor = conn.execute(
                "INSERT INTO keep_rules (session_id, text, created_at) VALUES (?, ?, ?)",
                (session_id, text, now),
            )
            write_ledger(conn, session_id, [entry], now)
        return rule(inserted_id(cursor), text)

    def remove_keep_rule(self, session_id: int, rule_id: int, entry: LedgerEntry) -> bool:
        with self._transaction() as conn:
            gone = conn.execute(
                "DELETE FROM keep_rules WHERE session_id = ? AND id = ?", (session_id, rule_id)
            ).rowcount
            if gone:
                write_ledger(conn, session_id, [entry], now_text())
        return bool(gone)
