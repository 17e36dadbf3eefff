"""What the event loop does during ``long_session.py``'s turns, on request: with
``HEEDFUL_TURN_PYSPY=FILE``, py-spy (``pip install py-spy``) samples every thread at 200 Hz into
FILE (raw stacks, one line each, the thread first); with ``HEEDFUL_TURN_DRAWS=1``, the layouts of
the screen (by the widgets that asked) and each widget's drawing CPU, a turn, are printed."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def probe(turns: int) -> Iterator[None]:
    """Sample or count what ``turns`` turns run inside this block do, as the environment asks."""
    spy = None
    if sampled := os.environ.get("HEEDFUL_TURN_PYSPY"):
        command = [str(Path(sys.executable).parent / "py-spy"), "record", "-p", str(os.getpid())]
        spy = subprocess.Popen([*command, "-r", "200", "-f", "raw", "-t", "-o", sampled])
        time.sleep(1.0)  # py-spy attaches
    counted = _count_draws() if os.environ.get("HEEDFUL_TURN_DRAWS") else None
    try:
        yield
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait()
        if counted is not None:
            layouts, drawn, draws, undo = counted
            undo()
            for asked, count in layouts.most_common(12):
                print(f"{count / turns:.1f} layouts a turn asked by {asked}")
            for widget, seconds in sorted(drawn.items(), key=lambda drawing: -drawing[1])[:12]:
                print(
                    f"{1000 * seconds / turns:.1f} ms a turn drawing {widget} "
                    f"({draws[widget] / turns:.1f} times)"
                )


def _count_draws() -> tuple[
    collections.Counter[str], collections.defaultdict[str, float], collections.Counter[str], Any
]:
    from textual.screen import Screen
    from textual.widget import Widget

    layouts: collections.Counter[str] = collections.Counter()
    drawn: collections.defaultdict[str, float] = collections.defaultdict(float)
    draws: collections.Counter[str] = collections.Counter()
    asking: set[str] = set()
    on_layout, refresh_layout, render_lines = Screen._on_layout, Screen._refresh_layout, Widget.render_lines

    def name(widget: Widget) -> str:
        parent = widget.parent
        where = f" in #{parent.id}" if widget.id is None and isinstance(parent, Widget) and parent.id else ""
        return f"{type(widget).__name__}#{widget.id}{where}"

    async def asked(self: Screen[object], message: Any) -> None:
        asking.add(name(message.widget))
        await on_layout(self, message)

    def laid_out(self: Screen[object], size: Any = None, scroll: bool = False) -> None:
        if not scroll:
            layouts[", ".join(sorted(asking))] += 1
            asking.clear()
        refresh_layout(self, size, scroll)

    def timed(self: Widget, crop: Any) -> Any:
        began = time.thread_time()
        try:
            return render_lines(self, crop)
        finally:
            drawn[name(self)] += time.thread_time() - began
            draws[name(self)] += 1

    def patch(screen_methods: tuple[object, object], widget_method: object) -> None:
        setattr(Screen, "_on_layout", screen_methods[0])  # noqa: B010
        setattr(Screen, "_refresh_layout", screen_methods[1])  # noqa: B010
        setattr(Widget, "render_lines", widget_method)  # noqa: B010

    patch((asked, laid_out), timed)

    def undo() -> None:
        patch((on_layout, refresh_layout), render_lines)

    return layouts, drawn, draws, undo
