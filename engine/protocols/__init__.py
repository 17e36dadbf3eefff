"""The small interfaces through which the engine reaches the outside world: the models
(:mod:`.models`), the store (:mod:`.store`) and cross-session memory (:mod:`.memory`)."""
