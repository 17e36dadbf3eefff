"""The consent dialog: Heedful asks before summarizing or leaving out some of the user's messages.

It opens only when the user acts (sends a message, or presses F4). Enter and Esc take the safe
answer: keep each message whole (a message that no longer fits stays unanswered, and not sent,
until the user says). Any other answer is a deliberate act: an Alt+letter shown on it, or a row
focused with Tab and changed with ← →. Printable keys are the user's next words (they go to the
composer), and a key typed before the dialog was drawn answers nothing (see tui/typing.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Checkbox, OptionList, Static
from textual.widgets.option_list import Option

from engine.curation.consent import ConsentChoice
from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.typing import AskedOnScreen, chat_composer

if TYPE_CHECKING:
    from engine.curation.consent import ConsentItem, ConsentRequest

CHOICE_LABELS = {
    ConsentChoice.KEEP: "keep whole",
    ConsentChoice.SUMMARIZE: "summarize ",
    ConsentChoice.REMOVE: "leave out ",
    ConsentChoice.ATTACH: "keep aside",
    None: "not sent  ",
}
"""What each answer is called on a row; None: a message that does not fit, not answered yet."""

MAX_ROWS = 16
"""Rows shown at most before the list scrolls; fewer when the terminal is short."""
MIN_ROWS = 2
ROOMY_ROWS = 4
"""Rows worth borderless buttons: with fewer in view, the buttons are drawn one line high."""
BUTTON_GUTTER = 4
"""Columns a button takes besides its label: its padding and the space before it."""
BUTTON_BORDERS = 2
"""Lines a button's border takes (top and bottom)."""

BUTTONS = {
    "consent-keep": ("Keep them (Enter)", "Keep (Enter)"),
    "consent-summarize": ("Summarize all (Alt+S)", "Summarize (Alt+S)"),
    "consent-remove": ("Leave all out (Alt+R)", "Leave out (Alt+R)"),
    "consent-attach": ("Keep aside (Alt+T)", "Aside (Alt+T)"),
}
"""Each button's label, and the shorter one used when the long ones do not fit side by side."""

ALL_KEYS = {ConsentChoice.SUMMARIZE: "alt+s", ConsentChoice.REMOVE: "alt+r", ConsentChoice.ATTACH: "alt+t"}


@dataclass(frozen=True, slots=True)
class ConsentAnswer:
    answers: dict[int, ConsentChoice]
    remember: ConsentChoice | None


def safe_choice(item: ConsentItem) -> ConsentChoice | None:
    """What Enter and Esc answer for ``item``: keep, or nothing for a message that cannot fit."""
    return ConsentChoice.KEEP if ConsentChoice.KEEP in item.choices else None


class ConsentRows(OptionList):
    """The messages asked about; ← → change the highlighted one's answer (a deliberate act)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "screen.change(1)", "Next answer", show=False),
        Binding("left", "screen.change(-1)", "Previous answer", show=False),
    ]


class ConsentScreen(AskedOnScreen, Dialog[ConsentAnswer | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "keep", "Keep them (safe)", id="dialog_cancel"),
        Binding("alt+s", "answer_all('summarize')", "Summarize all", id="consent_summarize"),
        Binding("alt+r", "answer_all('remove')", "Leave all out", id="consent_remove"),
        Binding("alt+t", "answer_all('attach')", "Keep all aside", id="consent_attach"),
        Binding("alt+m", "remember", "Remember", id="consent_remember"),
        Binding("alt+a", "apply", "Apply rows", id="consent_apply"),
    ]

    def __init__(self, request: ConsentRequest, *, sent: str | None = None) -> None:
        super().__init__()
        self.request = request
        self.sent = sent
        """The message whose sending raised the question, if one did."""
        self.choices: dict[int, ConsentChoice | None] = {i.item_id: safe_choice(i) for i in request.items}
        self.rows = ConsentRows(
            *(Option(self._row(i), id=f"consent-{i.item_id}") for i in request.items), id="consent-rows"
        )
        self._fitted = MAX_ROWS
        """The rows shown before the list scrolls, as fitted to the terminal's height."""
        self._remember = Checkbox(
            "Remember the answer for all in this session (Alt+M)", id="consent-remember"
        )

    def compose(self) -> ComposeResult:
        request = self.request
        count = len(request.items)
        left_out = sum(i.left_out for i in request.items)
        attach = any(ConsentChoice.ATTACH in i.choices for i in request.items)
        with Vertical(classes="dialog"):
            yield Static(Content.styled("Your messages and the budget", "bold"), classes="title")
            said = (
                f"The conversation no longer fits. Heedful would like to summarize or leave out {count:,} "
                f"of your messages ({request.tokens:,} tokens). Nothing happens to them unless you say so."
            )
            if left_out:
                said += f" {left_out:,} of them no longer fit a request: not sent until you answer."
            if self.sent is not None:
                with_them = (
                    "with them as they are"
                    if not left_out
                    else "without them"
                    if left_out == count
                    else "with the others as they are, without those that no longer fit"
                )
                said += (
                    f'\n\nYour message "{inert(self.sent[:60])}" is sent {with_them}; '
                    "your answer counts from the next request. Go on typing: it goes to the composer."
                )
            yield Static(Content(said))
            yield Static(
                Content(
                    "Enter or Esc keeps them whole · Tab to a row, ← → changes its answer, Alt+A applies"
                ),
                classes="hint",
            )
            yield self.rows
            yield self._remember
            with Horizontal(classes="buttons"):
                yield Button(BUTTONS["consent-keep"][0], variant="primary", id="consent-keep")
                yield Button(BUTTONS["consent-summarize"][0], id="consent-summarize")
                yield Button(BUTTONS["consent-remove"][0], id="consent-remove")
                if attach:
                    yield Button(BUTTONS["consent-attach"][0], id="consent-attach")

    def on_mount(self) -> None:
        # Enter on the focused button is the safe answer; every other needs Tab, an arrow or Alt.
        self.focus_default("#consent-keep")

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Keep the whole dialog, its buttons last, on a small terminal: on a narrow one the buttons
        take their short labels; on a short one the rows scroll, and where even a few would not
        show, the buttons lose their borders."""
        dialog = self.query_one(".dialog")
        buttons = list(self.query(Button))
        self._fit_labels(buttons, dialog.content_region.width)
        around = dialog.styles.gutter.height + sum(
            child.outer_size.height + child.styles.margin.height
            for child in dialog.children
            if child is not self.rows
        )
        if buttons and buttons[0].compact:
            around += BUTTON_BORDERS
        limit = dialog.styles.max_height
        tallest = int(limit.resolve(self.size, self.app.size)) if limit is not None else self.size.height
        room = tallest - around
        compact = room < min(len(self.request.items), ROOMY_ROWS)
        for button in buttons:
            button.compact = compact
        fitted = max(MIN_ROWS, min(MAX_ROWS, room + (BUTTON_BORDERS if compact else 0)))
        if fitted != self._fitted:
            self._fitted = fitted
            self.rows.styles.max_height = fitted

    def _fit_labels(self, buttons: list[Button], width: int) -> None:
        row = self.query_one(".buttons")
        long = sum(len(BUTTONS[b.id or ""][0]) + BUTTON_GUTTER for b in buttons)
        narrow = long > width
        row.set_class(narrow, "-narrow")
        for button in buttons:
            label = BUTTONS[button.id or ""][1 if narrow else 0]
            if str(button.label) != label:
                button.label = label

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer_all" and parameters == ("attach",):
            return any(ConsentChoice.ATTACH in i.choices for i in self.request.items)
        return True

    def _row(self, item: ConsentItem) -> Content:
        choice = self.choices[item.item_id]
        suggested = f"  (Heedful suggests: {item.proposed.value})" if choice is not item.proposed else ""
        return Content.assemble(
            (f"[{CHOICE_LABELS[choice]}] ", "bold"),
            f" #{item.item_id} {item.tokens:,} tok  ",
            inert(item.preview[:60]),
            (suggested, "dim"),
        )

    def action_change(self, step: int) -> None:
        index = self.rows.highlighted
        if index is None:
            return
        item = self.request.items[index]
        order: list[ConsentChoice | None] = list(item.choices)
        if item.left_out:
            order.append(None)  # back to "not answered"
        current = self.choices[item.item_id]
        at = order.index(current) if current in order else 0
        self.choices[item.item_id] = order[(at + step) % len(order)]
        self.rows.replace_option_prompt_at_index(index, self._row(item))

    def action_remember(self) -> None:
        self._remember.toggle()

    def action_keep(self) -> None:
        self._answer({i.item_id: safe_choice(i) for i in self.request.items}, ConsentChoice.KEEP)

    def action_answer_all(self, choice: str) -> None:
        wanted = ConsentChoice(choice)
        self._answer(
            {i.item_id: wanted if wanted in i.choices else safe_choice(i) for i in self.request.items}, wanted
        )

    def action_apply(self) -> None:
        answered = {choice for choice in self.choices.values() if choice is not None}
        if self._remember.value and len(answered) != 1:
            self.notify("To remember an answer for all, give every message the same one.")
            return
        self._answer(dict(self.choices), next(iter(answered), None))

    def _answer(self, answers: dict[int, ConsentChoice | None], all_choice: ConsentChoice | None) -> None:
        remember = all_choice if self._remember.value else None
        given = {item_id: choice for item_id, choice in answers.items() if choice is not None}
        self.dismiss(ConsentAnswer(given, remember))

    def on_key(self, event: events.Key) -> None:
        """An Enter that ends words typed through the dialog sends them, as it would have in the
        composer, and takes the safe answer (keep; nothing for a message that cannot fit): the user
        typing on never loses a message to the question, nor answers it with anything else."""
        composer = chat_composer(self.app)
        if event.key == "enter" and self.typed_through and composer is not None and composer.text.strip():
            event.stop()
            event.prevent_default()
            drawn = self.shown_at is not None and event.time >= self.shown_at
            if drawn:
                self.action_keep()
            composer.action_submit()
            return
        super().on_key(event)

    @on(OptionList.OptionSelected, "#consent-rows")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a row applies the rows as shown: each keeps its message unless changed with ← →."""
        event.stop()
        self.action_apply()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        button = event.button.id or ""
        if button == "consent-keep":
            self.action_keep()
        elif button.startswith("consent-"):
            self.action_answer_all(button.removeprefix("consent-"))
