"""Which models each configured provider offers (its config's ``models`` and its server's
``GET /models``), and what a name typed after ``/model`` means.

A bare name is looked for on the session's current provider first, then on the other configured
providers; a name nobody offers is refused with the names that are known. Nothing here ever falls
back to OpenAI's endpoint: a server is only asked if the config (or the command line) names it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from providers.windows import known_window, window_in

LIST_TIMEOUT = 4.0
"""Seconds a server may take to list its models (the picker and /model wait for it)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A server models are sent to: a configured provider, or the command line's / environment's."""

    provider: str | None
    """The config's name for it; None for ``--base-url`` / ``$OPENAI_BASE_URL``."""
    base_url: str
    api_key: str | None = None
    missing_key: str | None = None
    """The environment variable its key should be in, when that is not set."""

    @property
    def label(self) -> str:
        """How the header and the toasts name it: the provider, else the server's host."""
        return self.provider or urlsplit(self.base_url).netloc or self.base_url

    def name_of(self, model: str) -> str:
        """What ``/model`` takes and a session stores for ``model`` here."""
        return f"{self.provider}/{model}" if self.provider else model


@dataclass(frozen=True, slots=True)
class Offer:
    """One model an endpoint offers, with its window when the config or the server says it."""

    endpoint: Endpoint
    model: str
    window: int | None
    from_server: bool


@dataclass(frozen=True, slots=True)
class Listing:
    """What one endpoint offers, and why its server's own list is missing (if it is)."""

    endpoint: Endpoint
    offers: tuple[Offer, ...]
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Served:
    """A server's answer to ``GET /models``: (id, window) pairs, or why there is none."""

    models: tuple[tuple[str, int | None], ...] | None
    problem: str | None = None


async def ask_server(endpoint: Endpoint) -> Served:
    """``GET /models`` on ``endpoint``'s server, bounded by :data:`LIST_TIMEOUT`; never raises."""
    if endpoint.missing_key is not None:
        return Served(None, f"its key is not set (${endpoint.missing_key})")
    from providers.client_factory import client_factory, opened

    try:
        async with asyncio.timeout(LIST_TIMEOUT):
            factory = client_factory(
                base_url=endpoint.base_url, api_key=endpoint.api_key, connect_timeout=LIST_TIMEOUT
            )
            async with opened(factory) as client:
                page = await client.with_options(timeout=LIST_TIMEOUT).models.list()
                data = getattr(page, "data", None) or []
                return Served(
                    tuple(
                        (str(m.id), window_in(getattr(m, "model_extra", None) or {}))
                        for m in data
                        if getattr(m, "id", None) is not None
                    )
                )
    except TimeoutError:
        return Served(None, "its server did not answer in time")
    except Exception as err:
        return Served(None, f"its server could not list its models ({type(err).__name__})")


def listing(endpoint: Endpoint, configured: dict[str, int], served: Served) -> Listing:
    """The config's models of ``endpoint`` then the ones only its server names, each once."""
    offers = [Offer(endpoint, model, window, False) for model, window in configured.items()]
    for model, window in served.models or ():
        if model not in configured:
            offers.append(Offer(endpoint, model, window or known_window(model), True))
    return Listing(endpoint, tuple(offers), served.problem)


def find_offer(name: str, listings: Iterable[Listing]) -> Offer | None:
    """The first offer of the model ``name`` (listings in the order they should be searched)."""
    return next((offer for one in listings for offer in one.offers if offer.model == name), None)


def known_names(listings: Iterable[Listing], *, limit: int = 12) -> str:
    """The names ``/model`` would take, for a refusal ("fake/fake, fake/fake-model, … and 3 more")."""
    names = [offer.endpoint.name_of(offer.model) for one in listings for offer in one.offers]
    shown = ", ".join(names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return (shown + more) if names else "none (add them under a provider's models in the config file)"
