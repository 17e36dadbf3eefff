"""CPU time to the first frame, Heedful against Elia: a measure that a loaded machine distorts less.

Usage: .venv/bin/python tests/benchmarks/first_frame_cpu.py [--runs 5] [--elia-venv /tmp/elia-venv]
       [--base CHECKOUT]

``first_paint.py`` times the first full screen from the outside, as the user waits for it; on a
machine shared with other work both apps wait for the CPU, Elia more than Heedful, and the ratio
moves with the load. This script runs each app (alternating, in tmux, a fresh HOME, offline) with a
hook on Textual's ``App._display``: once the frames written to the terminal have covered every row
of the screen, it records the process's CPU time so far (all threads, from the interpreter's start)
and the wall time since launch, and ends the process. Frames Textual renders while its start-up
holds updates back are dropped, not written, and the first written after them sends only the rows
that changed since: the CPU to the first frame rendered (the figure this script printed before)
is printed too. A screen written whole is not quite the first full screen (Elia fills its history
a frame later), so compare ratios of this script with each other, not with ``first_paint.py``'s.
With ``--base`` (another checkout with its own ``.venv``, e.g. of the commit before a change) it
runs that one too in each round, between the two.
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
import importlib.abc, importlib.util, os, sys, time

def written(start):
    out = os.environ["FRAME_OUT"]
    with open(out + ".part", "w") as file:
        file.write(f"{time.process_time()} {time.time() - start}")
    os.replace(out + ".part", out)

class AfterTextualApp(importlib.abc.MetaPathFinder):
    # Hooks App._display once the app itself imports textual.app: its import order and its
    # collector's settings (Heedful's are off until the first frame) stay its own.
    def find_spec(self, name, path, target=None):
        if name != "textual.app":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        exec_module = spec.loader.exec_module

        def exec_and_hook(module):
            exec_module(module)
            _display = module.App._display
            start = float(os.environ["FRAME_START"])
            rendered = []
            rows = set()

            def display(self, screen, renderable):
                _display(self, screen, renderable)
                if renderable is None:
                    return
                if not rendered:
                    rendered.append(f"{time.process_time()} {time.time() - start}")
                if self._batch_count:  # dropped: Textual's start-up holds updates back
                    return
                spans = getattr(renderable, "spans", None)  # a partial update: the rows it writes
                region = getattr(renderable, "region", None)  # a layout update: the rows it covers
                if spans is not None:
                    rows.update(y for y, _, _ in spans)
                elif region is not None:
                    rows.update(range(region.y, region.bottom))
                if len(rows) >= self.size.height:  # every row of the screen written
                    with open(os.environ["FRAME_OUT"] + ".rendered", "w") as file:
                        file.write(rendered[0])
                    written(start)
                    os._exit(0)

            module.App._display = display

        spec.loader.exec_module = exec_and_hook
        return spec

sys.meta_path.insert(0, AfterTextualApp())
sys.argv = [sys.argv[1]]
if sys.argv[0] == "elia":
    from elia_chat.__main__ import cli
    cli()
else:
    from cli.main import main
    sys.exit(main())
"""


def run(python: str, app: str, home: Path, out: Path, cwd: Path = ROOT) -> tuple[float, float, float]:
    """One launch in tmux: (CPU seconds, wall seconds) until every row of the screen was written,
    and the CPU seconds to the first frame rendered (written or dropped)."""
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
        cwd=cwd,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not out.exists():
            if time.monotonic() > deadline:
                raise SystemExit(f"{app}: no frame after {TIMEOUT:.0f} s")
            time.sleep(0.05)
        cpu, wall = (float(x) for x in out.read_text().split())
        rendered = float(Path(f"{out}.rendered").read_text().split()[0])
        return cpu, wall, rendered
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-session", "-t", session], capture_output=True)


def compile_bytecode(python: str, checkout: Path) -> None:
    """Write the checkout's bytecode first, as an install does (PYTHONDONTWRITEBYTECODE, if set,
    would have every run compile its modules from source: ~55 ms of CPU)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    packages = [str(checkout / name) for name in ("cli", "engine", "providers", "sessions", "themes", "tui")]
    command = [python, "-m", "compileall", "-q", *packages]
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--elia-venv", type=Path, default=Path("/tmp/elia-venv"))
    parser.add_argument(
        "--base", type=Path, help="another checkout with its own .venv, timed in the same rounds"
    )
    args = parser.parse_args()
    elia_python = args.elia_venv / "bin" / "python"
    if not elia_python.exists():
        raise SystemExit(f"no Elia at {args.elia_venv} (first_paint.py installs it there)")
    apps = {"heedful": (sys.executable, ROOT)}
    if args.base:
        apps["base"] = (str(args.base / ".venv" / "bin" / "python"), args.base.resolve())
    for python, checkout in apps.values():
        compile_bytecode(python, checkout)
    apps["elia"] = (str(elia_python), ROOT)
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in apps}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            for n in range(args.runs):
                for name, (python, cwd) in apps.items():
                    home = Path(scratch) / f"home-{name}-{n}"
                    home.mkdir()
                    command = "elia" if name == "elia" else "heedful"
                    figures[name].append(run(python, command, home, Path(scratch) / "frame", cwd))
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    medians: dict[str, tuple[float, float]] = {}
    for name, runs in figures.items():
        cpu = statistics.median(c for c, _, _ in runs)
        wall = statistics.median(w for _, w, _ in runs)
        rendered = statistics.median(r for _, _, r in runs)
        medians[name] = (cpu, rendered)
        listed = ", ".join(f"{c:.3f}" for c, _, _ in runs)
        print(
            f"{name}: CPU to the screen written whole {listed} s (median {cpu:.3f}); "
            f"wall median {wall:.3f} s; CPU to the first frame rendered (median) {rendered:.3f} s"
        )
    for name in [n for n in medians if n != "elia"]:
        (ours, ours_rendered), (theirs, theirs_rendered) = medians[name], medians["elia"]
        print(
            f"ratio of CPU medians, {name} / Elia: {ours / theirs:.2f} to the screen written whole "
            f"({ours_rendered / theirs_rendered:.2f} to the first frame rendered)"
        )
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
