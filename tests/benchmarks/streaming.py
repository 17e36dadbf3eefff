"""Streaming a fast model's reply: how much of a core the app uses, and how far behind it finishes.

The real app (headless, 100×40) streams a 1,000-piece reply from the loopback fake server at 200
pieces a second (5 ms apart; the server runs in this process but sleeps between pieces). Two
figures, after a warm-up turn:

* CPU: the app's threads' CPU time (not the fake server's) over the wall time of the stream, as a
  share of one core, with the app left to run on its own while the benchmark waits;
* lag: from the server writing its last piece to the reply being whole on screen.

Targets (issue 8): lag ≤ 250 ms, CPU ≤ 50% of a core.

    .venv/bin/python tests/benchmarks/streaming.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

PIECES = 1_000
DELAY = 0.005


async def main() -> None:
    from tests.apphelpers import chat, make_app, send, views
    from tests.benchmarks.long_session import app_cpu, last_piece_at, poll
    from tests.fake_openai import FakeOpenAIServer
    from tests.test_app import body

    reply = " ".join(f"word{n}" for n in range(PIECES))
    with FakeOpenAIServer(reply=reply) as server:
        app = make_app(base_url=server.base_url, model="fake-model")
        async with app.run_test(size=(100, 40)) as pilot:
            await send(pilot, "warm up")
            server.chunk_delay = DELAY
            screen = chat(app)
            screen.composer.insert("go")
            cpu, wall = app_cpu(), time.perf_counter()
            await pilot.press("enter")
            done = await poll(lambda: len(views(app)) == 4 and body(views(app)[-1]) == reply, 60, step=0.01)
            used = app_cpu() - cpu
            last_piece = await last_piece_at(server)
            print(
                f"{PIECES} pieces at {1 / DELAY:.0f}/s: stream {last_piece - wall:.2f} s, "
                f"CPU {used / (done - wall):.0%} of a core, "
                f"lag after the last piece {1000 * (done - last_piece):.0f} ms"
            )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HEEDFUL_DATA_DIR"] = f"{scratch}/data"
        os.environ["HEEDFUL_CONFIG"] = f"{scratch}/config/config.toml"
        asyncio.run(main())
