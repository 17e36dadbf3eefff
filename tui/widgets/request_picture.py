"""The picture at the top of the context panel: one stacked bar of what the next request holds, a
legend of its parts with their tokens, and the room left in the budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.geometry import Size
from textual.widgets import Static

from engine.advice.calls import CallsReport, CallUsage
from engine.curation.budget import budget_percent
from engine.curation.context_view import SENT_IN_FULL, Mark, Part, RequestPart

if TYPE_CHECKING:
    from engine.curation.context_view import ContextView

BAR_WIDTH = 32
IN_PROMPT = SENT_IN_FULL | {Mark.SUMMARIZED}
"""The marks of a message the request carries, whole or summarized (``ItemView.in_prompt``)."""
LEGEND_WIDTH = 38
"""Cells of the legend's lines: the panel's narrowest content (at 80 and 100 columns) is 39."""
PART_STYLES = {
    Part.SYSTEM: ("█", "$heedful-muted"),
    Part.MEMORY: ("█", "$secondary"),
    Part.STANDING: ("█", "$accent"),
    Part.PINNED: ("█", "$warning"),
    Part.STORY: ("▓", "$secondary"),
    Part.SUMMARIES: ("▒", "$foreground"),
    Part.OLDER: ("█", "$primary"),
    Part.RECALLED: ("█", "$success"),
    Part.RECENT: ("█", "$foreground"),
}
"""Each part's cell and colour, in the bar and the legend alike (a summary's cell is shaded, so
it reads apart from the recent turns in any theme)."""
ROOM = "░"
WARN_AT = 0.5
HIGH_AT = 0.8


def usage_level(fraction: float) -> str:
    """CSS class for how full the budget is: -ok, -warn (≥ 50 %) or -high (≥ 80 %)."""
    if fraction >= HIGH_AT:
        return "-high"
    if fraction >= WARN_AT:
        return "-warn"
    return "-ok"


def compact(n: int) -> str:
    """1234 → "1.2k", 128000 → "128k"."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def approximate(exact: bool) -> str:
    """The mark before a count that is an estimate ("~1,583"); "≈" means a summary, never this."""
    return "" if exact else "~"


def total_line(tokens: int, budget: int, *, exact: bool) -> str:
    """``Next request: ~1,583 of 1,750 budget``: the same numbers as the header and F5 (the
    heading goes where it would not fit the narrowest panel)."""
    said = f"{approximate(exact)}{tokens:,} of {budget:,} budget"
    return f"Next request: {said}" if len(said) <= LEGEND_WIDTH - 14 else said


def budget_line(budget: int, window: int) -> str:
    """What the budget is, once: a share of the model's window, the rest left for the reply."""
    share = f"{budget / window:.0%} of" if window else "of"
    return f"budget = {share} the {window:,}-token window"


class RequestPicture(Static):
    """The bar (``legend=False``) or its legend, drawn at the width the widget has when drawn."""

    DEFAULT_CSS = "RequestPicture { height: auto; }"

    def __init__(self, *, legend: bool, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self._is_legend = legend
        self._shown: tuple[tuple[RequestPart, ...], int, int, bool] | None = None

    def show(self, parts: Sequence[RequestPart], tokens: int, budget: int, *, exact: bool) -> None:
        shown = (tuple(parts), tokens, budget, exact)
        if shown != self._shown:
            lines = self._lines()
            self._shown = shown
            # A legend of as many lines is redrawn in place: a layout would reflow the whole screen.
            self.refresh(layout=self._is_legend and (lines is None or lines != self._lines()))

    def clear(self) -> None:
        if self._shown is not None:
            self._shown = None
            self.refresh(layout=True)

    def render(self) -> Content:
        return self._drawn(self.content_size.width or LEGEND_WIDTH + 1)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The lines drawn at ``width``, the width a layout measures it at (its own, until then,
        is the last layout's: measured at that one, the legend kept the height of another)."""
        return len(self._drawn(width or LEGEND_WIDTH + 1).split("\n"))

    def _lines(self) -> int | None:
        """Lines drawn at the width of the last layout (None before one, or with nothing shown)."""
        width = self.content_size.width
        if self._shown is None or not width or not self.display:
            return None
        return len(self._drawn(width).split("\n"))

    def _drawn(self, width: int) -> Content:
        if self._shown is None:
            return Content("")
        parts, tokens, budget, exact = self._shown
        if self._is_legend:
            return legend(parts, tokens, budget, exact=exact, width=max(16, width - 1))
        return bar(parts, tokens, budget, max(8, width - len(budget_percent(tokens, budget)) - 2))


def widths(parts: Sequence[RequestPart], scale: int, cells: int) -> list[int]:
    """Cells of the bar for each part, ``scale`` tokens filling ``cells``: rounded on the running
    total (no drift), and at least one cell for any part that is there at all."""
    out: list[int] = []
    running = drawn = 0
    for part in parts:
        running += part.tokens
        end = min(cells, round(running * cells / scale)) if scale else 0
        width = max(1, end - drawn)
        out.append(width)
        drawn += width
    while drawn > cells and max(out, default=0) > 1:  # the minimum cells pushed it past the end
        widest = out.index(max(out))
        out[widest] -= 1
        drawn -= 1
    return out


def bar(parts: Sequence[RequestPart], tokens: int, budget: int, width: int = BAR_WIDTH) -> Content:
    """One cell row, ``width`` cells of bar: each part in its colour, then the room left (or
    nothing left, when over), and the percentage of the budget (the header's)."""
    scale = max(tokens, budget)
    cells = widths(parts, scale, width)
    pieces: list[tuple[str, str] | str] = [
        (PART_STYLES[part.part][0] * width, PART_STYLES[part.part][1])
        for part, width in zip(parts, cells, strict=True)
    ]
    room = width - sum(cells)
    if room > 0:
        pieces.append((ROOM * room, "$heedful-muted"))
    pieces.append((f" {budget_percent(tokens, budget)}", "bold"))
    return Content.assemble(*pieces)


def legend(
    parts: Sequence[RequestPart], tokens: int, budget: int, *, exact: bool, width: int = LEGEND_WIDTH
) -> Content:
    """``█ system 120  █ recent turns 640 … ░ room left 167``, wrapped to ``width`` cells."""
    approx = approximate(exact)
    entries: list[tuple[str, str, str]] = [
        (*PART_STYLES[p.part], f"{p.part.value} {approx}{compact(p.tokens)}") for p in parts
    ]
    left = budget - tokens
    if left >= 0:
        entries.append((ROOM, "$heedful-muted", f"room left {approx}{compact(left)}"))
    else:
        entries.append(("!", "$error", f"over by {approx}{compact(-left)}"))
    lines: list[Content] = []
    line: list[tuple[str, str] | str] = []
    used = 0
    for mark, style, words in entries:
        cells = len(mark) + 1 + len(words)
        if line and used + 2 + cells > width:
            lines.append(Content.assemble(*line))
            line, used = [], 0
        if line:
            line.append("  ")
            used += 2
        line.extend([(mark, style), f" {words}"])
        used += cells
    if line:
        lines.append(Content.assemble(*line))
    return Content("\n").join(lines)


def saved_line(view: ContextView, exact: bool) -> str:
    """What the request leaves out against sending every message whole, how much of that is the
    user's own (dropping their document is no saving of theirs), and the session's saving so far.
    Between turns it is the next request's, not in the session's total yet."""
    approx = approximate(exact)
    mine = sum(i.tokens for i in view.items if i.role == "user" and i.mark not in IN_PROMPT)
    yours = f"{approx}{compact(mine)} of it yours · " if mine else ""
    request = "next request" if view.upcoming else "this request"
    return (
        f"{request} leaves out {approx}{compact(view.saved_tokens)}\n"
        f"{yours}{approx}{compact(view.session_saved_tokens)} saved so far in this session"
    )


def calls_line(calls: CallsReport | None, turn: str) -> str:
    """What curation's own model calls cost, beside what curation saved (nothing when none)."""
    if calls is None or not calls.session.calls:
        return ""

    def spent(usage: CallUsage) -> str:
        money = f" ~${calls.price.of(usage):.4f}" if calls.price is not None else ""
        return f"{compact(usage.tokens)} tokens{money}"

    count = calls.session.calls
    return (
        f"\ncuration calls: {spent(calls.turn)} {turn} · {spent(calls.session)} "
        f"in this session ({count} call{'s' if count != 1 else ''})"
    )


def asking_line(view: ContextView) -> str:
    """The panel's top line while Heedful waits for an answer about the user's messages."""
    if view.consent is None:
        return ""
    items = view.consent.items
    ids = " ".join(f"#{i.item_id}" for i in items[:4]) + (" …" if len(items) > 4 else "")
    left_out = [f"#{i.item_id}" for i in items if i.left_out]
    said = f"Heedful asks about {len(items):,} of your messages ({ids}) · F4 answers. Until then: "
    if left_out:
        rest = "" if len(left_out) == len(items) else "; the rest sent whole"
        return said + f"{', '.join(left_out)} not sent (no room){rest}."
    return said + ("it is sent whole." if len(items) == 1 else "they are sent whole.")
