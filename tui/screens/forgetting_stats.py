"""The session's forgetting statistics: tokens saved, messages summarized, pruned and recalled, and
how often a pruned message was needed again. Read only; Esc closes."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from tui.bindings import closing
from tui.screens.dialog import Dialog
from tui.typing import TypingPassesThrough

if TYPE_CHECKING:
    from engine.curation.forgetting_stats import ForgettingStats

TITLE = "Forgetting statistics of this session"


class StatsScreen(TypingPassesThrough, Dialog[None]):
    """The numbers of :class:`engine.curation.forgetting_stats.ForgettingStats`, one a line."""

    BINDINGS: ClassVar[list[BindingType]] = [closing("escape,f7")]

    def __init__(self, stats: ForgettingStats) -> None:
        super().__init__()
        self.stats = stats

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled(TITLE, "bold"), classes="title")
            yield Static(Content("\n".join(self.stats.lines())), id="stats-lines")
            yield Static(
                Content(
                    "Counted from the ledger (F6): each message once, however often it happened. "
                    "Recalled: sent verbatim again for a turn while summarized or pruned."
                ),
                classes="question",
            )
            yield Static(Content("Esc closes"), classes="hint")
