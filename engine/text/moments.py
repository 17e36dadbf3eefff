"""Dates as Heedful keeps them: a range every time zone can show, read back and shown safely.

A date near the ends of what ``datetime`` holds (year 1, year 9999) overflows when it is moved to
another time zone, so any date stored (by an import, or by a version before imports checked them)
is read back clamped into the range, and dates are shown in UTC when the local zone cannot hold them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
"""The first moment a message may carry."""
LATEST = datetime(2100, 1, 1, tzinfo=UTC)
"""The first moment past the range (exclusive)."""
RANGE_TEXT = "1970 to 2099"
"""The range, in words, for the messages that refuse a date outside it."""


def in_range(moment: datetime) -> bool:
    """Whether ``moment`` (naive: UTC) lies in the range; False for one no zone can convert."""
    try:
        utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return False
    return EARLIEST <= utc < LATEST


def stored_moment(text: str) -> datetime:
    """A date read back from the store, aware, clamped into the range (the nearest end).

    Raises:
        ValueError: ``text`` is no date at all: the row is damaged (the store says so).
    """
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if in_range(moment):
        return moment
    # Out of range, or beyond what converting it to UTC can hold: which end is told by its year.
    return EARLIEST if moment.year <= EARLIEST.year else LATEST - timedelta(microseconds=1)


def local_text(moment: datetime, pattern: str) -> str:
    """``moment`` in the local time zone, formatted with ``pattern`` (strftime); in UTC if the local
    zone cannot hold it, or as ISO-8601 if even that fails."""
    for zone in (None, UTC):  # None: the local zone
        try:
            return moment.astimezone(zone).strftime(pattern)
        except (OverflowError, ValueError, OSError):
            continue
    return moment.isoformat()
