"""Models by name for a running app: the config's default, and whatever a session's /model names.

Each model is built once (its HTTP client is reused) and resolved the way the command line is, so
``provider/name`` from the config, a bare name on the default endpoint, and ``offline`` all work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from engine.protocols import ChatModel
from providers.resolve import ModelChoice, resolve_model
from sessions.config import Config


class ModelCatalog:
    def __init__(
        self,
        config: Config,
        env: Mapping[str, str],
        *,
        base_url: str | None,
        default: ChatModel,
        build: Callable[[ModelChoice], ChatModel],
    ) -> None:
        self._config = config
        self._env = env
        self._base_url = base_url
        self._build = build
        self.default = default
        """The model the app started with (the command line's or the config's)."""
        self._built: dict[str, ChatModel] = {}

    def get(self, name: str) -> tuple[ChatModel, tuple[str, ...]]:
        """The model called ``name``, and anything the user should know about it (a missing key...)."""
        found = self._built.get(name)
        if found is not None:
            return found, ()
        choice = resolve_model(self._config, self._env, base_url=self._base_url, model=name)
        model = self._build(choice)
        self._built[name] = model
        return model, tuple(choice.notices)
