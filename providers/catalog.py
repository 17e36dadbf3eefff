"""Models by name for a running app: the config's default, and whatever a session's /model names.

Each model is built once (its HTTP client is reused) and resolved the way the command line is, so
``provider/name`` from the config and ``offline`` work; a bare name means the default provider's
model. ``/model NAME`` goes through :meth:`ModelCatalog.find`, which never changes provider unasked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from engine.protocols.models import ChatModel, CurationModels
from providers.model_offers import (
    Endpoint,
    Listing,
    Offer,
    Served,
    ask_server,
    find_offer,
    known_names,
    listing,
)
from providers.resolve import OPENAI_BASE_URL, ModelChoice, on_endpoint, resolve_model
from sessions.config import Config


@dataclass(frozen=True, slots=True)
class Target:
    """Where ``/model NAME`` (or a pick in the model picker) leads."""

    choice: ModelChoice
    stored: str | None
    """What the session stores (None: the app's default)."""
    where: str
    """The provider and its base URL, for the confirm dialog and the toast ("fake (http://…)")."""
    switches: bool
    """It talks to another provider or base URL than the current model: the user confirms first."""
    notices: tuple[str, ...] = ()


def endpoint_of(choice: ModelChoice) -> Endpoint | None:
    """The server ``choice`` talks to; None for the offline model."""
    if choice.offline:
        return None
    return Endpoint(choice.provider, choice.base_url or OPENAI_BASE_URL, choice.api_key)


def _same(a: Endpoint, b: Endpoint) -> bool:
    return (a.provider, a.base_url) == (b.provider, b.base_url)


def describe(choice: ModelChoice) -> str:
    """The provider and base URL of ``choice`` in words."""
    endpoint = endpoint_of(choice)
    if endpoint is None:
        return "the offline model (on this computer)"
    return f"{endpoint.label} ({endpoint.base_url})" if endpoint.provider else endpoint.base_url


class ModelCatalog:
    """Args:
    default: The model the app started with, and what it was resolved from.
    build: Makes a chat model.
    curation: Makes the curation helpers (curator, summarizer) that go with a chat model.
    """

    def __init__(
        self,
        config: Config,
        env: Mapping[str, str],
        *,
        base_url: str | None,
        default: tuple[ChatModel, ModelChoice],
        build: Callable[[ModelChoice], ChatModel],
        curation: Callable[[ModelChoice], CurationModels],
    ) -> None:
        self._config = config
        self._env = env
        self._base_url = base_url
        self._build = build
        self._curation = curation
        self.default = default[0]
        """The model the app started with (the command line's or the config's)."""
        self._built: dict[tuple[str | None, str | None, str], ChatModel] = {}
        self._served_cache: dict[tuple[str, str | None], Served] = {}
        self._choices: dict[int, ModelChoice] = {id(self.default): default[1]}
        """What each model built here was resolved from, by the model's identity (each is kept)."""
        self._helpers: dict[int, CurationModels] = {}

    def get(self, name: str) -> tuple[ChatModel, tuple[str, ...]]:
        """The model a session stored (``provider/name``, or a bare name: the default provider's),
        and anything the user should know about it (a missing key...)."""
        from providers.offline import OFFLINE_MODEL_NAME

        provider = self._choices[id(self.default)].provider
        bare = name != OFFLINE_MODEL_NAME and name.partition("/")[0] not in self._config.providers
        if provider is not None and bare:
            name = f"{provider}/{name}"  # a bare name never falls to the environment's endpoint
        choice = resolve_model(self._config, self._env, base_url=self._base_url, model=name)
        return self.use(choice), tuple(choice.notices)

    def use(self, choice: ModelChoice) -> ChatModel:
        """The model ``choice`` resolves to, built once."""
        if choice == self._choices[id(self.default)]:
            return self.default
        key = (choice.provider, choice.base_url, choice.model)
        found = self._built.get(key)
        if found is None:
            found = self._built[key] = self._build(choice)
            self._choices[id(found)] = choice
        return found

    def where(self, model: ChatModel) -> str | None:
        """The provider (or the server's host) ``model`` talks to; None offline or unknown."""
        choice = self._choices.get(id(model))
        endpoint = endpoint_of(choice) if choice is not None else None
        return endpoint.label if endpoint is not None else None

    # --- what the providers offer, and /model NAME -----------------------------------------------

    def _endpoints(self, current: ModelChoice | None) -> list[Endpoint]:
        """The current model's server first, then each configured provider, then the default's."""
        found: list[Endpoint] = []
        candidates = [endpoint_of(current) if current is not None else None]
        for name, provider in self._config.providers.items():
            key_var = provider.api_key_env or None
            key = self._env.get(key_var) if key_var else None
            base = self._base_url or provider.base_url
            candidates.append(Endpoint(name, base, key, key_var if key_var and not key else None))
        candidates.append(endpoint_of(self._choices[id(self.default)]))
        for endpoint in candidates:
            if endpoint is not None and not any(_same(endpoint, seen) for seen in found):
                found.append(endpoint)
        return found

    async def _served(self, endpoint: Endpoint) -> Served:
        """The server's ``GET /models``, remembered once it answered."""
        key = (endpoint.base_url, endpoint.api_key)
        found = self._served_cache.get(key)
        if found is None:
            found = await ask_server(endpoint)
            if found.models is not None:
                self._served_cache[key] = found
        return found

    def _listing(self, endpoint: Endpoint, served: Served) -> Listing:
        provider = self._config.providers.get(endpoint.provider or "")
        return listing(endpoint, dict(provider.models) if provider is not None else {}, served)

    async def _listings(self, endpoints: list[Endpoint]) -> list[Listing]:
        served = await asyncio.gather(*(self._served(endpoint) for endpoint in endpoints))
        return [self._listing(endpoint, answer) for endpoint, answer in zip(endpoints, served, strict=True)]

    async def listings(self, current: ChatModel) -> list[Listing]:
        """Every endpoint's models (the current one's first), from the config and its server."""
        return await self._listings(self._endpoints(self._choices.get(id(current))))

    async def find(self, name: str, current: ChatModel) -> Target | str:
        """Where ``/model NAME`` leads, or why it leads nowhere (a sentence for the user).

        A bare name is looked for in the current provider's config, then its server's models,
        then the other providers' configs, then their servers'; ``provider/name`` only there.
        """
        from providers.offline import OFFLINE_MODEL_NAME

        now = self._choices.get(id(current))
        if name.lower() == "default":
            return self._target(self._choices[id(self.default)], None, now)
        if name == OFFLINE_MODEL_NAME:
            return self._target(resolve_model(self._config, self._env, model=name), name, now)
        endpoints = self._endpoints(now)
        provider, slash, bare = name.partition("/")
        if slash and provider in self._config.providers:
            endpoints, name = [e for e in endpoints if e.provider == provider], bare
        here = endpoint_of(now) if now is not None else None
        searched: list[Listing] = []
        for group in (endpoints[:1], endpoints[1:]):
            offer = find_offer(name, [self._listing(e, Served(None)) for e in group])
            if offer is None:
                listed = await self._listings(group)
                searched.extend(listed)
                offer = find_offer(name, listed)
            if offer is not None:
                return self._offered(offer, now)
        unlisted = next((one for one in searched[:1] if one.problem), None)
        if unlisted is not None and here is not None and _same(unlisted.endpoint, here):
            # The current server did not say what it offers: the name is tried there, and only there.
            offer = Offer(here, name, None, True)
            unchecked = f"{here.label} did not list its models ({unlisted.problem}): {name} is tried there."
            found = self._offered(offer, now)
            return replace(found, notices=(unchecked, *found.notices)) if isinstance(found, Target) else found
        problems = "".join(f" {one.endpoint.label}: {one.problem}." for one in searched if one.problem)
        return f"No configured provider offers {name}. Known models: {known_names(searched)}.{problems}"

    def _offered(self, offer: Offer, now: ModelChoice | None) -> Target | str:
        endpoint = offer.endpoint
        if endpoint.provider is not None:
            wanted = f"{endpoint.provider}/{offer.model}"
            choice = resolve_model(self._config, self._env, base_url=self._base_url, model=wanted)
        else:
            choice = on_endpoint(offer.model, self._env, endpoint.base_url)
        if choice.offline:  # its key is missing: say so rather than go offline
            return " ".join(choice.notices).replace(" Using the offline model.", "")
        if offer.window is not None and choice.notices:  # the window was guessed; the server said it
            choice = replace(choice, context_window=offer.window, notices=())
        return self._target(choice, endpoint.name_of(offer.model), now)

    @staticmethod
    def _target(choice: ModelChoice, stored: str | None, now: ModelChoice | None) -> Target:
        before = endpoint_of(now) if now is not None else None
        after = endpoint_of(choice)
        switches = after is not None and (before is None or not _same(before, after))
        return Target(choice, stored, describe(choice), switches, tuple(choice.notices))

    def curation_for(self, model: ChatModel) -> CurationModels:
        """The curator and summarizer on ``model``'s own server, built once per model; none for a
        model this catalog did not build."""
        key = id(model)
        found = self._helpers.get(key)
        if found is None:
            choice = self._choices.get(key)
            found = self._helpers[key] = self._curation(choice) if choice is not None else CurationModels()
        return found

    async def aclose(self) -> None:
        """Close the connections of every model, curator and summarizer built here, on the loop
        that opened them (the app's, as it closes): left to the garbage collector they would close
        after the loop is gone."""
        for model in [self.default, *self._built.values()]:
            await model.aclose()
        for helpers in self._helpers.values():
            for helper in (helpers.curator, helpers.summarizer):
                if helper is not None:
                    await helper.aclose()
            close = getattr(helpers.embedder, "close", None)
            if close is not None:
                close()
