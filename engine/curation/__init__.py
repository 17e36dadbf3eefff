"""What each request carries: :class:`.session_curation.SessionCuration` owns a session's state and plans
its turns; :mod:`.session_curations` holds them under one lock; :mod:`.context_service`: the user's hand."""
