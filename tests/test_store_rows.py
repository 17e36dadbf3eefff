"""The store reads its rows by column name, in one place (issue 35): a column added to or moved in a
SELECT cannot shift every field after it into the wrong one of a record."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SESSIONS = Path(__file__).resolve().parents[1] / "sessions"
ROWS = SESSIONS / "rows.py"
"""The one module that fetches rows from a cursor: as ``sqlite3.Row``, read by name."""


def _sources() -> list[Path]:
    return sorted(path for path in SESSIONS.glob("*.py") if path != ROWS)


@pytest.mark.parametrize("path", _sources(), ids=lambda path: path.name)
def test_the_store_fetches_rows_only_through_sessions_rows(path: Path) -> None:
    tree = ast.parse(path.read_text("utf-8"))
    fetches = [
        f"line {node.lineno}: .{node.func.attr}()"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in {"fetchone", "fetchall", "fetchmany"}
    ]
    casts = [
        f"line {node.lineno}: cast()"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cast"
    ]
    assert fetches + casts == [], (
        f"{path.name} reads rows by position: use sessions.rows (select, select_one)"
    )


def test_a_row_is_read_by_column_name_whatever_the_order_of_the_select() -> None:
    import sqlite3

    from sessions.message_records import message_from
    from sessions.rows import select

    conn = sqlite3.connect(":memory:")
    row = select(
        conn,
        "SELECT 'oops' AS error, 'complete' AS status, 7 AS id, 'assistant' AS role, 'hi' AS content,"
        " NULL AS model, 3 AS session_id, 12 AS tokens, '2026-01-02T03:04:05.000006+00:00' AS created_at",
    )[0]
    message = message_from(row)
    assert (message.id, message.session_id, message.role, message.content) == (7, 3, "assistant", "hi")
    assert (message.status.value, message.tokens, message.model, message.error) == (
        "complete",
        12,
        None,
        "oops",
    )
