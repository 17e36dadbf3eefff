"""Timing an app from launch in a real terminal: a tmux server of the benchmark's own, a session
launched in it, and its screen polled until what is looked for is on it."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

POLL = 0.02
"""Seconds between two looks at the screen."""
TIMEOUT = 60.0


def screen(socket: str, session: str) -> str:
    done = subprocess.run(
        ["tmux", "-L", socket, "capture-pane", "-p", "-t", session], capture_output=True, text=True
    )
    return done.stdout if done.returncode == 0 else ""


def seconds_until(socket: str, session: str, shell: str, shown: Callable[[str], bool], what: str) -> float:
    """Launch ``shell`` in a new 100x30 tmux session and return the seconds until ``shown`` holds
    for its screen; the session is killed either way. Exits naming ``what`` after TIMEOUT."""
    subprocess.run(["tmux", "-L", socket, "kill-session", "-t", session], capture_output=True)
    try:
        start = time.perf_counter()
        subprocess.run(
            ["tmux", "-L", socket, "new-session", "-d", "-s", session, "-x", "100", "-y", "30", shell],
            check=True,
        )
        while True:
            seen = screen(socket, session)
            if shown(seen):
                return time.perf_counter() - start
            if time.perf_counter() - start > TIMEOUT:
                raise SystemExit(f"no {what} after {TIMEOUT:.0f} s; last seen:\n{seen}")
            time.sleep(POLL)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-session", "-t", session], capture_output=True)
