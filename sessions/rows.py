"""Reading rows by column name: a query's rows come back as :class:`sqlite3.Row`, and each part of
the store builds the engine's types from them with keywords (``row["status"]``), never by position."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any


def now_text() -> str:
    """The current time as the store writes it (UTC, ISO 8601, microseconds)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def select(conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
    """Every row ``sql`` gives, each read by column name."""
    cursor = conn.execute(sql, params)
    cursor.row_factory = sqlite3.Row
    return cursor.fetchall()


LAST_ID = 2**63 - 1
"""SQLite's largest row id: the bound of an id range left open."""


def id_bound(bound: int | None) -> int:
    """An id range's upper bound: ``bound``, or past every id if None."""
    return bound if bound is not None else LAST_ID


IN_AT_ONCE = 500
"""Values asked for in one ``IN (...)`` of :func:`select_in` (SQLite limits a statement's parameters)."""


def select_in(
    conn: sqlite3.Connection, sql: str, params: tuple[object, ...], values: Sequence[object]
) -> Iterator[sqlite3.Row]:
    """The rows ``sql`` gives for ``values``, :data:`IN_AT_ONCE` at a time: its ``{}`` (within
    ``IN (...)``) becomes a part's placeholders, bound after ``params``."""
    for start in range(0, len(values), IN_AT_ONCE):
        part = values[start : start + IN_AT_ONCE]
        yield from select(conn, sql.format(", ".join("?" * len(part))), (*params, *part))


def select_one(conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> sqlite3.Row | None:
    """The first row ``sql`` gives (None: none), read by column name."""
    cursor = conn.execute(sql, params)
    cursor.row_factory = sqlite3.Row
    found: sqlite3.Row | None = cursor.fetchone()
    return found


def value(conn: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> Any:
    """The one value of an aggregate ``sql`` (a count, a sum): its first row's only column."""
    return conn.execute(sql, params).fetchone()[0]


def inserted_id(cursor: sqlite3.Cursor) -> int:
    """The row id of the row the INSERT run by ``cursor`` wrote."""
    if cursor.lastrowid is None:
        raise sqlite3.InterfaceError("the statement inserted no row")
    return cursor.lastrowid
