"""How long the context panel takes to show a new turn's context, at 1,000 and 10,000 items.

Builds a synthetic session (the same writer as curation_speed.py), curates it, and then, in a
headless Textual app, shows the context of each of 40 more turns (after one to warm up) in a
ContextPanel whose rows have the focus and a highlighted row. Each figure is ``ContextPanel.show``
plus the refresh it causes (layout and paint, awaited with ``pilot.pause()``): what the user waits
for after a turn.
Target (issue 4): ≤ 50 ms at 1,000 items. The CPU figure is the work; the wall figure also holds the
wait for Textual's next frame, which the script measures on its own for comparison.

    .venv/bin/python tests/benchmarks/panel_update.py
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, when run as a script

from textual.app import App, ComposeResult

from engine.curation.context_building import build_view
from engine.curation.context_view import ContextView
from engine.curation.session_curation import SessionCuration
from engine.text.tokens import load_counter
from tests.benchmarks.curation_speed import Writer
from themes import DEFAULT_THEME, THEMES
from tui import heap
from tui.widgets.context_panel import ContextPanel

TURNS = 41


def contexts(size: int) -> list[ContextView]:
    writer = Writer(random.Random(size))
    counter = load_counter("gpt-4o-mini")
    curation = SessionCuration(window=128_000, counter=counter, budget_ratio=0.05)
    next_id = 1

    def add(role: str) -> ContextView | None:
        nonlocal next_id
        text = writer.message()
        item = curation.add_message(next_id, role, text, counter.count(text))  # type: ignore[arg-type]
        next_id += 1
        if role != "user":
            return None
        result = curation.plan(item)
        curation.apply(result)
        return build_view(curation, result, new_id=item.id)

    while len(curation.items) < size:
        add("user")
        add("assistant")
    views = []
    for _ in range(TURNS):
        view = add("user")
        assert view is not None
        views.append(view)
        add("assistant")
    return views


class PanelApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {"heedful-user": "blue", "heedful-assistant": "green", "heedful-muted": "grey"}

    def on_mount(self) -> None:
        for theme in THEMES:
            self.register_theme(theme)
        self.theme = DEFAULT_THEME

    def compose(self) -> ComposeResult:
        yield ContextPanel(id="context")


async def measure(views: list[ContextView]) -> tuple[list[float], list[float]]:
    """Wall-clock time to the painted update, and the CPU time the process spent on it (the wall
    time includes waiting for Textual's next frame, up to 1/60 s)."""
    app = PanelApp()
    wall, cpu = [], []
    async with app.run_test(size=(140, 45)) as pilot:
        panel = app.query_one(ContextPanel)
        panel.rows.focus()
        # After a turn the panel already shows the previous turn's context, as it does here.
        panel.show(views[0], model="model", exact=True, counter="cl100k_base")
        await pilot.pause()
        heap.settle()  # as the app does once a session is on screen
        for view in views[1:]:
            started, started_cpu = time.perf_counter(), time.process_time()
            panel.show(view, model="model", exact=True, counter="cl100k_base")
            await pilot.pause()
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
        idle = []
        for _ in range(len(views)):
            started = time.perf_counter()
            panel.refresh()
            await pilot.pause()
            idle.append((time.perf_counter() - started) * 1000)
        print(f"  (a bare refresh and pause costs {statistics.median(idle):.1f} ms wall: the frame wait)")
    return sorted(wall), sorted(cpu)


def summary(times: list[float]) -> str:
    p95 = times[int(0.95 * len(times))]
    return f"p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, max {times[-1]:.1f} ms"


def main() -> None:
    for size in (1_000, 10_000):
        wall, cpu = asyncio.run(measure(contexts(size)))
        print(f"{size:>6,} items: panel update wall {summary(wall)}; CPU {summary(cpu)}")


if __name__ == "__main__":
    main()
