"""Reaching a session's curation in a test as the app does: through the cache's lock."""

from __future__ import annotations

from engine.curation.session_curation import SessionCuration
from engine.curation.session_curations import SessionCurations


def curation_of(curations: SessionCurations, session_id: int) -> SessionCuration:
    """The session's curation (built from the store if it is not cached)."""
    with curations.held(session_id) as held:
        return held.curation


def cached_curation(curations: SessionCurations, session_id: int) -> SessionCuration | None:
    """The session's curation if it is built, else None."""
    with curations.held(session_id) as held:
        return held.cached
