"""Model clients: the openai adapter and the built-in offline model."""
