"""The top bar: session title, model and its provider (an unmistakable "offline" badge when
offline) and the context gauge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from engine.curation.budget import budget_percent
from tui.sanitize import inert
from tui.widgets.laid_out_once import LaidOutStatic
from tui.widgets.request_picture import approximate, compact, usage_level

if TYPE_CHECKING:
    from engine.curation.context_view import ContextView


COUNTING = "context …"
"""The gauge until the open session's context is counted."""


class HeaderBar(Horizontal):
    """Title · model · context gauge."""

    DEFAULT_CSS = """
    HeaderBar { height: 1; background: $panel; color: $foreground; }
    HeaderBar > #header-app { width: auto; padding: 0 1; text-style: bold; color: $primary; }
    HeaderBar > #header-title { width: 1fr; padding: 0 1; }
    HeaderBar > #header-model { width: auto; padding: 0 1; }
    HeaderBar > #header-model.-offline { background: $warning; color: $background; text-style: bold; }
    HeaderBar > #header-gauge { width: auto; padding: 0 1; }
    HeaderBar > #header-asking { width: auto; padding: 0 1; background: $warning; color: $background; }
    HeaderBar > #header-gauge.-warn { color: $warning; }
    HeaderBar > #header-gauge.-high { color: $error; text-style: bold; }
    HeaderBar.-narrow > #header-app { display: none; }
    """

    NARROW = 100
    """Narrower than this, the app's name goes and the badge is short: the gauge's percentage stays."""

    def __init__(self) -> None:
        super().__init__()
        # Held rather than queried: a worker may update the header while the app is shutting down
        # and the children are already gone.
        self._title = LaidOutStatic("", id="header-title")
        self._model = LaidOutStatic("", id="header-model")
        self._gauge = LaidOutStatic(Content(COUNTING), id="header-gauge")
        self._asking = LaidOutStatic("", id="header-asking")
        self._asking.display = False
        self._asking_count = 0

    def compose(self) -> ComposeResult:
        yield Static("Heedful", id="header-app")
        yield self._title
        yield self._model
        yield self._asking
        yield self._gauge

    def show_title(self, title: str) -> None:
        self._title.update(Content(inert(title)))

    def show_model(self, name: str, *, offline: bool, where: str | None = None) -> None:
        """The model, and the provider (or server host) it talks to: a switch is never silent."""
        label = "offline model · F3 connect" if offline else f"{name} on {where}" if where else name
        model = self._model
        model.update(Content(inert(label)))
        model.set_class(offline, "-offline")

    def show_usage(self, view: ContextView, *, exact: bool) -> None:
        approx = approximate(exact)
        gauge = self._gauge
        # The panel's numbers, rounded: the next request's tokens of the budget, and the one percentage.
        gauge.update(
            Content(
                f"context {approx}{compact(view.tokens)} of {compact(view.budget)} "
                f"({budget_percent(view.tokens, view.budget)})"
            )
        )
        gauge.set_classes(usage_level(view.fraction))

    def on_resize(self) -> None:
        narrow = self.size.width < self.NARROW
        if narrow != self.has_class("-narrow"):
            self.set_class(narrow, "-narrow")
            self.show_asking(self._asking_count)

    def show_asking(self, count: int) -> None:
        """A badge while Heedful waits for an answer about ``count`` of the user's messages."""
        self._asking_count = count
        mine = "of yours" if self.has_class("-narrow") else "of your messages"
        said = f"{count:,} {mine} · F4" if count else ""
        if str(self._asking.content) != said:
            self._asking.update(Content(said))
        self._asking.display = bool(count)

    def show_counting(self) -> None:
        gauge = self._gauge
        gauge.update(Content(COUNTING))
        gauge.set_classes("")
