"""The config file as text and TOML, without pydantic: reading it (with the problems that stop it
being parsed), the starter file, and the settings the first screen needs of a file that surely
validates (:func:`quick_settings`).

Validation proper (:mod:`sessions.config`) imports pydantic; the first screen needs only the model,
the keys and the profile, so it does not wait for pydantic unless the file may have a problem to
report (then :mod:`sessions.config` words it, as always).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.text.redaction import looks_like_key
from sessions.paths import ensure_private_dir

FALLBACK = "using the default settings"


@dataclass(frozen=True, slots=True)
class ConfigRead:
    """The config file read and parsed: its TOML document, or why there is none."""

    path: Path
    exists: bool
    """False when there was no file (so a starter one may be written)."""
    document: dict[str, Any] | None = None
    """The parsed TOML; None when there was no file or it could not be read or parsed."""
    problems: tuple[str, ...] = ()
    """Why the file could not be read or parsed, one sentence each, naming the file."""


def read_config(path: Path) -> ConfigRead:
    """Read and parse ``path``; never raises. A missing file gives no document and no problem; one
    that cannot be read, decoded or parsed gives no document and a problem saying why (with line
    and column for syntax errors)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return ConfigRead(path, exists=False)
    except OSError as err:
        reason = err.strerror or str(err)
        return ConfigRead(path, True, problems=(f"{path}: could not be read ({reason}) — {FALLBACK}.",))
    try:
        # utf-8-sig: editors on Windows put a byte-order mark at the start, which tomllib rejects.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        problem = f"{path}: is not UTF-8 text (bad byte at offset {err.start}) — {FALLBACK}."
        return ConfigRead(path, True, problems=(problem,))
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        return ConfigRead(path, True, problems=(f"{path}: {describe_toml_error(err)} — {FALLBACK}.",))
    except RecursionError:  # tomllib recurses once per level of nested arrays and inline tables
        problem = f"{path}: arrays or inline tables are nested too deeply to read — {FALLBACK}."
        return ConfigRead(path, True, problems=(problem,))
    except ValueError:  # tomllib lets int()'s limit on digits (4300) escape as a plain ValueError
        return ConfigRead(
            path, True, problems=(f"{path}: a number has too many digits to read — {FALLBACK}.",)
        )
    return ConfigRead(path, True, document)


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


# --- what the first screen needs --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuickProvider:
    """A provider of a config that surely validates, as :class:`sessions.config.ProviderConfig`."""

    base_url: str
    api_key_env: str | None = None
    models: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class QuickSettings:
    """What the first screen needs of a config that surely validates: the same values
    :class:`sessions.config.Config` will hold once pydantic has validated it."""

    model: str | None = None
    providers: Mapping[str, QuickProvider] = field(default_factory=dict)
    profile: str = "balanced"
    keys: Mapping[str, str] = field(default_factory=dict)


_LIMIT = 2**53
"""Integers beyond this are left to pydantic (as floats they lose digits or overflow)."""


def _text(value: object) -> bool:
    return isinstance(value, str)


def _flag(value: object) -> bool:
    return isinstance(value, bool)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) < _LIMIT


def _number(value: object) -> bool:
    return _whole(value) or (isinstance(value, float) and math.isfinite(value))


def _positive(value: object) -> bool:
    return _number(value) and value > 0  # type: ignore[operator]


def _share(value: object) -> bool:
    return _positive(value) and value <= 1  # type: ignore[operator]


def _price(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_number(p) and p >= 0 for p in value)


def _mapping(check: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: isinstance(value, dict) and all(check(v) for v in value.values())


def _table(fields: Mapping[str, Callable[[object], bool]], *required: str) -> Callable[[object], bool]:
    """A TOML table with only these keys (an unknown one is a warning to word), each valid."""
    return lambda value: (
        isinstance(value, dict)
        and all(key in value for key in required)
        and all(key in fields and fields[key](item) for key, item in value.items())
    )


def _url(value: object) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://"))


def _variable(value: object) -> bool:
    return isinstance(value, str) and not looks_like_key(value)  # else a warning to word


_PROVIDER = _table(
    {"base_url": _url, "api_key_env": _variable, "models": _mapping(lambda w: _whole(w) and w > 0)},  # type: ignore[operator]
    "base_url",
)
_CONFIG = _table(
    {
        "model": _text,
        "system_prompt": _text,
        "providers": _mapping(_PROVIDER),
        "timeouts": _table({"connect": _positive, "read": _positive}),
        "max_retries": lambda n: _whole(n) and n >= 0,  # type: ignore[operator]
        "profile": lambda p: isinstance(p, str) and p in ("quality", "balanced", "cost"),
        "embeddings": lambda e: isinstance(e, str) and e in ("off", "local", "provider"),
        "embedding_model": _text,
        "memory": _table({"enabled": _flag, "inactivity_minutes": _positive}),
        "curation": _table(
            {
                "curator": _flag,
                "curator_model": _text,
                "curator_timeout": _positive,
                "model_summaries": _flag,
                "pin_limit": _share,
                "prices": _mapping(_price),
            }
        ),
        "keys": _mapping(_text),
    }
)


def quick_settings(read: ConfigRead) -> QuickSettings | None:
    """The settings the first screen needs, when the file surely validates with nothing to report
    beyond ``read.problems`` (or could not be read: the defaults); None when it may not, or may
    warn: then :mod:`sessions.config` must validate it first. Conservative: a file it refuses may
    still be fine."""
    document = read.document
    if document is None:  # no file, or one that could not be read: the defaults, and read's problems
        return QuickSettings()
    if not _CONFIG(document):
        return None
    providers = {
        name: QuickProvider(p["base_url"], p.get("api_key_env"), dict(p.get("models", {})))
        for name, p in document.get("providers", {}).items()
    }
    return QuickSettings(
        document.get("model"), providers, document.get("profile", "balanced"), dict(document.get("keys", {}))
    )


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
#     embeddings = "off"     # or "local": recall by meaning too (a bundled model, offline),
#                            # or "provider": the connected server's /v1/embeddings (each
#                            # message's text is sent there once), with embedding_model
#     embedding_model = "text-embedding-3-small"   # or "nomic-embed-text" (Ollama), ...
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
    import tomli_w

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
