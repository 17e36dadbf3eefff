"""The message-vector cache (schema v11 ``message_vectors``): a vector is kept for the text it was
made from and the model that made it. A part of :class:`sessions.store.SqliteChatStore`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sessions.database import Database
from sessions.rows import select_in

if TYPE_CHECKING:
    from engine.protocols.vectors import StoredVector


class EmbeddingRecords(Database):
    """The vectors part of the store (see the module)."""

    def load_vectors(self, model: str, hashes: Mapping[int, str]) -> dict[int, bytes]:
        found: dict[int, bytes] = {}
        sql = (
            "SELECT message_id, text_hash, vector FROM message_vectors WHERE model = ? AND message_id IN ({})"
        )
        with self._transaction() as conn:
            for row in select_in(conn, sql, (model,), list(hashes)):
                key = int(row["message_id"])
                if hashes.get(key) == row["text_hash"]:  # else the text changed: made again
                    found[key] = bytes(row["vector"])
        return found

    def save_vectors(self, vectors: Sequence[StoredVector]) -> None:
        if not vectors:
            return
        with self._transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO message_vectors (message_id, model, text_hash, vector)"
                " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?)",
                [(v.message_id, v.model, v.text_hash, v.vector, v.message_id) for v in vectors],
            )
