"""What an entity mention is: its kind, its label and its identity across messages.

Apart from :mod:`engine.entities.extractor` (which compiles its patterns at import) so that the store, the
registry and the UI can name these types without paying for the extractor at start-up.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class EntityKind(enum.StrEnum):
    """What sort of thing an entity is; the value prefixes its ``Mention.ref``."""

    PATH = "path"
    ERROR = "error"
    SYMBOL = "symbol"
    IDENTIFIER = "identifier"
    CONFIG_KEY = "config_key"
    ENV_VAR = "env_var"
    URL = "url"
    COMMAND = "command"
    QUANTITY = "quantity"
    DATE = "date"
    NAME = "name"
    TITLE = "title"


@dataclass(frozen=True, slots=True)
class Mention:
    """One entity as mentioned in a text."""

    kind: EntityKind
    label: str
    """As it appears in the text, e.g. "auth.py:42", "New York"."""
    ref: str
    """Stable identity across messages: ``f"{kind}:{normalized}"`` (case-folded, spaces collapsed)."""
