"""CPU time to the first frame, Heedful against Elia: a measure that a loaded machine distorts less.

Usage: .venv/bin/python tests/benchmarks/first_frame_cpu.py [--runs 5] [--elia-venv /tmp/elia-venv]

``first_paint.py`` times the first full screen from the outside, as the user waits for it; on a
machine shared with other work both apps wait for the CPU, Elia more than Heedful, and the ratio
moves with the load. This script runs each app (alternating, in tmux, a fresh HOME, offline) with a
hook on Textual's ``App._display``: the first frame drawn writes the process's CPU time so far (all
threads, from the interpreter's start) and the wall time since launch, and ends the process. The
first frame drawn is not quite the first full screen (Elia fills its history a frame later), so
compare ratios of this script with each other, not with ``first_paint.py``'s.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOCKET = f"first-frame-cpu-{os.getpid()}"
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "HEEDFUL_API_KEY")
TIMEOUT = 30.0

HOOK = """
import os, sys, time
import textual.app

_display = textual.app.App._display

def display(self, screen, renderable):
    _display(self, screen, renderable)
    if renderable is not None:
        with open(os.environ["FRAME_OUT"], "w") as out:
            out.write(f"{time.process_time()} {time.time() - float(os.environ['FRAME_START'])}")
        os._exit(0)

textual.app.App._display = display
sys.argv = [sys.argv[1]]
if sys.argv[0] == "elia":
    from elia_chat.__main__ import cli
    cli()
else:
    from cli.main import main
    sys.exit(main())
"""


def run(python: str, app: str, home: Path, out: Path) -> tuple[float, float]:
    """One launch in tmux: (CPU seconds, wall seconds) to the first frame drawn."""
    out.unlink(missing_ok=True)
    unset = " ".join(f"-u {name}" for name in KEY_VARIABLES)
    shell = (
        f"env {unset} HOME={shlex.quote(str(home))} FRAME_OUT={shlex.quote(str(out))} "
        f"FRAME_START={time.time()} {shlex.quote(python)} -c {shlex.quote(HOOK)} {app}"
    )
    session = f"{app}-{time.monotonic_ns()}"
    subprocess.run(
        ["tmux", "-L", SOCKET, "new-session", "-d", "-s", session, "-x", "100", "-y", "30", shell],
        check=True,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not out.exists() or not out.read_text():
            if time.monotonic() > deadline:
                raise SystemExit(f"{app}: no frame after {TIMEOUT:.0f} s")
            time.sleep(0.05)
        cpu, wall = (float(x) for x in out.read_text().split())
        return cpu, wall
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-session", "-t", session], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--elia-venv", type=Path, default=Path("/tmp/elia-venv"))
    args = parser.parse_args()
    elia_python = args.elia_venv / "bin" / "python"
    if not elia_python.exists():
        raise SystemExit(f"no Elia at {args.elia_venv} (first_paint.py installs it there)")
    apps = {"heedful": sys.executable, "elia": str(elia_python)}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in apps}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            for n in range(args.runs):
                for name, python in apps.items():
                    home = Path(scratch) / f"home-{name}-{n}"
                    home.mkdir()
                    figures[name].append(run(python, name, home, Path(scratch) / "frame"))
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    medians = {}
    for name, runs in figures.items():
        cpu = statistics.median(c for c, _ in runs)
        wall = statistics.median(w for _, w in runs)
        medians[name] = cpu
        listed = ", ".join(f"{c:.3f}" for c, _ in runs)
        print(f"{name}: CPU to the first frame {listed} s (median {cpu:.3f}); wall median {wall:.3f} s")
    print(f"ratio of CPU medians, Heedful / Elia: {medians['heedful'] / medians['elia']:.2f}")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
