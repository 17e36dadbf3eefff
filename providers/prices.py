"""Prices of well-known models, for the estimated cost of curation calls.

Public list prices in US dollars per million tokens (prompt, completion) as of late 2025; the
config's ``[curation] prices`` overrides them. An estimate only: providers change prices, and
cached or batched tokens cost less.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.advice.calls import Price

# Longest prefix wins, so "gpt-4o-mini" is not read as "gpt-4o".
KNOWN_PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-3.5-turbo": Price(0.50, 1.50),
}


def known_price(model: str) -> Price | None:
    """The price of a well-known model, matched by name prefix (``ns/name:tag`` allowed)."""
    name = model.rsplit("/", 1)[-1].lower()
    matches = [prefix for prefix in KNOWN_PRICES if name.startswith(prefix)]
    return KNOWN_PRICES[max(matches, key=len)] if matches else None


def price_for(model: str, configured: Mapping[str, Sequence[float]]) -> Price | None:
    """The config's price for ``model`` if it names one, else the known price, else None."""
    own = configured.get(model)
    if own is not None and len(own) == 2:
        return Price(float(own[0]), float(own[1]))
    return known_price(model)
