"""The session's forgetting log: every operation, consent answer, entity change and overflow, with
its reason, each row in words. Filterable; Alt+R restores the message a row is about; F7 shows the
session's forgetting statistics.

A long session's log is long. Given to the table whole, it held the event loop for seconds on
opening, and again for each keystroke of a filter that matched most of it: the table measures
every row it holds before its first draw. So the table holds a page of rows, and the next page
joins as the cursor or the scroll nears its end; the filter runs over every entry, loaded or not."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Input, Static

from engine.curation.forgetting_stats import forgetting_stats
from engine.curation.ledger_words import Told, about, change, happened, told_once
from engine.text.redaction import redact
from tui.bindings import closing
from tui.filtering import nothing_matches
from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.typing import TypingPassesThrough

if TYPE_CHECKING:
    from engine.curation.ledger import LedgerEntry

COLUMNS = ("turn", "about", "what happened", "change", "why")
PAGE_ROWS = 200
"""Rows added to the table at a time: a few screens' worth, laid out without a visible pause."""
NEAR_END_ROWS = 20
"""The next page is added when the cursor (or the scrolled view) comes this close to the last row."""


def row(told: Told) -> tuple[str, ...]:
    """A row that says what happened, in words ("#14", "summarized", "active → summarized", why);
    a repeated curator fallback says how often instead of a state change."""
    entry = told.entry
    return (
        str(entry.turn),
        inert(about(entry)),
        inert(happened(entry)),
        told.repeats or change(entry) or "—",
        inert(redact(entry.reason)),  # a reason may quote a server's error: from an older Heedful, unredacted
    )


class LedgerScreen(TypingPassesThrough, Dialog[int | None]):
    """Dismissed with the id of a message to restore, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        closing("escape,f6"),
        Binding("alt+r", "restore", "Restore"),
        Binding("ctrl+f", "filter", "Filter"),
        Binding("f7", "stats", "Statistics"),
    ]

    def __init__(self, entries: Sequence[LedgerEntry], *, tokens_saved: int = 0) -> None:
        super().__init__()
        told = told_once(entries)[::-1]  # newest first
        self.entries = [t.entry for t in told]
        self._rows = [row(t) for t in told]
        self._stats = forgetting_stats(entries, tokens_saved)
        self._haystacks: list[str] = []
        """Each row's cells joined and case-folded, made at the first filter."""
        self.table: DataTable[str | Text] = DataTable(
            cursor_type="row", zebra_stripes=True, id="ledger-table"
        )
        self._filter = Input(placeholder="Ctrl+F filter: words in a row (Esc closes)", id="ledger-filter")
        self._title = Static(classes="title")
        self._detail = Static(id="ledger-detail")
        """The highlighted row in full: the table cuts its reason at the dialog's edge."""
        self._matching: list[int] = []
        """Indexes into ``entries`` of the rows the filter lets through, in order."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield self._title
            yield self._filter
            yield self.table
            yield self._detail
            yield Static(
                Content(
                    "↑↓ move · Alt+R restores the message of the row · Ctrl+F filters · F7 statistics"
                    " · Esc closes"
                ),
                classes="hint",
            )

    def on_mount(self) -> None:
        self.table.add_columns(*COLUMNS)
        self._fill("")
        self.table.focus()
        self.watch(self.table, "scroll_y", self._scrolled, init=False)

    def _fill(self, needle: str) -> None:
        if needle and not self._haystacks:
            self._haystacks = [" ".join(cells).casefold() for cells in self._rows]
        if needle:
            self._matching = [index for index, text in enumerate(self._haystacks) if needle in text]
        else:
            self._matching = list(range(len(self.entries)))
        self.table.clear()
        self._load_more()
        if not self._matching:
            self._detail.update(Content(nothing_matches(self._filter.value)) if needle else Content(""))
        self._title.update(Content.styled(self._heading(needle), "bold"))

    def _heading(self, needle: str) -> str:
        total = len(self.entries)
        if needle:
            counted = f"{len(self._matching):,} of {total:,} match"
        else:
            counted = f"{total:,} entr{'y' if total == 1 else 'ies'}"
        return f"Ledger: every forgetting decision, newest first ({counted})"

    def _load_more(self) -> None:
        """Add the next page of matching rows to the table, if any are left."""
        loaded = self.table.row_count  # the first of ``_matching``, in order
        page = self._matching[loaded : loaded + PAGE_ROWS]
        if page:
            # Text, not str: the table reads a str cell as markup, and a reason may quote a model.
            self.table.add_rows([(self._rows[i][0], *map(Text, self._rows[i][1:])) for i in page])

    @on(DataTable.RowHighlighted, "#ledger-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        # A highlight sent before the filter emptied or shortened the table may arrive after it.
        if not 0 <= event.cursor_row < min(self.table.row_count, len(self._matching)):
            return
        turn, kind, about, action, reason = self._rows[self._matching[event.cursor_row]]
        self._detail.update(Content(f"turn {turn} · {kind} · {about} · {action}\n{reason}"))
        if event.cursor_row >= self.table.row_count - NEAR_END_ROWS:
            self._load_more()

    def _scrolled(self, scroll_y: float) -> None:
        if scroll_y + self.table.scrollable_content_region.height >= self.table.row_count - NEAR_END_ROWS:
            self._load_more()

    @on(Input.Changed, "#ledger-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._fill(event.value.strip().casefold())

    @on(Input.Submitted, "#ledger-filter")
    def _filter_done(self) -> None:
        self.table.focus()

    def action_filter(self) -> None:
        self._filter.focus()

    def action_stats(self) -> None:
        from tui.screens.forgetting_stats import StatsScreen

        self.app.push_screen(StatsScreen(self._stats))

    def action_restore(self) -> None:
        if not 0 <= self.table.cursor_row < min(self.table.row_count, len(self._matching)):
            return
        entry = self.entries[self._matching[self.table.cursor_row]]
        if not entry.target.isdigit():
            self.notify("This row is about an entity or the session: restore acts on messages.")
            return
        self.dismiss(int(entry.target))
