"""The user's changes to standing instructions (``/standing``): the ``standing_edits`` table, each
change written with its ledger line in one transaction; and how far a session was read for them (the
``standing_scans`` table). A part of :class:`sessions.store.SqliteChatStore`."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from sessions.curation_records import write_ledger
from sessions.database import Database
from sessions.rows import inserted_id, now_text

if TYPE_CHECKING:
    from engine.curation.ledger import LedgerEntry
    from engine.protocols.store import StandingScan
    from engine.standing.book import Edit


def _edit_from(row: sqlite3.Row) -> Edit:
    from engine.standing.book import Edit

    return Edit(
        int(row["id"]),
        None if row["message_id"] is None else int(row["message_id"]),
        None if row["original"] is None else str(row["original"]),
        None if row["text"] is None else str(row["text"]),
        int(row["after"]),
    )


def _scan_from(row: sqlite3.Row) -> StandingScan:
    from engine.protocols.store import StandingScan

    said = str(row["said"])
    return StandingScan(int(row["upto"]), tuple(int(i) for i in said.split(",")) if said else ())


class StandingRecords(Database):
    def standing_edits(self, session_id: int) -> list[Edit]:
        return self._read(
            _edit_from,
            "SELECT id, message_id, original, text, after FROM standing_edits WHERE session_id = ?"
            " ORDER BY id",
            (session_id,),
        )

    def save_standing_edit(
        self,
        session_id: int,
        edit: Edit,
        entry: LedgerEntry,
    ) -> Edit:
        """Store ``edit`` (id 0: a new one; else it replaces the stored one) and its ledger line in one
        transaction; the edit with its id."""
        from engine.standing.book import Edit

        with self._transaction() as conn:
            now = now_text()
            if edit.id:
                conn.execute(
                    "UPDATE standing_edits SET text = ? WHERE session_id = ? AND id = ?",
                    (edit.text, session_id, edit.id),
                )
                edit_id = edit.id
            else:
                cursor = conn.execute(
                    "INSERT INTO standing_edits (session_id, message_id, original, text, after, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (session_id, edit.message_id, edit.original, edit.text, edit.after, now),
                )
                edit_id = inserted_id(cursor)
            write_ledger(conn, session_id, [entry], now)
        return Edit(edit_id, edit.message_id, edit.original, edit.text, edit.after)

    def standing_scan(self, session_id: int, version: int) -> StandingScan | None:
        found = self._read(
            _scan_from,
            "SELECT upto, said FROM standing_scans WHERE session_id = ? AND version = ?",
            (session_id, version),
        )
        return found[0] if found else None

    def save_standing_scan(self, session_id: int, version: int, scan: StandingScan) -> None:
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO standing_scans (session_id, version, upto, said)"
                " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?)",
                (session_id, version, scan.upto, ",".join(map(str, scan.said)), session_id),
            )
