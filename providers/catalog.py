"""Models by name for a running app: the config's default, and whatever a session's /model names.

Each model is built once (its HTTP client is reused) and resolved the way the command line is, so
``provider/name`` from the config, a bare name on the default endpoint, and ``offline`` all work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from engine.protocols import ChatModel, CurationModels
from providers.resolve import ModelChoice, resolve_model
from sessions.config import Config


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
        self._built: dict[str, ChatModel] = {}
        self._choices: dict[int, ModelChoice] = {id(self.default): default[1]}
        """What each model built here was resolved from, by the model's identity (each is kept)."""
        self._helpers: dict[int, CurationModels] = {}

    def get(self, name: str) -> tuple[ChatModel, tuple[str, ...]]:
        """The model called ``name``, and anything the user should know about it (a missing key...)."""
        found = self._built.get(name)
        if found is not None:
            return found, ()
        choice = resolve_model(self._config, self._env, base_url=self._base_url, model=name)
        model = self._build(choice)
        self._built[name] = model
        self._choices[id(model)] = choice
        return model, tuple(choice.notices)

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
