"""Time to the first full screen, Heedful against Elia, in a real terminal (tmux).

Usage: .venv/bin/python tests/benchmarks/first_paint.py [--runs 5] [--heedful COMMAND] [--base COMMAND]

Each run launches the app in a fresh tmux session (100x30) with a fresh, empty HOME and no API key
(offline), and polls the screen every 20 ms from just before the launch until the app's first full
screen is on it; the apps alternate, Heedful first. The first full screen is, for Heedful: the
header's model badge ("offline model · F3 connect"), the conversation's latest page (a new HOME
has none, so the welcome text: "Welcome to Heedful"), the composer's placeholder ("Enter sends")
and the footer's last key ("palette"). For Elia: its header ("Elia v1.10.0") with the model
("GPT-4o"), the composer's title ("Enter your message"), the history list ("History (") and the
footer's last key ("f1 Help"). Prints every run, both medians and the ratio Heedful / Elia.
With ``--base`` (another checkout, e.g. the commit before a change) it runs a third time in each
round, between the two, and prints its median and ratio too: the machine's load varies, so a
before/after comparison is only fair within one run.

Elia (pip ``elia-chat==1.10.0``) is installed into a scratch venv under /tmp (``--elia-venv``) the
first time; it needs no key to show its first screen.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, when run as a script

from tests.benchmarks.tmux_clock import seconds_until

ELIA_VERSION = "elia-chat==1.10.0"
SOCKET = f"first-paint-{os.getpid()}"
"""A tmux server of its own: other tmux users on the machine neither see nor stop its sessions."""
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "HEEDFUL_API_KEY")


@dataclass(frozen=True)
class App:
    name: str
    command: list[str]
    marks: tuple[str, ...]
    """Texts that are all on the screen once its first full screen is drawn."""


def ensure_elia(venv: Path) -> Path:
    """The ``elia`` command in ``venv``, created (with Elia installed) if missing."""
    command = venv / "bin" / "elia"
    if not command.exists():
        print(f"installing {ELIA_VERSION} into {venv} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", ELIA_VERSION], check=True)
    return command


def time_first_screen(app: App, session: str) -> float:
    """Seconds from launching ``app`` in tmux to all of its marks being on the screen."""
    home = Path(tempfile.mkdtemp(prefix=f"first-paint-{app.name.lower()}-"))
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES and not k.startswith("XDG_")}
    env.update(HOME=str(home), TERM="xterm-256color")
    env.pop("HEEDFUL_DATA_DIR", None)
    env.pop("HEEDFUL_CONFIG", None)
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k in ("HOME", "PATH", "TERM"))
    shell = f"env -i {exports} {shlex.join(app.command)}"
    try:
        return seconds_until(
            SOCKET,
            session,
            shell,
            lambda shown: all(mark in shown for mark in app.marks),
            f"{app.name} first screen",
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--heedful",
        default=str(Path(".venv/bin/heedful").resolve()),
        help="the command that starts Heedful (e.g. another checkout: 'env PYTHONPATH=DIR python -m cli')",
    )
    parser.add_argument("--base", help="another Heedful to time in the same rounds (same form as --heedful)")
    parser.add_argument("--elia-venv", type=Path, default=Path("/tmp/elia-venv"))
    args = parser.parse_args()
    marks = ("offline model · F3 connect", "Welcome to Heedful", "Enter sends", "palette")
    heedful = App("Heedful", shlex.split(args.heedful), marks)
    base = App("Base", shlex.split(args.base), marks) if args.base else None
    elia = App(
        "Elia",
        [str(ensure_elia(args.elia_venv))],
        ("Elia v1.10.0", "GPT-4o", "Enter your message", "History (", "f1 Help"),
    )
    apps = [heedful, *([base] if base else []), elia]
    times: dict[str, list[float]] = {app.name: [] for app in apps}
    # A session that keeps the server up between runs, so no run pays for starting it.
    subprocess.run(["tmux", "-L", SOCKET, "new-session", "-d", "-s", "keep", "sleep 3600"], check=True)
    try:
        for run in range(1, args.runs + 1):
            for app in apps:
                seconds = time_first_screen(app, f"first-paint-{os.getpid()}")
                times[app.name].append(seconds)
                print(f"run {run} {app.name:8} {seconds:.3f} s", flush=True)
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    ours, theirs = statistics.median(times[heedful.name]), statistics.median(times[elia.name])
    print(f"median Heedful {ours:.3f} s, Elia {theirs:.3f} s, ratio {ours / theirs:.2f}")
    if base:
        before = statistics.median(times[base.name])
        print(f"median Base {before:.3f} s, ratio {before / theirs:.2f}")
    for app in apps:
        print(f"range {app.name:8} {min(times[app.name]):.3f}-{max(times[app.name]):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
