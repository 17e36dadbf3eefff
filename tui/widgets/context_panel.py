"""The right-hand context panel: the budget, then what is active, retained and pruned, and why.

Each section lists the messages and the entities in that state. The list is keyboard-driven (arrows,
Alt+P pin, Alt+R restore, Alt+F forget, Enter inspect, Ctrl+F filter: a plain key is typing, and goes
to the composer); the panel only says what the user asked for, through
:class:`tui.messages.ContextAction`: the screen carries it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from engine.context_view import EntityView, ItemView, Mark, Section
from engine.curation_calls import CallsReport, CallUsage
from tui.messages import ContextAction
from tui.sanitize import inert
from tui.widgets.laid_out_once import LaidOutOnce, LaidOutStatic

if TYPE_CHECKING:
    from engine.context_view import ContextView

BAR_WIDTH = 24
WARN_AT = 0.5
HIGH_AT = 0.8
ROWS_PER_GROUP = 120
"""Rows shown per group (a section's messages, or its entities) unless a filter narrows them: a
long session has thousands of pruned things, and laying out every row would slow each update."""
PREVIEW_CHARS = 80
MARK_SYMBOLS = {
    Mark.VERBATIM: "·",
    Mark.PINNED: "📌",
    Mark.RECALLED: "↺",
    Mark.SUMMARIZED: "≈",
    Mark.PRUNED: "✂",
    Mark.LEFT_OUT: "○",
}
MARK_LEGEND = "· verbatim  📌 pinned  ↺ recalled  ≈ summary  ✂ pruned  ○ left out"
COUNTING = "counting…"
"""What the panel says until the open session's context is counted."""
ROLE_NAMES = {"user": "you", "assistant": "ai", "system": "sys", "tool": "tool"}
SECTION_TITLES = {Section.ACTIVE: "Active", Section.RETAINED: "Retained", Section.PRUNED: "Pruned"}


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
    """CSS class for how full the budget is: -ok, -warn (≥ 50 %) or -high (≥ 80 %)."""
    if fraction >= HIGH_AT:
        return "-high"
    if fraction >= WARN_AT:
        return "-warn"
    return "-ok"


def item_row(item: ItemView) -> Content:
    """``≈ ai #12      340  The login fails…``: mark, who, id, tokens, then the start of the text."""
    preview = inert(item.preview[:PREVIEW_CHARS])
    who = f"{ROLE_NAMES.get(item.role, item.role)} #{item.id}"
    return Content.assemble(
        f"{MARK_SYMBOLS[item.mark]} ",
        (f"{who:<9}", "bold"),
        f"{compact(item.tokens):>5}  ",
        (preview, "dim" if item.section is Section.PRUNED else ""),
    )


def entity_row(entity: EntityView) -> Content:
    return Content.assemble(
        "  ", (inert(entity.label[:PREVIEW_CHARS]), "bold"), f" {entity.kind} t{entity.last_turn}"
    )


def item_why(item: ItemView) -> str:
    who = ROLE_NAMES.get(item.role, item.role)
    return f"{who} #{item.id} · {item.tokens:,} tokens · {item.mark.value}: {item.reason}"


def entity_why(entity: EntityView) -> str:
    return f"{entity.label} · {entity.kind} · last mentioned in turn {entity.last_turn}: {entity.reason}"


def _item_matches(item: ItemView, needle: str) -> bool:
    return needle in f"#{item.id} {item.role} {item.mark.value} {item.reason} {item.preview}".casefold()


def _entity_matches(entity: EntityView, needle: str) -> bool:
    return needle in f"{entity.label} {entity.kind} {entity.reason}".casefold()


def _say(static: LaidOutStatic, text: str) -> None:
    """Show plain ``text`` unless it is already shown (the same text drawn again is wasted work)."""
    if str(static.content) != text:
        static.update(Content(text))


class ContextList(OptionList, LaidOutOnce):
    """The panel's rows: the arrows, or Alt+J / Alt+K, move; Esc goes back to the composer."""

    # Its height is the panel's (1fr), never its rows': a new row count changes only its own
    # scrollbar, which OptionList redraws itself (and a scrollbar shown or hidden still asks for
    # a layout). Each new count laid out the whole screen: at 10,000 messages, 15-25 ms twice a turn.

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("alt+j", "cursor_down", "Down", show=False, id="context_down"),
        Binding("alt+k", "cursor_up", "Up", show=False, id="context_up"),
        Binding("escape", "screen.home", "Composer", id="home"),
    ]


class ContextPanel(Vertical):
    """Budget gauge, then active / retained / pruned messages and entities, each with its reason."""

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
    ContextPanel > .title { text-style: bold; color: $primary; }
    ContextPanel > #context-asking { color: $warning; text-style: bold; height: auto; }
    ContextPanel > #context-bar.-ok { color: $success; }
    ContextPanel > #context-bar.-warn { color: $warning; }
    ContextPanel > #context-bar.-high { color: $error; }
    ContextPanel > #context-saved { color: $heedful-muted; }
    ContextPanel > #context-filter { display: none; height: 1; border: none; padding: 0; margin-top: 1; }
    ContextPanel.-filtering > #context-filter { display: block; }
    ContextPanel > ContextList {
        height: 1fr;
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
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "alt+p", "item('pin')", "Pin/unpin", tooltip="Pin or unpin the highlighted message", id="pin"
        ),
        Binding(
            "alt+r",
            "item('restore')",
            "Restore",
            tooltip="Send the highlighted message verbatim again",
            id="restore",
        ),
        Binding(
            "alt+f", "item('forget')", "Forget", tooltip="Forget the highlighted message now", id="forget"
        ),
        Binding("ctrl+f", "filter", "Filter", tooltip="Filter the panel's rows", id="filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        # Held rather than queried, so an update that races the app's shutdown is harmless.
        self._asking = LaidOutStatic("", id="context-asking")
        self._total = LaidOutStatic(Content(COUNTING), id="context-total")
        self._bar = LaidOutStatic("", classes="-ok", id="context-bar")
        self._saved = LaidOutStatic("", id="context-saved")
        self._filter = Input(placeholder="filter: words in a row", id="context-filter")
        self.rows = ContextList(id="context-rows")
        self._why = LaidOutStatic("", id="context-why")
        self._note = LaidOutStatic("", id="context-note")
        self.view: ContextView | None = None
        self._by_option: dict[str, ItemView | EntityView] = {}
        """What each row shows, by option id."""
        self._options: dict[str, tuple[object, Option]] = {}
        """Each row's option and what its prompt was made from, for reuse by the next update."""
        self._reused: dict[str, tuple[object, Option]] = {}

    def compose(self) -> ComposeResult:
        yield self._asking
        yield Static("Context", classes="title")
        yield self._total
        yield self._bar
        yield self._saved
        yield self._filter
        yield self.rows
        yield self._why
        yield self._note

    # --- showing ---------------------------------------------------------------------------------

    def show(self, view: ContextView, *, model: str, exact: bool, counter: str) -> None:
        self.view = view
        _say(self._asking, asking_line(view))
        self._asking.display = view.consent is not None
        approx = "" if exact else "≈ "
        _say(
            self._total,
            f"{approx}{view.tokens:,} of {view.budget:,} budget\n"
            f"window {compact(view.window)} · {inert(model)}",
        )
        fraction = view.tokens / view.budget if view.budget else 1.0
        filled = min(BAR_WIDTH, round(fraction * BAR_WIDTH))
        _say(self._bar, "█" * filled + "░" * (BAR_WIDTH - filled) + f" {fraction:.0%}")
        self._bar.set_classes(usage_level(fraction))
        # Between turns the panel shows the next request's plan: its saving is not the last
        # turn's, and is not in the session's total yet.
        request = "in the next request" if view.upcoming else "this turn"
        _say(
            self._saved,
            f"saved {approx}{compact(view.saved_tokens)} {request} · "
            f"{compact(view.session_saved_tokens)} so far in this session"
            + _calls_line(view.calls, "last turn" if view.upcoming else "this turn"),
        )
        self._fill_rows()
        notes = [*view.notes, MARK_LEGEND]
        if not exact:
            notes.append(f"≈ approximate counts ({counter}): the model's own tokenizer is not available.")
        _say(self._note, "\n".join(inert(n) for n in notes))

    def show_counting(self) -> None:
        """Nothing to show until the open session's context is counted (a session just opened):
        no rows of the last one to act on meanwhile."""
        self.view = None
        _say(self._total, COUNTING)
        for part in (self._bar, self._saved, self._why):
            _say(part, "")
        _say(self._note, MARK_LEGEND)  # the last session's notes were about its request
        self._by_option = {}
        self._options = {}
        self.rows.clear_options()

    def show_curating(self, model: str, seconds: float) -> None:
        """Say why the request waits: the curator model is choosing what it carries."""
        _say(self._saved, f"asking {inert(model)} what this request needs (at most {seconds:g} s)…")

    def _fill_rows(self) -> None:
        view = self.view
        if view is None:
            return
        needle = self._filter.value.strip().casefold() if self.has_class("-filtering") else ""
        highlighted = self.rows.highlighted_option
        keep = highlighted.id if highlighted is not None else None
        self._reused, self._options = self._options, {}
        self._by_option = {}
        options: list[Option] = []
        entities = {Section.ACTIVE: view.active, Section.RETAINED: view.retained, Section.PRUNED: view.pruned}
        for section, title in SECTION_TITLES.items():
            # Newest first: what changed last is what the user is most likely to look for.
            items: Sequence[ItemView] = [i for i in reversed(view.items) if i.section is section]
            found: Sequence[EntityView] = entities[section]
            if needle:
                items = [i for i in items if _item_matches(i, needle)]
                found = [e for e in found if _entity_matches(e, needle)]
            options.append(self._label(f"head-{section}", f"{title} ({len(items) + len(found):,})", "bold"))
            options.extend(self._group("messages", section, items))
            options.extend(self._group("entities", section, found))
        self._reused = {}
        self.rows.set_options(options)
        if keep is not None and keep in self._by_option:
            self.rows.highlighted = self.rows.get_option_index(keep)
        elif self._by_option:
            self.rows.highlighted = self.rows.get_option_index(next(iter(self._by_option)))
        self.rows.scroll_to_highlight()
        self._show_why()

    def _group(self, name: str, section: Section, shown: Sequence[ItemView | EntityView]) -> list[Option]:
        """A section's messages or entities: a sub-heading, up to ROWS_PER_GROUP rows, and a count
        of the rest."""
        if not shown:
            return []
        options = [self._label(f"{name}-{section}", f" {name}", "dim italic")]
        options.extend(self._option(row) for row in shown[:ROWS_PER_GROUP])
        if len(shown) > ROWS_PER_GROUP:
            hidden = len(shown) - ROWS_PER_GROUP
            options.append(
                self._label(f"{name}-more-{section}", f"  … {hidden:,} more: Ctrl+F filters", "dim")
            )
        return options

    def _option(self, shown: ItemView | EntityView) -> Option:
        """The row's option: the one shown last time when nothing on it changed.

        Reusing it keeps its laid-out prompt (Content caches its height and render), so an update
        costs the rows that changed, not every row.
        """
        if isinstance(shown, EntityView):
            option_id, key = f"entity:{shown.ref}", (shown.kind, shown.label, shown.last_turn)
        else:
            option_id, key = f"item-{shown.id}", (shown.mark, shown.section, shown.tokens)
        self._by_option[option_id] = shown
        cached = self._reused.get(option_id)
        if cached is not None and cached[0] == key:
            option = cached[1]
        else:
            prompt = entity_row(shown) if isinstance(shown, EntityView) else item_row(shown)
            option = Option(prompt, id=option_id)
        self._options[option_id] = (key, option)
        return option

    def _label(self, option_id: str, text: str, style: str) -> Option:
        cached = self._reused.get(option_id)
        option = (
            cached[1]
            if cached is not None and cached[0] == text
            else Option(Content.styled(text, style), id=option_id, disabled=True)
        )
        self._options[option_id] = (text, option)
        return option

    @on(OptionList.OptionHighlighted, "#context-rows")
    def _show_why(self) -> None:
        option = self.rows.highlighted_option
        shown = self._by_option.get(option.id or "") if option is not None else None
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
        self.post_message(ContextAction(action, item_id))

    @on(OptionList.OptionSelected, "#context-rows")
    def _inspect(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        item_id = self.highlighted_item()
        if item_id is not None:
            self.post_message(ContextAction("inspect", item_id))
        else:
            shown = self._by_option.get(event.option.id or "")
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


def asking_line(view: ContextView) -> str:
    """The panel's top line while Heedful waits for an answer about the user's messages."""
    if view.consent is None:
        return ""
    items = view.consent.items
    ids = " ".join(f"#{i.item_id}" for i in items[:4]) + (" …" if len(items) > 4 else "")
    left_out = [f"#{i.item_id}" for i in items if i.left_out]
    said = f"Heedful asks about {len(items):,} of your messages ({ids}) · F4 answers. Until then: "
    if left_out:
        return said + f"{', '.join(left_out)} not sent (no room); the rest sent whole."
    return said + "they are sent whole."


def _calls_line(calls: CallsReport | None, turn: str) -> str:
    """What curation's own model calls cost, beside what curation saved (nothing when none)."""
    if calls is None or not calls.session.calls:
        return ""

    def spent(usage: CallUsage) -> str:
        money = f" ≈ ${calls.price.of(usage):.4f}" if calls.price is not None else ""
        return f"{compact(usage.tokens)} tokens{money}"

    count = calls.session.calls
    return (
        f"\ncuration calls: {spent(calls.turn)} {turn} · {spent(calls.session)} "
        f"in this session ({count} call{'s' if count != 1 else ''})"
    )
