"""The things a conversation refers to: :func:`engine.entities.extractor.extractor.extract_entities`, and
each session's :class:`engine.entities.extractor.registry.EntityRegistry`."""
