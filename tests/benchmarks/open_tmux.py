"""A long session's latest message on screen, from launch, in a real terminal (tmux).

Usage: .venv/bin/python tests/benchmarks/open_tmux.py [--messages 10000] [--runs 5] [--heedful COMMAND]
[--base COMMAND]

Writes a transcript of N messages (short questions, replies of a few paragraphs, some with a code
block, written by ``curation_speed.py``'s Zipf-law writer; the last one a reply naming its number)
and imports it with ``heedful sessions import`` into a HOME of its own, once per size. Each run
copies that HOME afresh, launches ``heedful`` in a new tmux session (100x30) with it and no API key
(offline), and polls the screen every 20 ms from just before the launch until the last message's
text is on it. With ``--base`` (another checkout) the two alternate in each round, so both see the
same load. Prints every run, the medians and the ranges.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.curation_speed import Writer
from tests.benchmarks.tmux_clock import seconds_until

SOCKET = f"open-tmux-{os.getpid()}"
"""A tmux server of its own: other tmux users on the machine neither see nor stop its sessions."""


def last_words(messages: int) -> str:
    """The text the session's last message ends with: what is looked for on the screen."""
    return f"That is all for reply {messages}."


def transcript(messages: int) -> Path:
    """The transcript of ``messages`` messages in /tmp, written once."""
    path = Path(tempfile.gettempdir()) / f"heedful-open-{messages}.jsonl"
    if path.exists():
        return path
    rng = random.Random(34)
    writer = Writer(rng)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    scratch = path.with_suffix(".part")
    with scratch.open("w", encoding="utf-8") as out:
        for n in range(messages):
            if n % 2 == 0:
                role, text = "user", writer.message()
            else:
                paragraphs = [" ".join(writer.message() for _ in range(rng.randint(1, 3))) for _ in range(3)]
                if rng.random() < 0.3:
                    code = "\n".join(writer.message()[:70] for _ in range(6))
                    paragraphs.insert(1, f"```python\n{code}\n```")
                role, text = "assistant", "\n\n".join(paragraphs)
            if n == messages - 1:
                text += "\n\n" + last_words(messages)
            line = {
                "id": str(n + 1),
                "role": role,
                "content": text,
                "created_at": (start + timedelta(seconds=n)).isoformat(),
            }
            out.write(json.dumps(line) + "\n")
    scratch.rename(path)
    return path


def clean_env(home: Path) -> dict[str, str]:
    """A fresh HOME, no keys and no Heedful or XDG overrides: only HOME, PATH and TERM."""
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color"}


def template_home(messages: int, heedful: list[str]) -> Path:
    """A HOME whose database holds the imported session, built once per size."""
    home = Path(tempfile.gettempdir()) / f"heedful-open-home-{messages}"
    if (home / ".done").exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    source = transcript(messages)
    print(f"importing {messages:,} messages into {home} ...", file=sys.stderr)
    subprocess.run([*heedful, "sessions", "import", str(source)], env=clean_env(home), check=True)
    (home / ".done").touch()
    return home


def time_open(command: list[str], template: Path, mark: str) -> float:
    """Seconds from launching ``command`` in tmux on a copy of ``template`` to ``mark`` on screen."""
    scratch = Path(tempfile.mkdtemp(prefix="open-tmux-"))
    home = scratch / "home"
    shutil.copytree(template, home)
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in clean_env(home).items())
    session = f"open-{os.getpid()}"
    shell = f"env -i {exports} {shlex.join(command)}"
    try:
        return seconds_until(SOCKET, session, shell, lambda shown: mark in shown, "last message")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--heedful", default=str(Path(".venv/bin/heedful").resolve()))
    parser.add_argument("--base", help="another Heedful to time in the same rounds (same form as --heedful)")
    args = parser.parse_args()
    commands = {"Heedful": shlex.split(args.heedful)}
    if args.base:
        commands["Base"] = shlex.split(args.base)
    template = template_home(args.messages, commands["Heedful"])
    mark = last_words(args.messages)
    times: dict[str, list[float]] = {name: [] for name in commands}
    subprocess.run(["tmux", "-L", SOCKET, "new-session", "-d", "-s", "keep", "sleep 3600"], check=True)
    try:
        for run in range(1, args.runs + 1):
            for name, command in commands.items():
                seconds = time_open(command, template, mark)
                times[name].append(seconds)
                print(f"run {run} {name:8} {seconds:.3f} s", flush=True)
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    for name, timed in times.items():
        print(
            f"{args.messages:,} messages, {name}: median {statistics.median(timed):.3f} s, "
            f"range {min(timed):.3f}-{max(timed):.3f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
