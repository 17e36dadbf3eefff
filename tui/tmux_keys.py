"""Inside tmux, an Esc typed just before a letter can reach Heedful as Alt+letter, an action.

tmux holds an Esc for its ``escape-time`` (500 ms unless set) to see whether a key follows, and
then sends both as one Alt chord, byte for byte what Alt+letter sends. No program can tell them
apart, so the user is told once how to shorten the wait.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping

JOINS_ABOVE_MS = 50
"""A wait longer than this joins an Esc and a letter typed by a quick hand."""
TOLD_STATE = "told:tmux-escape-time"
"""App state: the escape-time the user was last told about (told again only if it changes)."""


def escape_time(environ: Mapping[str, str] = os.environ) -> int | None:
    """tmux's escape-time in milliseconds when Heedful runs inside tmux, else None (blocking:
    call it from a thread)."""
    tmux = shutil.which("tmux", path=environ.get("PATH"))
    if "TMUX" not in environ or tmux is None:
        return None
    try:
        shown = subprocess.run(
            [tmux, "show-options", "-sv", "escape-time"],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
            env=dict(environ),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = shown.stdout.strip()
    return int(value) if shown.returncode == 0 and value.isdigit() else None


def escape_notice(waited_ms: int | None) -> str | None:
    """What to tell the user about tmux's escape-time, or None when it cannot join keys."""
    if waited_ms is None or waited_ms <= JOINS_ABOVE_MS:
        return None
    return (
        f"tmux holds Esc for {waited_ms} ms (its escape-time): Esc followed at once by a letter "
        "arrives as Alt+letter, which acts on the focused message or row. "
        "`set -sg escape-time 10` in ~/.tmux.conf keeps them apart."
    )
