"""The session's forgetting log: every operation, consent answer, entity change and overflow, with
its reason. Filterable; r restores the message a row is about."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from tui.sanitize import inert

if TYPE_CHECKING:
    from engine.ledger import LedgerEntry

COLUMNS = ("turn", "kind", "about", "action", "reason")


def row(entry: LedgerEntry) -> tuple[str, ...]:
    about = f"#{entry.target}" if entry.target.isdigit() else entry.target
    change = (
        f" ({entry.before} → {entry.after})"
        if entry.before and entry.after and entry.before != entry.after
        else ""
    )
    return (
        str(entry.turn),
        entry.kind.value,
        inert(about),
        inert(entry.action + change),
        inert(entry.reason),
    )


class LedgerScreen(ModalScreen[int | None]):
    """Dismissed with the id of a message to restore, or None."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,f6", "dismiss(None)", "Close", id="dialog_cancel"),
        Binding("r", "restore", "Restore"),
        Binding("slash", "filter", "Filter"),
    ]

    def __init__(self, entries: Sequence[LedgerEntry]) -> None:
        super().__init__()
        self.entries = list(reversed(entries))  # newest first
        self.table: DataTable[str] = DataTable(cursor_type="row", zebra_stripes=True, id="ledger-table")
        self._filter = Input(placeholder="/ filter: words in a row (Esc closes)", id="ledger-filter")
        self._shown: list[LedgerEntry] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(
                Content.styled("Ledger: every forgetting decision, newest first", "bold"), classes="title"
            )
            yield self._filter
            yield self.table
            yield Static(
                Content("↑↓ move · r restores the message of the row · / filter · Esc closes"), classes="hint"
            )

    def on_mount(self) -> None:
        self.table.add_columns(*COLUMNS)
        self._fill("")
        self.table.focus()

    def _fill(self, needle: str) -> None:
        self.table.clear()
        rows = [(entry, row(entry)) for entry in self.entries]
        if needle:
            rows = [(entry, cells) for entry, cells in rows if needle in " ".join(cells).casefold()]
        self._shown = [entry for entry, _ in rows]
        self.table.add_rows([cells for _, cells in rows])

    @on(Input.Changed, "#ledger-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._fill(event.value.strip().casefold())

    @on(Input.Submitted, "#ledger-filter")
    def _filter_done(self) -> None:
        self.table.focus()

    def action_filter(self) -> None:
        self._filter.focus()

    def action_restore(self) -> None:
        if not self._shown:
            return
        entry = self._shown[self.table.cursor_row]
        if not entry.target.isdigit():
            self.notify("This row is about an entity or the session: restore acts on messages.")
            return
        self.dismiss(int(entry.target))
