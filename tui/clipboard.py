"""Copying text to the user's clipboard: OSC 52 through the terminal, and a local tool if present.

OSC 52 works over SSH and in most terminals but not all (and tmux needs set-clipboard on), so when
a clipboard program is installed the text is also handed to it. Nothing here raises: copying is
best effort, and the caller says what happened.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

TOOLS: tuple[tuple[str, ...], ...] = (
    ("wl-copy",),
    ("xclip", "-selection", "clipboard"),
    ("xsel", "--clipboard", "--input"),
    ("pbcopy",),
)
"""Clipboard programs, tried in order: Wayland, X11 (two), macOS."""

_FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)


def code_blocks(markdown: str) -> list[str]:
    """The contents of the fenced code blocks of a Markdown text, in order."""
    return [match.group(2) for match in _FENCE.finditer(markdown)]


def local_tool() -> tuple[str, ...] | None:
    """The first clipboard program on PATH, with its arguments."""
    return next((tool for tool in TOOLS if shutil.which(tool[0])), None)


def copy_with_tool(tool: tuple[str, ...], text: str) -> bool:
    """Hand ``text`` to a clipboard program (blocking: call it from a thread); True if it took it."""
    try:
        done = subprocess.run(tool, input=text.encode("utf-8", "replace"), timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def copy_osc52(app: App[object], text: str) -> None:
    app.copy_to_clipboard(text)
