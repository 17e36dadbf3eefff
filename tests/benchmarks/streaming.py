"""Streaming a fast model's reply: how much of a core the app uses, and how far behind it finishes.

The real app (headless, 100×40) streams a 1,000-piece reply from the loopback fake server at 200
pieces a second (5 ms apart). The server runs in the parent process, so that the measuring process
holds only the app. Two figures, after a warm-up turn:

* CPU: the app's process's CPU time over the wall time of the stream, as a share of one core, with
  the app left to run on its own while the benchmark waits;
* lag: from the server writing its last piece to the reply being whole on screen.

Targets (issue 8): lag ≤ 250 ms, CPU ≤ 50% of a core.

    .venv/bin/python tests/benchmarks/streaming.py
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

PIECES = 1_000
DELAY = 0.005


REPLY = " ".join(f"word{n}" for n in range(PIECES))


async def measure(server_url: str) -> None:
    from tests.apphelpers import chat, make_app, send, views
    from tests.benchmarks.measuring import ServerControl, streamed
    from tests.test_app import body

    server = ServerControl(server_url)
    app = make_app(base_url=server.base_url, model="fake-model")
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "warm up")
        server.settings(chunk_delay=DELAY)
        screen = chat(app)
        screen.composer.insert("go")
        figures = await streamed(
            server,
            lambda: pilot.press("enter"),
            lambda: len(views(app)) == 4 and body(views(app)[-1]) == REPLY,
            step=0.01,
        )
        print(f"{PIECES} pieces at {1 / DELAY:.0f}/s: {figures}")


def main() -> None:
    if sys.argv[1:2] == ["--measure"]:
        asyncio.run(measure(sys.argv[2]))
        return
    from tests.fake_openai import FakeOpenAIServer

    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HEEDFUL_DATA_DIR"] = f"{scratch}/data"
        os.environ["HEEDFUL_CONFIG"] = f"{scratch}/config/config.toml"
        with FakeOpenAIServer(reply=REPLY) as server:
            subprocess.run([sys.executable, __file__, "--measure", server.base_url], check=True)


if __name__ == "__main__":
    main()
