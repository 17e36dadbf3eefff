"""Decide which model to talk to, from command-line flags, the environment and the config file.

Precedence, highest first: ``--base-url`` / ``--model`` flags; the config's ``model``; the
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` environment variables; otherwise the offline model.
Whenever a configured model cannot be used (its key is missing, say), the app still starts, on the
offline model, and the reason is one of the choice's notices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from engine.text.redaction import looks_like_key, remember_secret
from providers.windows import FALLBACK_WINDOW, known_window

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
KEY_IN_NAME = (
    "{provider}/{model}: the provider's api_key_env holds what looks like an API key. api_key_env must "
    "name an environment variable (such as OPENAI_API_KEY), not hold the key: put the key in that "
    "variable. Using the offline model."
)
"""Said, never showing the value, when ``api_key_env`` holds a key rather than a variable's name."""


class ProviderSettings(Protocol):
    """A configured server: :class:`sessions.config.ProviderConfig`, or the first screen's
    :class:`sessions.config_file.QuickProvider` (read before pydantic is imported)."""

    @property
    def base_url(self) -> str: ...
    @property
    def api_key_env(self) -> str | None: ...
    @property
    def models(self) -> Mapping[str, int]: ...


class ModelSettings(Protocol):
    """What choosing the model reads of the config (:class:`sessions.config.Config`, or the first
    screen's :class:`sessions.config_file.QuickSettings`)."""

    @property
    def model(self) -> str | None: ...
    @property
    def providers(self) -> Mapping[str, ProviderSettings]: ...


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """A resolved model: enough to build a client, plus what to tell the user about it."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    key_hint: str | None = None
    """Where the key comes from, for error messages ("$OPENAI_API_KEY")."""
    context_window: int = FALLBACK_WINDOW
    provider: str | None = None
    notices: tuple[str, ...] = field(default=())

    @property
    def offline(self) -> bool:
        return self.base_url is None


def _offline(*notices: str) -> ModelChoice:
    from providers.offline import OFFLINE_CONTEXT_WINDOW, OFFLINE_MODEL_NAME

    return ModelChoice(OFFLINE_MODEL_NAME, context_window=OFFLINE_CONTEXT_WINDOW, notices=notices)


def _window(model: str, provider: ProviderSettings | None) -> tuple[int, tuple[str, ...]]:
    if provider is not None and model in provider.models:
        return provider.models[model], ()
    known = known_window(model)
    if known is not None:
        return known, ()
    return FALLBACK_WINDOW, (
        f"The context window of {model} is unknown; assuming {FALLBACK_WINDOW:,} tokens. "
        "Set it under the provider's models in the config file.",
    )


def _from_provider(
    name: str, provider: ProviderSettings, model: str, env: Mapping[str, str], base_url: str | None = None
) -> ModelChoice:
    key_var = provider.api_key_env or None
    if key_var and looks_like_key(key_var):  # the key itself, written where its variable's name goes
        return _offline(KEY_IN_NAME.format(provider=name, model=model))
    api_key = env.get(key_var) if key_var else None
    if key_var and not api_key:
        return _offline(
            f"{name}/{model} needs an API key in ${key_var}, which is not set. Using the offline model."
        )
    window, notes = _window(model, provider)
    return ModelChoice(
        model,
        base_url=base_url or provider.base_url,
        api_key=api_key,
        key_hint=f"${key_var}" if key_var else None,
        context_window=window,
        provider=name,
        notices=notes,
    )


def on_endpoint(model: str, env: Mapping[str, str], base_url: str | None) -> ModelChoice:
    """``model`` on the command line's / environment's endpoint (``base_url`` when given)."""
    base = base_url or env.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
    api_key = env.get("OPENAI_API_KEY") or None
    if api_key is None and base == OPENAI_BASE_URL:
        return _offline(f"{model} on OpenAI needs an API key in $OPENAI_API_KEY. Using the offline model.")
    window, notes = _window(model, None)
    return ModelChoice(
        model,
        base_url=base,
        api_key=api_key,
        key_hint="$OPENAI_API_KEY",
        context_window=window,
        notices=notes,
    )


def remember_keys(config: ModelSettings, env: Mapping[str, str]) -> None:
    """Have every key this config and environment may use redacted from whatever a server sends
    (:mod:`engine.text.redaction`), a key written where a variable's name belongs included."""
    remember_secret(env.get("OPENAI_API_KEY"))
    for provider in config.providers.values():
        name = provider.api_key_env
        if name:
            remember_secret(name if looks_like_key(name) else env.get(name))


def resolve_model(
    config: ModelSettings, env: Mapping[str, str], *, base_url: str | None = None, model: str | None = None
) -> ModelChoice:
    """The model this run should use."""
    from providers.offline import OFFLINE_MODEL_NAME

    remember_keys(config, env)

    wanted = model or config.model
    if wanted == OFFLINE_MODEL_NAME:
        return _offline()
    if wanted and "/" in wanted:
        provider_name, _, bare = wanted.partition("/")
        provider = config.providers.get(provider_name)
        if provider is not None:
            return _from_provider(provider_name, provider, bare, env, base_url)
    if wanted is None and base_url is None and not (env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL")):
        return _offline()
    return on_endpoint(wanted or DEFAULT_OPENAI_MODEL, env, base_url)
