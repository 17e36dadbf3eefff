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
import os
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engine.redaction import looks_like_key, redact, remember_secret
from sessions.paths import ensure_private_dir

FALLBACK = "using the default settings"


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
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return ConfigLoad(Config(), path, exists=False)
    except OSError as err:
        reason = err.strerror or str(err)
        return ConfigLoad(
            Config(), path, exists=True, problems=[f"{path}: could not be read ({reason}) — {FALLBACK}."]
        )
    try:
        # utf-8-sig: editors on Windows put a byte-order mark at the start, which tomllib rejects.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        problem = f"{path}: is not UTF-8 text (bad byte at offset {err.start}) — {FALLBACK}."
        return ConfigLoad(Config(), path, exists=True, problems=[problem])
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        return ConfigLoad(
            Config(), path, exists=True, problems=[f"{path}: {describe_toml_error(err)} — {FALLBACK}."]
        )
    except RecursionError:  # tomllib recurses once per level of nested arrays and inline tables
        problem = f"{path}: arrays or inline tables are nested too deeply to read — {FALLBACK}."
        return ConfigLoad(Config(), path, exists=True, problems=[problem])
    except ValueError:  # tomllib lets int()'s limit on digits (4300) escape as a plain ValueError
        problem = f"{path}: a number has too many digits to read — {FALLBACK}."
        return ConfigLoad(Config(), path, exists=True, problems=[problem])
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

# tomllib (before 3.14) puts the position only in the message text. Found from the "(" that starts it:
# a leading "(.*?)\s*" would be quadratic on the long runs of spaces a user's key can put in the message
# ("Cannot declare ('a      ...',) twice").
_TOML_POSITION = re.compile(r"\((?:at line (?P<line>\d+), column (?P<column>\d+)|at end of document)\)$")


def describe_toml_error(err: tomllib.TOMLDecodeError) -> str:
    """``"line 3, column 5: Invalid value"`` from tomllib's ``"Invalid value (at line 3, column 5)"``."""
    message = str(err)
    match = _TOML_POSITION.search(message)
    if match is None:
        return message
    reason = message[: match.start()].rstrip()
    if match["line"] is None:
        return f"at the end of the file: {reason}"
    return f"line {match['line']}, column {match['column']}: {reason}"


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


# --- the starter file -------------------------------------------------------------------------

_HEADER = """\
# Heedful settings. Heedful writes this file once, when there is none, and never changes it again.
#
# Without a model configured here, Heedful uses the OPENAI_API_KEY and OPENAI_BASE_URL environment
# variables when they are set, and its built-in offline model otherwise.
#
# To use one of the providers below, add a line at the top of this file (before any [table]):
#
#     model = "openai/gpt-4o-mini"     # needs OPENAI_API_KEY in the environment
#     model = "ollama/llama3.2"        # a local Ollama server, no key needed
#
# api_key_env is the NAME of the environment variable that holds a provider's key: keys are never
# written in this file. Under models, each model name maps to its context window in tokens.
#
# Other settings, with their defaults:
#
#     system_prompt = "You are a helpful assistant."
#     max_retries = 2
#     profile = "balanced"   # or "quality" (keeps more) or "cost" (forgets sooner)
#
#     [timeouts]
#     connect = 10.0   # seconds to wait for a connection
#     read = 60.0      # seconds to wait between two streamed chunks of a reply
#
#     [memory]
#     enabled = true            # keep what matters from a session for the next ones
#     inactivity_minutes = 30   # a session idle this long is assessed, as at its end
#
#     [curation]                # with a connected model (never the offline one)
#     curator = true            # the model advises which older messages each request needs
#     curator_model = "gpt-4o-mini"   # a cheaper model for that and summaries (default: the chat model)
#     curator_timeout = 2.0     # seconds before the heuristics decide alone
#     model_summaries = true    # the model writes summaries in the background
#     prices = { "my-model" = [0.15, 0.60] }   # US$ per million prompt / completion tokens
#     pin_limit = 0.5           # share of the budget pins may take before a pin asks first

"""

_EXAMPLE_PROVIDERS: dict[str, Any] = {
    "providers": {
        "openai": {
            "base_url": "https://api.openai.com/v1",
            "api_key_env": "OPENAI_API_KEY",
            "models": {"gpt-4o-mini": 128000, "gpt-4o": 128000, "gpt-4.1": 1047576},
        },
        "ollama": {
            "base_url": "http://localhost:11434/v1",
            "models": {"llama3.2": 131072},
        },
    }
}


def default_config_text() -> str:
    """The starter config: a comment header and two example providers, neither selected."""
    return _HEADER + tomli_w.dumps(_EXAMPLE_PROVIDERS)


def write_default_config(path: Path) -> bool:
    """Write the starter config to ``path`` if, and only if, no file is there.

    The check and the creation are one atomic step (``O_EXCL``), so a file the user wrote is never
    overwritten, even one that appears between a check and the write.

    Args:
        path: Where the config file goes; its directory is created (0700) when missing.

    Returns:
        True if the file was written; False if something already existed at ``path``.

    Raises:
        OSError: The directory or the file could not be created or written.
    """
    ensure_private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(default_config_text())
    except OSError:
        # A half-written starter file would be reported as broken on every start and never
        # replaced (we don't overwrite), so take back what we created.
        path.unlink(missing_ok=True)
        raise
    return True
