"""The things a conversation refers to: :func:`engine.entities.extractor.extract_entities`, and
each session's :class:`engine.entities.registry.EntityRegistry`."""
