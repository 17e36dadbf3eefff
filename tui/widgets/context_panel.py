"""The right-hand context panel: what the next request will cost against the model's window."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from engine.prompt import ContextUsage
from tui.sanitize import inert

BAR_WIDTH = 24
WARN_AT = 0.5
HIGH_AT = 0.8


def compact(n: int) -> str:
    """1234 → "1.2k", 128000 → "128k"."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def usage_level(usage: ContextUsage) -> str:
    """CSS class for how full the window is: -ok, -warn (≥ 50 %) or -high (≥ 80 %)."""
    if usage.fraction >= HIGH_AT:
        return "-high"
    if usage.fraction >= WARN_AT:
        return "-warn"
    return "-ok"


class ContextPanel(Vertical):
    """Token budget of the next request. Curation sections join it with the curation engine."""

    DEFAULT_CSS = """
    ContextPanel {
        width: 38;
        height: 1fr;
        padding: 0 1;
        border-left: vkey $panel;
        background: $surface;
    }
    ContextPanel > .title { text-style: bold; color: $primary; margin-bottom: 1; }
    ContextPanel > .bar.-ok { color: $success; }
    ContextPanel > .bar.-warn { color: $warning; }
    ContextPanel > .bar.-high { color: $error; }
    ContextPanel > .rows { margin-top: 1; }
    ContextPanel > .note { color: $heedful-muted; margin-top: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        # Held rather than queried, so an update that races the app's shutdown is harmless.
        self._total = Static(Content("counting…"), id="context-total")
        self._bar = Static("", classes="bar -ok", id="context-bar")
        self._rows = Static("", classes="rows", id="context-rows")
        self._note = Static("", classes="note", id="context-note")

    def compose(self) -> ComposeResult:
        yield Static("Context", classes="title")
        yield self._total
        yield self._bar
        yield self._rows
        yield self._note

    def show_usage(self, usage: ContextUsage, *, model: str, counter: str) -> None:
        approx = "" if usage.exact else "≈ "
        percent = f"{usage.fraction:.0%}"
        self._total.update(Content(f"{approx}{usage.total:,} of {usage.window:,} tokens ({percent})"))
        filled = min(BAR_WIDTH, round(usage.fraction * BAR_WIDTH))
        bar = self._bar
        bar.update(Content("█" * filled + "░" * (BAR_WIDTH - filled)))
        bar.set_classes(f"bar {usage_level(usage)}")
        rows = [
            f"system prompt  {approx}{usage.system_tokens:>8,}",
            f"conversation   {approx}{usage.conversation_tokens:>8,}",
            f"  {usage.message_count:,} messages, all sent verbatim",
            f"model          {inert(model)}",
            f"window         {usage.window:>10,}",
        ]
        self._rows.update(Content("\n".join(rows)))
        note = (
            "Counts are exact."
            if usage.exact
            else "≈ approximate: the model's own tokenizer is not available offline."
        )
        self._note.update(Content(f"{note}\nCounted with {inert(counter)}."))
