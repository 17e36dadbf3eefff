"""Context windows of well-known models, for when the config does not name one."""

from __future__ import annotations

from typing import Any

FALLBACK_WINDOW = 8192
"""Assumed for a model nobody told us about: small enough to be safe on most servers."""

# Longest prefix wins, so "gpt-4o-mini" and "gpt-4.1" are not read as "gpt-4".
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "llama3": 8_192,
    "mistral": 32_768,
    "qwen2.5": 32_768,
    "gemma2": 8_192,
    "gemma3": 131_072,
    "deepseek": 65_536,
}


def known_window(model: str) -> int | None:
    """The context window of a well-known model, matched by name prefix (``ns/name:tag`` allowed)."""
    name = model.rsplit("/", 1)[-1].lower()
    matches = [prefix for prefix in KNOWN_WINDOWS if name.startswith(prefix)]
    return KNOWN_WINDOWS[max(matches, key=len)] if matches else None


_WINDOW_FIELDS = ("max_model_len", "max_context_length", "context_length", "context_window")
"""Where servers put the model's context window in ``GET /models/{id}`` (vLLM, LM Studio,
OpenRouter, Groq)."""


def window_in(description: dict[str, Any]) -> int | None:
    """The context window a server's description of a model gives, if it gives one."""
    for field in _WINDOW_FIELDS:
        value = description.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
