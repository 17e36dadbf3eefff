"""A 1,000,000-line transcript: importing it with ``heedful sessions import``, then opening it in the app.

Writes (once, into /tmp) a transcript of short messages, user and assistant in turn, each with its
``created_at``, and measures in a scratch data dir:

* import: wall time and peak RSS of ``python -m cli.main sessions import FILE`` (GNU time's
  "Maximum resident set size": the process's own peak, not its parent's at fork);
* open: a fresh process runs the real app headless against the loopback fake server (in this
  process, so its threads and replies do not count as the app's) and, as a user would, sends a
  message as soon as the session's latest message is on screen. From launching the process to that
  message on screen, and to the server receiving the request; the app's peak RSS then.

Targets (issue 34): import <= 60 s and <= 300 MB, with progress shown; first request out <= 5 s
after opening, peak RSS <= 600 MB.

    .venv/bin/python tests/benchmarks/huge_import.py [--lines N] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SIZE = (120, 40)
MODEL = "gpt-4o-mini"
REPLY = "Noted."


def transcript(lines: int) -> Path:
    """The transcript of ``lines`` short messages in /tmp, written once."""
    path = Path(tempfile.gettempdir()) / f"heedful-huge-{lines}.jsonl"
    if path.exists():
        return path
    start = datetime(2025, 1, 1, tzinfo=UTC)
    scratch = path.with_suffix(".part")
    with scratch.open("w", encoding="utf-8") as out:
        for n in range(lines):
            line = {
                "id": str(n + 1),
                "role": "user" if n % 2 == 0 else "assistant",
                "content": f"message {n} about item{n % 997} and the weather in town{n % 89}",
                "created_at": (start + timedelta(seconds=n)).isoformat(),
            }
            out.write(json.dumps(line) + "\n")
    scratch.rename(path)
    return path


def timed_import(path: Path, env: dict[str, str]) -> str:
    command = ["/usr/bin/time", "-v", sys.executable, "-m", "cli.main", "sessions", "import", str(path)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the import failed ({done.returncode}):\n{done.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    assert wall is not None and rss is not None, done.stderr
    return f"import: {wall.group(1)} wall, peak RSS {int(rss.group(1)) / 1024:.0f} MB ({done.stdout.strip()})"


def peak_rss() -> float:
    """This process's peak resident memory so far (VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def poll(predicate: object, seconds: float, step: float = 0.01) -> float | None:
    """The moment ``predicate()`` held, or None after ``seconds``."""
    assert callable(predicate)
    deadline = time.perf_counter() + seconds
    while not predicate():
        if time.perf_counter() > deadline:
            return None
        await asyncio.sleep(step)
    return time.perf_counter()


async def measure_open(base_url: str, launched: float, wait: float) -> None:
    """In the app's own process: open the session, send a message once its latest is shown."""
    import urllib.request

    from sessions import paths
    from sessions.store import SqliteChatStore
    from tests.apphelpers import chat, make_app

    store = SqliteChatStore(paths.database_path())
    session = store.latest_session()
    assert session is not None
    last_id = store.message_page(session.id, limit=1).messages[0].id
    store.close()

    def stream_requests() -> list[dict[str, object]]:
        with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/requests", timeout=10) as answer:
            return [r for r in json.load(answer) if r["kind"] == "stream"]

    app = make_app(base_url=base_url, model=MODEL)
    async with app.run_test(size=SIZE):
        screen = chat(app)
        shown = await poll(lambda: screen.message_list.view_for(last_id) is not None, wait)
        if shown is None:
            print(f"open: the latest message was not on screen after {wait:.0f} s")
            return
        rss = peak_rss()
        print(f"open: latest message on screen {shown - launched:.2f} s after launch; peak RSS {rss:.0f} MB")
        screen.composer.text = "what about the weather in town7?"
        screen.composer.action_submit()
        asked = await poll(lambda: bool(stream_requests()), wait, step=0.1)
        if asked is None:
            print(f"first request: none within {wait:.0f} s of Enter; peak RSS {peak_rss():.0f} MB")
            return
        received = float(stream_requests()[0]["received_at"])  # type: ignore[arg-type]
        print(
            f"first request: received {received - launched:.2f} s after launch, "
            f"{received - shown:.2f} s after Enter; peak RSS {peak_rss():.0f} MB"
        )
        settled = await poll(lambda: screen.context is not None and screen.settled, wait, step=0.1)
        notes = " / ".join(screen.context.notes) if screen.context is not None else ""
        when = "never" if settled is None else f"{settled - launched:.2f} s after launch"
        print(f"panel settled: {when}; its notes: {notes or '(none)'}; peak RSS {peak_rss():.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for each step")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--server", help=argparse.SUPPRESS)
    parser.add_argument("--launched", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        asyncio.run(measure_open(args.server, args.launched, args.timeout))
        return
    path = transcript(args.lines)
    print(f"transcript: {path} ({path.stat().st_size / 1e6:.0f} MB, {args.lines:,} lines)")
    with tempfile.TemporaryDirectory() as scratch:
        env = {
            **os.environ,
            "HEEDFUL_DATA_DIR": f"{scratch}/data",
            "HEEDFUL_CONFIG": f"{scratch}/config/config.toml",
        }
        print(timed_import(path, env))
        from tests.fake_openai import FakeOpenAIServer

        with FakeOpenAIServer(reply=REPLY) as server:
            command = [sys.executable, __file__, "--measure", "--server", server.base_url]
            command += ["--timeout", str(args.timeout), "--launched"]
            subprocess.run([*command, repr(time.perf_counter())], check=True, env=env)


if __name__ == "__main__":
    main()
