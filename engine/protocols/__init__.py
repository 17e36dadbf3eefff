"""The small interfaces through which the engine reaches the outside world: the models
(:mod:`.models`), the store (:mod:`.store`), cross-session memory (:mod:`.memory`) and
dense embeddings (:mod:`.embeddings`) and their cache (:mod:`.vectors`)."""
