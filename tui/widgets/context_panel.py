"""The right-hand context panel: a picture of the next request, what of yours is not sent, then
the messages sent in full, sent as a summary and not sent, and the entities, each with its reason.

The list is keyboard-driven (arrows, Alt+P pin, Alt+R restore, Alt+F forget, Enter inspect, Ctrl+F
filter: a plain key is typing, and goes to the composer); the panel only says what the user asked
for, through :class:`tui.messages.ContextAction`: the screen carries it out.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from engine.curation.budget import budget_share
from engine.curation.context_view import EntityView
from tui.messages import ContextAction, ItemVerb
from tui.sanitize import inert
from tui.widgets.context_options import ContextOptions
from tui.widgets.context_rows import entity_why, item_why
from tui.widgets.item_keys import item_bindings
from tui.widgets.laid_out_once import LaidOutOnce, LaidOutStatic
from tui.widgets.request_picture import (
    RequestPicture,
    asking_line,
    budget_line,
    calls_line,
    compact,
    saved_line,
    total_line,
    usage_level,
)
from tui.widgets.standing_box import StandingBox

if TYPE_CHECKING:
    from engine.curation.context_view import ContextView

__all__ = ["ContextList", "ContextPanel", "compact", "usage_level"]

SHORT_BELOW = 26
"""Panel rows under which the notes, alerts and reasons collapse, so the list keeps its rows."""
COUNTING = "counting…"
"""What the panel says until the open session's context is counted."""


def _say(static: LaidOutStatic, text: str | Content) -> None:
    """Show ``text`` (plain, or Content) unless it is already shown (drawn again is wasted work)."""
    content = Content(text) if isinstance(text, str) else text
    shown = static.content
    if not isinstance(shown, Content) or shown.markup != content.markup:  # == compares text alone
        static.update(content)


class ContextList(OptionList, LaidOutOnce):
    """The panel's rows: the arrows, or Alt+J / Alt+K, move; Esc goes back to the composer."""

    # Its height is the panel's (1fr), never its rows': a new row count changes only its own
    # scrollbar, which OptionList redraws itself (and a scrollbar shown or hidden still asks for
    # a layout). Each new count laid out the whole screen, twice a turn.

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("alt+j", "cursor_down", "Down", show=False, id="context_down"),
        Binding("alt+k", "cursor_up", "Up", show=False, id="context_up"),
        Binding("escape", "screen.home", "Composer", id="home"),
    ]

    def show_rows(self, options: list[Option], highlight: str | None) -> None:
        """Show ``options`` with the row ``highlight`` (an option id) highlighted and in sight.

        Unlike ``set_options``, the highlight is not dropped and set again (a redraw and a
        message each time); and when every row is the one shown already, in the same place,
        nothing is drawn again and the list stays where the user scrolled it.
        """
        shown = self._options
        if len(options) != len(shown) or any(map(operator.is_not, options, shown)):
            self._options = list(options)
            self._id_to_option = {option.id: option for option in options if option.id is not None}
            self._option_to_index = {option: n for n, option in enumerate(options)}
            self._clear_caches()  # the rows' strips carry their index: all drawn again
            self._update_lines()
            self.scroll_y = 0  # then to the highlight, as set_options: rows came or went above it
        index = self.get_option_index(highlight) if highlight is not None else None
        if index is None:
            self.highlighted = None
        elif index != self.highlighted:
            self.highlighted = index  # scrolls to it and says so (OptionHighlighted)
        self.scroll_to_highlight()


class ContextPanel(Vertical):
    """The next request's picture, your messages not sent, then messages and entities by how
    they are sent, each with its reason."""

    DEFAULT_CSS = """
    ContextPanel {
        /* A third of a wide terminal shows more of each row; never so narrow that rows say nothing. */
        width: 32%;
        min-width: 42;
        max-width: 72;
        height: 1fr;
        padding: 0 1;
        border-left: vkey $panel;
        background: $surface;
    }
    ContextPanel > #context-asking { color: $warning; text-style: bold; height: auto; }
    ContextPanel > #context-total { text-style: bold; color: $primary; }
    ContextPanel > #context-budget { color: $heedful-muted; }
    ContextPanel > #context-bar { height: 1; }
    ContextPanel > #context-alerts { height: auto; max-height: 6; color: $warning; display: none; }
    ContextPanel > #context-alerts.-shown { display: block; }
    ContextPanel > #context-saved { color: $heedful-muted; }
    ContextPanel > #context-filter { display: none; height: 1; border: none; padding: 0; margin-top: 1; }
    ContextPanel.-filtering > #context-filter { display: block; }
    ContextPanel > ContextList {
        height: 1fr;
        min-height: 8;
        margin-top: 1;
        border: none;
        padding: 0;
        background: $surface;
        scrollbar-size-vertical: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        &:focus { border: none; background-tint: $foreground 3%; }
        & > .option-list--option { padding: 0; }
        /* Section headings are disabled rows (not selectable), but must read as headings. */
        & > .option-list--option-disabled { color: $foreground; }
    }
    ContextPanel > #context-why { height: auto; max-height: 5; color: $text; margin-top: 1; }
    ContextPanel > #context-note { height: auto; max-height: 6; color: $heedful-muted; }
    /* A short terminal (80x24): the list keeps its rows; notes, alerts and reasons are cut short. */
    ContextPanel.-short > #context-budget { display: none; }
    ContextPanel.-short > #context-alerts { max-height: 3; }
    ContextPanel.-short > #context-saved { max-height: 1; }
    ContextPanel.-short > ContextList { margin-top: 0; }
    ContextPanel.-short > #context-why { max-height: 2; margin-top: 0; }
    ContextPanel.-short > #context-note { max-height: 1; }
    ContextPanel.-short > #context-standing { max-height: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *item_bindings("item", "the highlighted message"),
        Binding("ctrl+f", "filter", "Filter", tooltip="Filter the panel's rows", id="filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        # Held rather than queried, so an update that races the app's shutdown is harmless.
        self._asking = LaidOutStatic("", id="context-asking")
        """While Heedful waits for an answer about the user's messages: which, and what happens meanwhile."""
        self._total = LaidOutStatic(Content(COUNTING), id="context-total")
        """The next request's tokens of the budget, and the percentage (the header's)."""
        self._budget = LaidOutStatic("", id="context-budget")
        self._bar = RequestPicture(legend=False, id="context-bar")
        self._legend = RequestPicture(legend=True, id="context-legend")
        self._alerts = LaidOutStatic("", id="context-alerts")
        """What the user should know first (their messages not sent, suggestions), in words."""
        self._saved = LaidOutStatic("", id="context-saved")
        self._standing = StandingBox("", id="context-standing")
        self._filter = Input(placeholder="filter: words in a row", id="context-filter")
        self.rows = ContextList(id="context-rows")
        self._why = LaidOutStatic("", id="context-why")
        self._note = LaidOutStatic("", id="context-note")
        self.view: ContextView | None = None
        self._made = ContextOptions()
        """The rows' options, and what each shows."""
        self._filling: asyncio.Task[None] | None = None

    def compose(self) -> ComposeResult:
        yield from ()  # the parts come with fill(), after the first frame

    async def fill(self) -> None:
        """Mount the panel's parts: once the first frame is drawn, which does without them (the
        panel says nothing before the engine has counted the session). Updates made before are
        kept by the parts, and shown as they are mounted."""
        if self._filling is None:
            self._filling = asyncio.ensure_future(self._mount_parts())
        await asyncio.shield(self._filling)  # a second caller waits for the same mount

    async def _mount_parts(self) -> None:
        await self.mount_all(self._parts())

    @property
    def filled(self) -> bool:
        """True once the panel's parts are mounted (they come after the first frame)."""
        return self._filling is not None and self._filling.done()

    def _parts(self) -> ComposeResult:
        yield self._asking
        yield self._total
        yield self._budget
        yield self._bar
        yield self._legend
        yield self._alerts
        yield self._saved
        yield self._standing
        yield self._filter
        yield self.rows
        yield self._why
        yield self._note

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < SHORT_BELOW, "-short")

    # --- showing ---------------------------------------------------------------------------------

    def show(self, view: ContextView, *, model: str, exact: bool, counter: str) -> None:
        self.view = view
        _say(self._asking, asking_line(view))
        self._asking.display = view.consent is not None
        _say(self._total, total_line(view.tokens, view.budget, exact=exact))
        _say(self._budget, budget_line(view.budget, view.window))  # the header names the model
        self._bar.show(view.parts, view.tokens, view.budget, exact=exact)
        self._legend.show(view.parts, view.tokens, view.budget, exact=exact)
        self._total.set_classes(usage_level(budget_share(view.tokens, view.budget)))
        self._show_alerts(view.alerts)
        _say(
            self._saved,
            saved_line(view, exact) + calls_line(view.calls, "last turn" if view.upcoming else "this turn"),
        )
        self._standing.show(view.standing)
        self._fill_rows()
        notes = list(view.notes)
        if not exact:
            notes.append(f"~ approximate counts ({counter}): the model's own tokenizer is not available.")
        _say(self._note, "\n".join(inert(n) for n in notes))

    def show_counting(self) -> None:
        """Nothing to show until the open session's context is counted (a session just opened):
        no rows of the last one to act on meanwhile."""
        self.view = None
        self._show_alerts(())
        self._standing.show(None)
        _say(self._total, COUNTING)
        self._bar.clear()
        self._legend.clear()
        for part in (self._budget, self._saved, self._why, self._note):
            _say(part, "")  # the last session's notes were about its request
        self._made.clear()
        self.rows.clear_options()

    def _show_alerts(self, alerts: Sequence[str]) -> None:
        _say(self._alerts, "\n".join(f"⚠ {inert(a)}" for a in alerts))
        self._alerts.set_class(bool(alerts), "-shown")

    def show_curating(self, model: str, seconds: float) -> None:
        """Say why the request waits: the curator model is choosing what it carries."""
        _say(self._saved, f"asking {inert(model)} what this request needs (at most {seconds:g} s)…")

    def _fill_rows(self) -> None:
        view = self.view
        if view is None:
            return
        typed = self._filter.value if self.has_class("-filtering") else ""
        highlighted = self.rows.highlighted_option
        keep = highlighted.id if highlighted is not None else None
        options = self._made.make(view, typed)
        shown = self._made.shown
        if keep is None or keep not in shown:
            keep = next(iter(shown), None)
        self.rows.show_rows(options, keep)
        self._show_why()

    @on(OptionList.OptionHighlighted, "#context-rows")
    def _show_why(self) -> None:
        option = self.rows.highlighted_option
        shown = self._made.shown.get(option.id or "") if option is not None else None
        if isinstance(shown, EntityView):
            _say(self._why, inert(entity_why(shown)))
        else:
            _say(self._why, inert(item_why(shown)) if shown is not None else "")

    # --- keys ------------------------------------------------------------------------------------

    def highlighted_item(self) -> int | None:
        """The id of the message on the highlighted row, if a message is highlighted."""
        option = self.rows.highlighted_option
        if option is None or option.id is None or not option.id.startswith("item-"):
            return None
        return int(option.id.removeprefix("item-"))

    def action_item(self, action: str) -> None:
        item_id = self.highlighted_item()
        if item_id is None:
            self.notify("Highlight a message to do that: entities follow the messages that mention them.")
            return
        self.post_message(ContextAction(ItemVerb(action), item_id))

    @on(OptionList.OptionSelected, "#context-rows")
    def _inspect(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        item_id = self.highlighted_item()
        if item_id is not None:
            self.post_message(ContextAction(ItemVerb.INSPECT, item_id))
        else:
            shown = self._made.shown.get(event.option.id or "")
            if isinstance(shown, EntityView):
                self.notify(inert(entity_why(shown)), title="Entity")

    def action_filter(self) -> None:
        self.add_class("-filtering")
        self._filter.focus()

    @on(Input.Changed, "#context-filter")
    def _filter_changed(self) -> None:
        self._fill_rows()

    @on(Input.Submitted, "#context-filter")
    def _filter_done(self) -> None:
        self.rows.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            # Otherwise Escape belongs to the screen (it stops a streaming reply).
            return self.has_class("-filtering")
        return True

    def action_clear_filter(self) -> None:
        self._filter.value = ""
        self.remove_class("-filtering")
        self._fill_rows()
        self.rows.focus()
