"""The model picker (``/model`` alone, or the palette) and the question asked before a switch to
another provider: models never move to another server without the user's deliberate yes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from tui.bindings import closing
from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.typing import TypingPassesThrough

if TYPE_CHECKING:
    from providers.model_offers import Listing

OFFLINE_ROW = "offline"
"""What the picker's last row chooses: the built-in offline model."""


class SwitchProviderScreen(TypingPassesThrough, Dialog[bool]):
    """Ask before a model change sends the conversation to another provider or base URL.

    Enter (on Cancel, focused) and Esc keep the current model; switching needs a deliberate act:
    Tab to the switch button then Enter, or Alt+S. No plain letter does anything here.
    """

    DEFAULT_CSS = """
    SwitchProviderScreen { align: center middle; background: $background 60%; }
    SwitchProviderScreen > .dialog {
        width: 72; max-width: 90%; height: auto; padding: 1 2; border: thick $warning; background: $surface;
    }
    SwitchProviderScreen .question { margin-bottom: 1; }
    SwitchProviderScreen .hint { color: $heedful-muted; margin-top: 1; }
    SwitchProviderScreen .buttons { height: auto; align-horizontal: right; }
    SwitchProviderScreen Button { margin-left: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(False)", "Cancel", id="dialog_cancel"),
        Binding("alt+s", "dismiss(True)", "Switch", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content(inert(self.question)), classes="question")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Switch provider (Alt+S)", variant="warning", id="switch")
            yield Static(
                Content("Enter or Esc keeps the current model · Tab then Enter, or Alt+S, switches"),
                classes="hint",
            )

    def on_mount(self) -> None:
        self.focus_default("#cancel")

    @on(Button.Pressed)
    def answered(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "switch")


def _window(window: int | None) -> str:
    return f"{window:,} tokens" if window is not None else "window unknown"


class ModelPickerScreen(TypingPassesThrough, Dialog[str | None]):
    """Each provider's models, from the config and its server's ``GET /models``, with their
    windows. Dismissed with the name ``/model`` takes (``provider/model``), or None."""

    DEFAULT_CSS = """
    ModelPickerScreen { align: center middle; background: $background 60%; }
    ModelPickerScreen > .dialog {
        width: 90; max-width: 95%; height: auto; max-height: 90%; padding: 0 1;
        border: thick $primary; background: $surface;
    }
    ModelPickerScreen .title { color: $primary; }
    ModelPickerScreen #model-rows { height: auto; max-height: 24; border: none; padding: 0; margin-top: 1; }
    ModelPickerScreen .hint { color: $heedful-muted; margin-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [closing()]

    def __init__(self, now: str) -> None:
        super().__init__()
        self.now = now
        self.rows: OptionList = OptionList(id="model-rows")
        self._names: dict[str, str] = {}
        """Option id → the name ``/model`` takes."""
        self.ready = False
        """The providers have answered (or given up) and the rows are filled."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled("Models", "bold"), classes="title")
            yield Static(Content(inert(f"Now: {self.now}")))
            yield self.rows
            yield Static(
                Content("↑↓ move · Enter chooses (another provider asks first) · Esc closes"), classes="hint"
            )

    def on_mount(self) -> None:
        self.rows.add_option(Option(Content("Asking the providers for their models…"), disabled=True))
        self.rows.focus()

    def show(self, listings: Sequence[Listing], current: str | None) -> None:
        """Fill the rows: a heading per provider, then its models (``current`` marked)."""
        options: list[Option] = []
        for listing in listings:
            endpoint = listing.endpoint
            heading = f"{endpoint.label} ({endpoint.base_url})" if endpoint.provider else endpoint.base_url
            options.append(Option(Content.styled(inert(heading), "bold"), disabled=True))
            for offer in listing.offers:
                name = endpoint.name_of(offer.model)
                option_id = f"model-{len(self._names)}"
                self._names[option_id] = name
                mark = "●" if name == current else " "
                source = "server" if offer.from_server else "config"
                label = f" {mark} {offer.model} · {_window(offer.window)} · {source}"
                options.append(Option(Content(inert(label)), id=option_id))
            if listing.problem:
                said = f"   ({listing.problem})"
                options.append(Option(Content.styled(inert(said), "dim"), disabled=True))
            if not listing.offers and not listing.problem:
                options.append(Option(Content.styled("   (no models listed)", "dim"), disabled=True))
        options.append(Option(Content.styled("This computer", "bold"), disabled=True))
        self._names["model-offline"] = OFFLINE_ROW
        options.append(
            Option(
                Content(" ● offline model" if current == OFFLINE_ROW else "   offline model"),
                id="model-offline",
            )
        )
        self.rows.set_options(options)
        chosen = next((key for key, name in self._names.items() if name == current), None)
        first = next(iter(self._names))
        self.rows.highlighted = self.rows.get_option_index(chosen or first)
        self.ready = True

    @on(OptionList.OptionSelected, "#model-rows")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        name = self._names.get(event.option.id or "")
        if name is not None:
            self.dismiss(name)
