"""A turn, from the user's message to the stored reply: :class:`engine.turn.service.service.TurnService`
(the pipeline), the events it yields (:mod:`engine.turn.service.events`), retries and model windows."""
