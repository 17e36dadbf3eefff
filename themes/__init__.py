"""Heedful's Textual themes, read from themes.toml beside this file.

App-specific colours are theme variables (``heedful-user``, ``heedful-assistant``, ...) so that the
.tcss files never name a colour directly and each theme decides them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from textual.theme import Theme

THEMES: tuple[Theme, ...] = tuple(
    Theme(name=name, **fields)
    for name, fields in tomllib.loads(Path(__file__).with_name("themes.toml").read_text("utf-8")).items()
)
DEFAULT_THEME = THEMES[0].name
