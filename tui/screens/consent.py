"""The consent dialog: the engine would like to summarize or remove some of the user's messages.

Each message gets its own choice (keep / summarize / remove), preset to what the engine proposes;
capital letters choose for all. "Remember" makes the choice for all the session's policy. Escape
(or "Not now") answers nothing: the messages stay as they are, and the panel's `c` reopens this.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, OptionList, Static
from textual.widgets.option_list import Option

from engine.consent import ConsentChoice
from tui.sanitize import inert

if TYPE_CHECKING:
    from engine.consent import ConsentItem, ConsentRequest

CHOICE_LABELS = {
    ConsentChoice.KEEP: "keep     ",
    ConsentChoice.SUMMARIZE: "summarize",
    ConsentChoice.REMOVE: "remove   ",
    ConsentChoice.ATTACH: "attach   ",
}


@dataclass(frozen=True, slots=True)
class ConsentAnswer:
    answers: dict[int, ConsentChoice]
    remember: ConsentChoice | None


class ConsentRows(OptionList):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]


class ConsentScreen(ModalScreen[ConsentAnswer | None]):
    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Not now", id="dialog_cancel"),
        Binding("K", "choose_all('keep')", "Keep all"),
        Binding("S", "choose_all('summarize')", "Summarize all"),
        Binding("X", "choose_all('remove')", "Remove all"),
        Binding("space", "cycle", "Change", show=False),
        Binding("m", "remember", "Remember", show=False),
        Binding("ctrl+s,a", "apply", "Apply"),
    ]

    def __init__(self, request: ConsentRequest) -> None:
        super().__init__()
        self.request = request
        self.choices = {item.item_id: item.proposed for item in request.items}
        self.all_choice: ConsentChoice | None = None
        self._chosen: set[int] = set()
        """Items the user gave an answer to here (a left-out message is answered only so)."""
        self.rows = ConsentRows(
            *(Option(self._row(i), id=f"consent-{i.item_id}") for i in request.items), id="consent-rows"
        )
        self._remember = Checkbox("Remember the choice for all in this session (m)", id="consent-remember")

    def compose(self) -> ComposeResult:
        request = self.request
        count = len(request.items)
        with Vertical(classes="dialog"):
            yield Static(Content.styled("Your messages and the budget", "bold"), classes="title")
            yield Static(
                Content(
                    f"The conversation no longer fits. Heedful would like to summarize or remove {count:,} "
                    f"of your messages ({request.tokens:,} tokens). Nothing happens to them unless you say "
                    "so; until then they stay as they are, and may be left out of a request when it is full."
                )
            )
            yield Static(
                Content("↑↓ choose a message · space changes its answer · K S X answer all · a applies"),
                classes="hint",
            )
            yield self.rows
            yield self._remember
            with Horizontal(classes="buttons"):
                yield Button("Apply (a)", variant="primary", id="consent-apply")
                yield Button("Not now (Esc)", id="consent-later")

    def on_mount(self) -> None:
        self.rows.focus()

    def _row(self, item: ConsentItem) -> Content:
        choice = self.choices[item.item_id]
        return Content.assemble(
            (f"[{CHOICE_LABELS[choice]}] ", "bold"),
            f" #{item.item_id} {item.tokens:,} tok  ",
            inert(item.preview[:70]),
        )

    def _refresh_row(self, index: int) -> None:
        item = self.request.items[index]
        self.rows.replace_option_prompt_at_index(index, self._row(item))

    def action_cycle(self) -> None:
        index = self.rows.highlighted
        if index is None:
            return
        item = self.request.items[index]
        order = list(item.choices)  # a message that cannot fit has no "keep"
        self.choices[item.item_id] = order[(order.index(self.choices[item.item_id]) + 1) % len(order)]
        self._chosen.add(item.item_id)
        self._refresh_row(index)

    def action_choose_all(self, choice: str) -> None:
        self.all_choice = ConsentChoice(choice)
        for item in self.request.items:
            if self.all_choice in item.choices:
                self.choices[item.item_id] = self.all_choice
                self._chosen.add(item.item_id)
        for index in range(len(self.request.items)):
            self._refresh_row(index)

    def action_remember(self) -> None:
        self._remember.toggle()

    def action_apply(self) -> None:
        remember = None
        if self._remember.value:
            if self.all_choice is None:
                self.notify("Choose one answer for all first (K, S or X): that is what is remembered.")
                return
            remember = self.all_choice
        # A message that cannot fit is not answered by its preset: it stays asked about.
        left_out = {i.item_id for i in self.request.items if i.left_out} - self._chosen
        self.dismiss(ConsentAnswer({k: v for k, v in self.choices.items() if k not in left_out}, remember))

    @on(OptionList.OptionSelected, "#consent-rows")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_cycle()

    @on(Button.Pressed, "#consent-apply")
    def _apply_pressed(self) -> None:
        self.action_apply()

    @on(Button.Pressed, "#consent-later")
    def _later_pressed(self) -> None:
        self.dismiss(None)
