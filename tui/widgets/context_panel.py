"""The right-hand context panel: what the next request sends, what was kept, and what was forgotten."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from engine.items import ItemState
from tui.sanitize import inert

if TYPE_CHECKING:
    from engine.context_view import ContextView, EntityView, ItemView

BAR_WIDTH = 24
WARN_AT = 0.5
HIGH_AT = 0.8
SHOWN_PER_SECTION = 8
STATE_MARKS = {ItemState.SUMMARIZED: "≈", ItemState.PRUNED: "✂", ItemState.ACTIVE: "○"}
"""≈ summarized, ✂ pruned, ○ active but left out of this request (waiting for your consent)."""
LINE_WIDTH = 34
"""The panel's inner width: item lines are cut to fit on one line."""
ROLE_NAMES = {"user": "you", "assistant": "ai", "system": "sys", "tool": "tool"}


def compact(n: int) -> str:
    """1234 → "1.2k", 128000 → "128k"."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def usage_level(fraction: float) -> str:
    """CSS class for how full the window is: -ok, -warn (≥ 50 %) or -high (≥ 80 %)."""
    if fraction >= HIGH_AT:
        return "-high"
    if fraction >= WARN_AT:
        return "-warn"
    return "-ok"


def _entities(views: Sequence[EntityView]) -> str:
    lines = [f"  {inert(e.label)} · {e.kind}" for e in views[:SHOWN_PER_SECTION]]
    if len(views) > SHOWN_PER_SECTION:
        lines.append(f"  … {len(views) - SHOWN_PER_SECTION:,} more")
    return "\n".join(lines) if lines else "  (none)"


def _items(views: Sequence[ItemView]) -> str:
    lines = []
    for item in views[-SHOWN_PER_SECTION:]:
        mark = "📌" if item.pinned else STATE_MARKS[item.state]
        recalled = " ↺" if item.in_prompt and item.state is not ItemState.ACTIVE else ""
        prefix = f"  {mark} #{item.id} {ROLE_NAMES[item.role]}{recalled}: "
        lines.append(prefix + inert(item.preview[: max(8, LINE_WIDTH - len(prefix))]))
    if len(views) > SHOWN_PER_SECTION:
        lines.insert(0, f"  … {len(views) - SHOWN_PER_SECTION:,} earlier")
    if not lines:
        return "  (none: everything is sent verbatim)"
    return "\n".join([*lines, "  ≈ summary ✂ pruned ○ left out ↺ recall"])


class ContextPanel(VerticalScroll):
    """Budget gauge, then active / retained / pruned entities and the messages not sent verbatim."""

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
    ContextPanel > .heading { text-style: bold; margin-top: 1; }
    ContextPanel > .note { color: $heedful-muted; margin-top: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, can_focus=False)
        # Held rather than queried, so an update that races the app's shutdown is harmless.
        self._total = Static(Content("counting…"), id="context-total")
        self._bar = Static("", classes="bar -ok", id="context-bar")
        self._summary = Static("", id="context-summary")
        self._sections = {
            name: (Static("", classes="heading"), Static("", classes="rows", id=f"context-{name}"))
            for name in ("active", "retained", "pruned", "messages")
        }
        self._note = Static("", classes="note", id="context-note")

    def compose(self) -> ComposeResult:
        yield Static("Context", classes="title")
        yield self._total
        yield self._bar
        yield self._summary
        for heading, rows in self._sections.values():
            yield heading
            yield rows
        yield self._note

    def show(self, view: ContextView, *, model: str, exact: bool, counter: str) -> None:
        approx = "" if exact else "≈ "
        self._total.update(
            Content(
                f"{approx}{view.tokens:,} of {view.budget:,} budget\nwindow {view.window:,} · {inert(model)}"
            )
        )
        filled = min(BAR_WIDTH, round(view.tokens / view.budget * BAR_WIDTH)) if view.budget else BAR_WIDTH
        self._bar.update(Content("█" * filled + "░" * (BAR_WIDTH - filled)))
        self._bar.set_classes(f"bar {usage_level(view.tokens / view.budget if view.budget else 1.0)}")
        summary = (
            f"saved {approx}{view.saved_tokens:,} tokens this turn"
            if view.saved_tokens
            else "everything fits"
        )
        self._summary.update(Content(summary))
        self._set("active", f"Active entities ({len(view.active):,})", _entities(view.active))
        self._set("retained", f"Retained ({len(view.retained):,})", _entities(view.retained))
        self._set("pruned", f"Pruned ({len(view.pruned):,})", _entities(view.pruned))
        self._set("messages", f"Not verbatim ({len(view.items):,})", _items(view.items))
        notes = list(view.notes)
        notes.append(
            "Counts are exact."
            if exact
            else "≈ approximate: the model's own tokenizer is not available offline."
        )
        notes.append(f"Counted with {inert(counter)}.")
        self._note.update(Content("\n".join(inert(n) for n in notes)))

    def _set(self, name: str, heading: str, rows: str) -> None:
        title, body = self._sections[name]
        title.update(Content(heading))
        body.update(Content(rows))
