"""The memory screen: what Heedful remembers across sessions; edit, pin and delete memories."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Footer, Input, Static
from textual.widgets.option_list import Option

from engine.errors import StoreError
from engine.memory.memories import (
    MAX_SUMMARY_CHARS,
    PROMPT_MEMORIES,
    Memory,
    describe_expiry,
    eligible_for_prompt,
)
from engine.memory.service import MemoryService
from engine.text.moments import local_text
from tui.bindings import closing
from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.screens.list_dialog import ListDialog


def describe(memory: Memory, now: datetime, carried: set[int] | None = None) -> Content:
    """A memory as the list shows it: importance, expiry, origin and whether a new session's
    request carries it (``carried``: the ids that it does; None: not known); the summary; tags
    and topics.

    Every part that came from a model or the user is plain text (never markup) and inert.
    """
    mark = "📌 " if memory.pinned else "   "
    origin = f" · from session {memory.session_id}" if memory.session_id is not None else ""
    head = Content.assemble(
        mark,
        (f"{memory.importance:.2f}", "bold"),
        f"  {describe_expiry(memory, now)} · {local_text(memory.created_at, '%Y-%m-%d %H:%M')}{origin}",
        _carried(memory, now, carried),
    )
    lines = [head, Content.assemble("\n   ", inert(memory.summary))]
    labels = []
    if memory.tags:
        labels.append("tags: " + ", ".join(memory.tags))
    if memory.topics:
        labels.append("topics: " + ", ".join(memory.topics))
    if labels:
        lines.append(Content.assemble("\n   ", (inert(" · ".join(labels)), "dim")))
    return Content.assemble(*lines)


def _carried(memory: Memory, now: datetime, carried: set[int] | None) -> Content:
    if carried is None:
        return Content("")
    if memory.id in carried:
        return Content.styled(" · in new sessions", "bold")
    if eligible_for_prompt(memory, now):
        return Content(f" · not in new sessions: only the {PROMPT_MEMORIES} newest that fit go")
    return Content("")


class MemoryEditScreen(Dialog[str | None]):
    """Edit a memory's summary; Enter saves, Escape cancels."""

    CSS_PATH = "memory.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [closing(name="memory_edit_cancel", description="Cancel")]

    def __init__(self, summary: str) -> None:
        super().__init__()
        self.summary = summary

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content("What should Heedful remember?"), classes="question")
            yield Input(inert(self.summary), max_length=MAX_SUMMARY_CHARS, id="memory-summary")
            yield Static(Content("Enter saves · Esc cancels"), classes="hint")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if not value:
            self.notify("A memory cannot be empty: delete it instead (Alt+D).", severity="warning")
            return
        self.dismiss(value)


class MemoryScreen(ListDialog[Memory]):
    """Lists every memory, newest first; Alt+E edits, Alt+P pins or unpins, Alt+D deletes (after asking).
    Plain keys are typing, and go to the composer."""

    CSS_PATH = "memory.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        closing(name="memory_close", tooltip="Close the memory screen"),
        Binding("alt+e", "edit", "Edit", id="memory_edit", tooltip="Edit the highlighted memory's summary"),
        Binding("alt+p", "pin", "Pin", id="memory_pin", tooltip="Pin (never expires) or unpin the memory"),
        Binding("alt+d,delete", "remove", "Delete", id="memory_delete", tooltip="Delete the memory"),
    ]
    EMPTY = (
        "No memories yet. A session is assessed when it ends, after a while without messages, or on "
        "/remember; what matters is kept here, and the important memories go into new sessions."
    )
    HEADING = "Memories"
    INTRO = (
        "Kept across sessions. Pinned memories and those of importance 0.7 or more go into new sessions, "
        f"the {PROMPT_MEMORIES} newest that fit (each row says whether it does); the rest expire after 3 "
        "to 30 days."
    )
    KEYS_HINT = "Alt+E edits · Alt+P pins or unpins · Alt+D deletes · Esc closes"
    LIST_ID = "memory-list"
    VERB = "Delete"
    WHAT = "memory"
    AFTER_REMOVAL = "This cannot be undone."

    def __init__(self, memory: MemoryService) -> None:
        super().__init__(None)  # read on mount
        self.service = memory
        self.carried: set[int] | None = None
        """The memories a new session's request carries (None: not known)."""

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    @work(exclusive=True, group="memories")
    async def reload(self, highlight: int | None = None) -> None:
        try:
            memories = await self.service.memories()
            carried = await self.service.in_new_sessions()
        except StoreError as err:
            self.notify(err.user_message, severity="error")
            return
        # Both at once, with the rows: a reader of ``items`` never sees them before they are shown.
        self.carried = carried
        at = next((i for i, m in enumerate(memories) if m.id == highlight), None)
        self.show(memories, highlight=at)

    def option(self, item: Memory) -> Option:
        return Option(describe(item, self.service.clock(), self.carried), id=str(item.id))

    def words(self, item: Memory) -> str:
        return item.summary

    def remove_item(self, item: Memory) -> None:
        self._delete(item.id)

    # --- actions -------------------------------------------------------------------------------

    def action_edit(self) -> None:
        memory = self.selected()
        if memory is None:
            return

        def edited(summary: str | None) -> None:
            if summary and summary != memory.summary:
                self._edit(memory.id, summary)

        self.app.push_screen(MemoryEditScreen(memory.summary), edited)

    def action_pin(self) -> None:
        memory = self.selected()
        if memory is not None:
            self._pin(memory.id, not memory.pinned)

    # --- workers -------------------------------------------------------------------------------

    @work(exclusive=True, group="memory-change")
    async def _edit(self, memory_id: int, summary: str) -> None:
        try:
            await self.service.edit(memory_id, summary)
        except (StoreError, ValueError) as err:
            self._failed(err)
            return
        self.notify("Memory updated.")
        self.reload(highlight=memory_id)

    @work(exclusive=True, group="memory-change")
    async def _pin(self, memory_id: int, pinned: bool) -> None:
        try:
            memory = await self.service.pin(memory_id, pinned)
        except StoreError as err:
            self._failed(err)
            return
        self.notify(
            "Pinned: this memory never expires, and new sessions take it before the others."
            if memory.pinned
            else f"Unpinned: {describe_expiry(memory, self.service.clock())}."
        )
        self.reload(highlight=memory_id)

    @work(exclusive=True, group="memory-change")
    async def _delete(self, memory_id: int) -> None:
        try:
            await self.service.delete(memory_id)
        except StoreError as err:
            self._failed(err)
            return
        self.notify("Memory deleted.")
        self.reload()

    def _failed(self, err: StoreError | ValueError) -> None:
        message = err.user_message if isinstance(err, StoreError) else str(err)
        self.notify(message, severity="error")
        self.reload()
