"""What each request carries: :class:`engine.curation.session_curation.SessionCuration` plans a turn
(:mod:`engine.curation.planning`); :mod:`engine.curation.context_service` is the user's hand on it."""
