"""Input latency while a 10 MB paste is pasted, sent, counted, analysed and answered.

Runs the real app headless (offline model, a throwaway data directory). A thread stands in for
the terminal driver: every 20 ms it hands the event loop a callback, as the driver does with each
key, and the script records how long the loop took to run it. That wait is what a key typed at
that moment would wait before the app could even see it. Target (issue 7): ≤ 100 ms while the
message is tokenized and its entities extracted (both run off the event loop).

    .venv/bin/python tests/benchmarks/paste_latency.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

PASTE = ("lorem ipsum dolor sit amet, consectetur adipiscing elit 12345 Paris error.py\n" * 140_000)[
    :10_000_000
]
TICK = 0.02


class InputProbe:
    """Hands the event loop a callback every TICK seconds from another thread; records the wait."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waits: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _arrived(self, sent: float) -> None:
        self.waits.append(time.perf_counter() - sent)

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            self.loop.call_soon_threadsafe(self._arrived, time.perf_counter())

    def __enter__(self) -> InputProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def report(label: str, waits: list[float], seconds: float) -> None:
    ms = sorted(w * 1000 for w in waits)
    p95 = ms[int(len(ms) * 0.95)]
    p99 = ms[int(len(ms) * 0.99)]
    print(
        f"{label:<34} {seconds:6.2f} s  {len(ms):4} probes  p50 {statistics.median(ms):5.1f} ms  "
        f"p95 {p95:5.1f} ms  p99 {p99:5.1f} ms  max {ms[-1]:6.1f} ms"
    )


async def main() -> None:
    from textual import events

    from tests.apphelpers import chat, make_app, views, wait_for
    from tui.screens.dialogs import ConfirmScreen

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.context is not None)
        screen.composer.focus()
        loop = asyncio.get_running_loop()

        with InputProbe(loop) as probe:
            started = time.perf_counter()
            app.post_message(events.Paste(PASTE))
            await wait_for(pilot, lambda: screen.composer.text.startswith("[Pasted"))
            report("paste 10 MB into the composer", probe.waits, time.perf_counter() - started)

        await pilot.press("enter")  # far over the budget: the app asks first
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        with InputProbe(loop) as probe:
            started = time.perf_counter()
            await pilot.press("y")
            await wait_for(pilot, lambda: len(views(app)) == 2 and not screen.busy, 300)
            report("send: store, count, curate, reply", probe.waits, time.perf_counter() - started)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HEEDFUL_DATA_DIR"] = f"{scratch}/data"
        os.environ["HEEDFUL_CONFIG"] = f"{scratch}/config/config.toml"
        asyncio.run(main())
