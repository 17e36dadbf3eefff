"""The session picker: open, rename and delete sessions."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from engine.chat import Session
from engine.protocols import ChatStore
from tui.sanitize import inert
from tui.screens.dialogs import ConfirmScreen, TextPromptScreen


def describe(session: Session, *, current: bool) -> Content:
    when = session.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
    marker = "● " if current else "  "
    count = f"{session.message_count:,} message" + ("" if session.message_count == 1 else "s")
    return Content.assemble(marker, (inert(session.title), "bold"), f"\n   {count} · {when}")


class SessionsScreen(ModalScreen[int | None]):
    """Lists sessions, newest first. Dismisses with the id of the session to open, or None."""

    CSS_PATH = "sessions.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close", id="sessions_close"),
        Binding("r", "rename", "Rename", id="sessions_rename"),
        Binding("d,delete", "delete", "Delete", id="sessions_delete"),
    ]

    def __init__(self, store: ChatStore, *, current: int | None) -> None:
        super().__init__()
        self.store = store
        self.current = current
        self.sessions: list[Session] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Sessions", classes="title")
            yield OptionList(id="session-list")
            yield Static(Content("Enter opens · r renames · d deletes · Esc closes"), classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    @work(exclusive=True, group="sessions")
    async def reload(self, highlight: int | None = None) -> None:
        self.sessions = await asyncio.to_thread(self.store.list_sessions)
        options = self.query_one(OptionList)
        options.clear_options()
        if not self.sessions:
            options.add_option(
                Option(Content("No sessions yet: send a message to start one."), disabled=True)
            )
            return
        options.add_options(
            Option(describe(s, current=s.id == self.current), id=str(s.id)) for s in self.sessions
        )
        wanted = highlight if highlight is not None else self.current
        index = next((i for i, s in enumerate(self.sessions) if s.id == wanted), 0)
        options.highlighted = index
        options.focus()

    def _selected(self) -> Session | None:
        index = self.query_one(OptionList).highlighted
        if index is None or not self.sessions or index >= len(self.sessions):
            return None
        return self.sessions[index]

    @on(OptionList.OptionSelected)
    def open_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(int(event.option.id))

    def action_rename(self) -> None:
        session = self._selected()
        if session is None:
            return

        async def renamed(title: str | None) -> None:
            if title:
                await asyncio.to_thread(self.store.rename_session, session.id, title)
                self.reload(highlight=session.id)

        self.app.push_screen(TextPromptScreen("New title for this session:", session.title), renamed)

    def action_delete(self) -> None:
        session = self._selected()
        if session is None:
            return

        async def confirmed(yes: bool | None) -> None:
            if yes:
                await asyncio.to_thread(self.store.delete_session, session.id)
                self.notify(f"Deleted “{inert(session.title)}”.")
                self.reload()

        question = (
            f"Delete the session “{session.title}” and its {session.message_count:,} messages?\n"
            "This cannot be undone."
        )
        self.app.push_screen(ConfirmScreen(question, confirm="Delete", danger=True), confirmed)
