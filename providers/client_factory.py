"""Clients for the helper models (memory assessor, curator, summarizer), made in a worker thread:
one per call (the memory assessor, asked when a session is left), or one kept by a helper asked
often (:class:`KeptClient`: the curator, every turn; the summarizer, dozens of times at a change
of topic).

Making a client on the event loop held the screen still: the first one imports ``openai``, every
one loads the CA bundle for its TLS context, and the first request of the process loads more
modules still: :func:`loaded` has the thread that makes a client load them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from engine.text.redaction import remember_secret

if TYPE_CHECKING:
    import openai

ClientFactory = Callable[[], "openai.AsyncOpenAI"]
"""Makes a client for one call (it is closed afterwards)."""

READ_TIMEOUT = 8.0
"""Seconds a helper's request may take; each call is also bounded as a whole by its caller."""


def client_factory(
    *, base_url: str | None, api_key: str | None, connect_timeout: float = 10.0
) -> ClientFactory:
    """A factory of clients for the server the chat model talks to (no hidden retries). The key
    is redacted from every text from now on (:mod:`engine.text.redaction`)."""
    remember_secret(api_key)

    def make() -> openai.AsyncOpenAI:
        import openai

        from providers.client_settings import PLACEHOLDER_API_KEY

        return loaded(
            openai.AsyncOpenAI(
                base_url=base_url,
                api_key=api_key or PLACEHOLDER_API_KEY,
                max_retries=0,
                timeout=openai.Timeout(READ_TIMEOUT, connect=connect_timeout),
            )
        )

    return make


def loaded(client: openai.AsyncOpenAI) -> openai.AsyncOpenAI:
    """``client``, with what its first request would load on the event loop loaded now: call it
    in the worker thread that made the client."""
    client.chat.completions  # noqa: B018 (cached properties that import their resources)
    client.models  # noqa: B018
    # The HTTP stack's own, imported by its first connection: another stack loads as it used to.
    with contextlib.suppress(ImportError):
        import anyio._backends._asyncio  # noqa: F401
        import httpcore2  # noqa: F401
    return client


@contextlib.asynccontextmanager
async def opened(clients: ClientFactory) -> AsyncIterator[openai.AsyncOpenAI]:
    """A client from ``clients``, made in a worker thread and closed on leaving."""
    client = await asyncio.to_thread(clients)
    async with client:
        yield client


class KeptClient:
    """One client from ``clients``, made in a worker thread on first use and kept, with its open
    connection, until :meth:`aclose`: the chat model's, and the helpers' asked often.

    Made for each pass, the curator's client would cost every turn the CA bundle's load and a new
    connection (a TLS handshake to a remote server).
    """

    def __init__(self, clients: ClientFactory) -> None:
        self._clients = clients
        self._client: openai.AsyncOpenAI | None = None
        self._making: asyncio.Future[openai.AsyncOpenAI] | None = None
        """The client being made in a thread, awaited by whatever needs it meanwhile."""

    async def get(self) -> openai.AsyncOpenAI:
        """The client, made in a worker thread if none is kept. Callers meanwhile await the same
        making, and one cancelled (a pass out of time) leaves it to the others: it is kept."""
        if self._client is not None:
            return self._client
        if self._making is None:
            self._making = asyncio.ensure_future(asyncio.to_thread(self._clients))
            self._making.add_done_callback(self._made)
        return await asyncio.shield(self._making)

    @contextlib.asynccontextmanager
    async def lent(self) -> AsyncIterator[openai.AsyncOpenAI]:
        """The client for one use, as :meth:`get` gives it; it stays open, kept, after the use."""
        yield await self.get()

    def _made(self, making: asyncio.Future[openai.AsyncOpenAI]) -> None:
        if self._making is making:
            self._making = None
        if not making.cancelled() and making.exception() is None and self._client is None:
            self._client = making.result()

    def now(self) -> openai.AsyncOpenAI:
        """The kept client, made on the caller's thread if none is: after a making that failed,
        the request that needs the client gets the error."""
        if self._client is None:
            self._client = self._clients()
        return self._client

    async def aclose(self) -> None:
        """Close the connections (on the loop that opened them); a later :meth:`get` makes another."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()
