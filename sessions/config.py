"""The user's settings: one pydantic model tree read from a TOML file.

The file belongs to the user. Heedful reads it, reports what is wrong with it in words, and falls back
to its defaults rather than refusing to start; it writes the file only once, when there is none
(:func:`write_default_config`). What the app itself remembers (the theme, the last session) lives
in the database instead.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engine.text.redaction import looks_like_key, redact, remember_secret
from sessions.config_file import (
    FALLBACK,
    ConfigRead,
    default_config_text,
    describe_toml_error,
    read_config,
    write_default_config,
)

__all__ = [
    "FALLBACK",
    "Config",
    "ConfigLoad",
    "default_config_text",
    "describe_toml_error",
    "load_config",
    "validate_config",
    "write_default_config",
]


class _Section(BaseModel):
    # strict: TOML values are already typed, so "5" for a number is a mistake to report, not to
    # coerce. extra="allow": an unknown key is reported as a warning (see _unknown_keys) instead of
    # making the whole file unusable, so a typo never costs the user the rest of their settings.
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class ProviderConfig(_Section):
    """An OpenAI-compatible server and the models it offers."""

    base_url: str
    """The server's API root, e.g. ``https://api.openai.com/v1`` or ``http://localhost:11434/v1``."""
    api_key_env: str | None = None
    """The NAME of the environment variable that holds the key; None or "" when the server needs none."""
    models: dict[str, int] = Field(default_factory=dict)
    """Model name → its context window in tokens."""

    @field_validator("base_url")
    @classmethod
    def _is_http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("should start with http:// or https://")
        return value

    @field_validator("models")
    @classmethod
    def _windows_are_positive(cls, value: dict[str, int]) -> dict[str, int]:
        for name, window in value.items():
            if window <= 0:
                raise ValueError(f"the context window of {name!r} should be a positive number of tokens")
        return value


class Timeouts(_Section):
    """How long to wait for the server."""

    connect: float = Field(default=10.0, gt=0, allow_inf_nan=False)
    """Seconds to wait for a connection."""
    read: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    """Seconds to wait between two streamed chunks of a reply (not for the whole reply)."""


class MemorySettings(_Section):
    """Cross-session memory: what Heedful keeps from one session for the next."""

    enabled: bool = True
    """Assess sessions into memories and give new sessions the important ones; false turns it off."""
    inactivity_minutes: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    """Minutes without a message after which a session is assessed (as at its end, or on /remember)."""


class CurationSettings(_Section):
    """What a connected model does for curation (nothing when the offline model is in use)."""

    curator: bool = True
    """Ask the model each turn which older messages and entities the new message needs (the
    curator pass, at most ``curator_timeout`` seconds); false: the heuristics decide alone."""
    curator_model: str | None = None
    """A cheaper model for the curator pass and for summaries, on the chat model's server; by
    default the chat model itself."""
    curator_timeout: float = Field(default=2.0, gt=0, allow_inf_nan=False)
    """Seconds the curator pass may take before the heuristics decide alone."""
    model_summaries: bool = True
    """Have the model write summaries in the background; false: the offline summaries."""
    pin_limit: float = Field(default=0.5, gt=0, le=1, allow_inf_nan=False)
    """Share of the budget pinned messages may take before pinning another asks first (past the
    whole budget a pin is refused). Applies with the offline model too."""
    prices: dict[str, list[float]] = Field(default_factory=dict)
    """Model name → [US$ per million prompt tokens, per million completion tokens], for the
    estimated cost of curation calls (well-known models have a built-in price)."""

    @field_validator("prices")
    @classmethod
    def _two_prices(cls, value: dict[str, list[float]]) -> dict[str, list[float]]:
        for name, price in value.items():
            if len(price) != 2 or any(not math.isfinite(p) or p < 0 for p in price):
                raise ValueError(
                    f"the price of {name!r} should be two non-negative numbers: "
                    "[per million prompt tokens, per million completion tokens]"
                )
        return value


class Config(_Section):
    """Everything the user can set in ``config.toml``."""

    model: str | None = None
    """The model to use: "provider/model" naming an entry of ``providers``, or a bare model name
    used with the OPENAI_API_KEY / OPENAI_BASE_URL environment variables."""
    system_prompt: str = "You are a helpful assistant."
    """The system message sent first in every request."""
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    """Named servers; ``model = "name/model"`` selects one."""
    timeouts: Timeouts = Field(default_factory=Timeouts)
    """Network timeouts."""
    max_retries: int = Field(default=2, ge=0)
    """How many times the client retries a request that failed in a way worth retrying."""
    profile: Literal["quality", "balanced", "cost"] = "balanced"
    """How hard Heedful works to keep the prompt small: quality keeps most, cost forgets soonest."""
    embeddings: Literal["off", "local", "provider"] = "off"
    """Recall older messages by their meaning too, not only their words: "local" loads a small
    embedding model bundled with Heedful (offline, nothing sent anywhere); "provider" asks the
    connected server's ``/v1/embeddings`` for :attr:`embedding_model`'s vectors (the text of every
    message is sent there once, and its vector kept); "off": words alone."""
    embedding_model: str = "text-embedding-3-small"
    """The embedding model ``embeddings = "provider"`` asks for, as the server names it
    ("nomic-embed-text" in Ollama, say)."""

    memory: MemorySettings = Field(default_factory=MemorySettings)
    """Cross-session memory."""

    curation: CurationSettings = Field(default_factory=CurationSettings)
    """What a connected model does for curation."""

    keys: dict[str, str] = Field(default_factory=dict)
    """Key bindings to change: action id → key(s), e.g. ``retry = "ctrl+t"`` or ``pin = "P,ctrl+p"``.
    The help screen (F1) lists every action id with its key."""


@dataclass(slots=True)
class ConfigLoad:
    """The outcome of reading the config file: the settings to use and what was wrong."""

    config: Config
    """The settings to run with (the defaults when the file could not be used)."""
    path: Path
    """The file that was read."""
    exists: bool
    """False when there was no file (so a starter one may be written)."""
    problems: list[str] = field(default_factory=list)
    """One human-readable sentence per problem, each naming the file."""


def load_config(path: Path) -> ConfigLoad:
    """Read the settings from ``path``; never raises for a missing, unreadable or invalid file.

    Args:
        path: The TOML file to read.

    Returns:
        The settings and a list of problems. A missing file gives the defaults and no problem; a file
        that cannot be read, parsed or validated gives the defaults and problems saying why, with
        line and column for syntax errors and the dotted key and bad value for invalid values.
        Unknown keys are ignored, each with a warning, and the rest of the file is used.
    """
    return validate_config(read_config(path))


def validate_config(read: ConfigRead) -> ConfigLoad:
    """Validate what :func:`sessions.config_file.read_config` read, as :func:`load_config` does."""
    path = read.path
    if read.document is None:
        return ConfigLoad(Config(), path, exists=read.exists, problems=list(read.problems))
    document = read.document
    try:
        config = Config.model_validate(document)
    except ValidationError as err:
        problems = [
            f"{path}: {describe_validation_error(e)} — {FALLBACK}." for e in err.errors(include_url=False)
        ]
        return ConfigLoad(Config(), path, exists=True, problems=problems)
    warnings = [*_unknown_keys(config), *_keys_in_names(config)]
    return ConfigLoad(config, path, exists=True, problems=[f"{path}: {warning}." for warning in warnings])


# --- describing problems ----------------------------------------------------------------------


def describe_validation_error(error: Any) -> str:
    """One pydantic error as ``"timeouts.read: Input should be greater than 0 (got -1)"``.

    Args:
        error: An item of ``ValidationError.errors()``.
    """
    key = _dotted(error["loc"])
    if error["type"] == "missing":
        return f"{key} is required"
    message = str(error["msg"])
    if error["type"] == "value_error":
        # pydantic prefixes our own validators' messages with "Value error, ".
        message = str(error.get("ctx", {}).get("error", message))
    return (
        f"{key}: {message} (got {_show(error['input'])})"
        if key
        else f"{message} (got {_show(error['input'])})"
    )


def _dotted(loc: tuple[int | str, ...]) -> str:
    return ".".join(_toml_key(str(part)) for part in loc)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _show(value: object) -> str:
    """A value as the user wrote it in TOML, or what kind of thing it is when it is big."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = json.dumps(redact(value), ensure_ascii=False)  # a key typed in the wrong place
        return shown if len(shown) <= 60 else shown[:57] + '…"'
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _keys_in_names(config: Config) -> Iterator[str]:
    """A warning, never quoting it, for each key written where its variable's name belongs; the
    value is redacted from then on wherever it might be echoed."""
    for name, provider in config.providers.items():
        if provider.api_key_env and looks_like_key(provider.api_key_env):
            remember_secret(provider.api_key_env)
            yield (
                f"providers.{_toml_key(name)}.api_key_env holds what looks like an API key (not shown): "
                "it must name the environment variable that holds the key, not hold the key"
            )


def _unknown_keys(config: Config) -> Iterator[str]:
    yield from _unknown_in(config, "")
    yield from _unknown_in(config.timeouts, "timeouts")
    yield from _unknown_in(config.memory, "memory")
    for name, provider in config.providers.items():
        yield from _unknown_in(provider, f"providers.{_toml_key(name)}")


def _unknown_in(section: BaseModel, table: str) -> Iterator[str]:
    known = list(type(section).model_fields)
    where = f"in [{table}]" if table else "at the top level"
    for key in section.model_extra or {}:
        hint = difflib.get_close_matches(key, known, n=1)
        suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
        yield f"unknown key '{key}' {where} — ignored{suggestion}"
