"""How the chat model and the embedder reach the same server: its address, key and timeouts, and
the ``openai`` client options they make from them (``AsyncOpenAI`` for one, ``OpenAI`` for the other)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.text.redaction import remember_secret
from providers.openai_errors import Endpoint

PLACEHOLDER_API_KEY = "not-needed"
"""Sent when no key is configured: openai refuses an empty key, and local servers ignore it."""

WRITE_TIMEOUT = 30.0
POOL_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """Where a client connects, with which key (None: none configured), and how long it waits."""

    base_url: str | None
    api_key: str | None
    connect_timeout: float
    read_timeout: float

    @classmethod
    def of(
        cls, base_url: str | None, api_key: str | None, connect_timeout: float, read_timeout: float
    ) -> ClientSettings:
        """The settings, an empty key read as none; the key is redacted from every text from now on."""
        remember_secret(api_key or None)
        return cls(base_url, api_key or None, connect_timeout, read_timeout)

    def endpoint(self, model: str, key_hint: str | None) -> Endpoint:
        """What an error message about ``model`` at this server names."""
        return Endpoint(
            model, self.base_url, self.api_key is not None, key_hint, self.connect_timeout, self.read_timeout
        )

    def options(self) -> dict[str, Any]:
        """The keyword arguments of ``openai.AsyncOpenAI`` and ``openai.OpenAI`` alike.

        No retries hidden in the client: the engine retries by itself, after a wait the user can
        see and cancel (engine/turn/retrying.py), and a failed embedding leaves words alone for
        that plan while the next one asks again.
        """
        import openai

        return {
            "base_url": self.base_url,
            "api_key": self.api_key or PLACEHOLDER_API_KEY,
            "max_retries": 0,
            "timeout": openai.Timeout(
                connect=self.connect_timeout, read=self.read_timeout, write=WRITE_TIMEOUT, pool=POOL_TIMEOUT
            ),
        }
