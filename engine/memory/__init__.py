"""Cross-session memory: what is kept, how long, and what a prompt carries
(:class:`engine.memory.memories.service.MemoryService`)."""
