"""The session picker: search every message, open, rename, delete (and undo a delete)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from engine.chat import Session
from engine.errors import StoreError
from engine.protocols.store import ChatStore
from engine.text.moments import local_text
from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.screens.dialogs import ConfirmScreen, TextPromptScreen

if TYPE_CHECKING:
    from sessions.store import SearchHit

SEARCH_DELAY = 0.25
"""Seconds the search box waits for typing to pause before it searches."""

ROLE_NAMES = {"user": "you", "assistant": "assistant", "system": "system", "tool": "tool"}


@runtime_checkable
class SessionArchive(Protocol):
    """What the picker needs beyond :class:`ChatStore`: search, and a delete that can be undone.

    ``sessions.store.SqliteChatStore`` implements it.
    """

    def search(self, query: str, limit: int = 50) -> list[SearchHit]: ...

    def trash_session(self, session_id: int) -> Session: ...

    def restore_session(self, session_id: int) -> Session: ...

    def trashed_sessions(self) -> list[Session]: ...


class SessionChoice(int):
    """The picker's answer: the id of the session to open (it *is* that int, so a caller that wants
    only the session can use it as one) and, when it was chosen from a search hit, the message."""

    message_id: int | None

    def __new__(cls, session_id: int, message_id: int | None = None) -> SessionChoice:
        choice = super().__new__(cls, session_id)
        choice.message_id = message_id
        return choice

    @property
    def session_id(self) -> int:
        return int(self)

    def __repr__(self) -> str:
        return f"SessionChoice({int(self)}, message_id={self.message_id})"


def describe(session: Session, *, current: bool) -> Content:
    when = local_text(session.updated_at, "%Y-%m-%d %H:%M")
    marker = "● " if current else "  "
    count = f"{session.message_count:,} message" + ("" if session.message_count == 1 else "s")
    return Content.assemble(marker, (inert(session.title), "bold"), f"\n   {count} · {when}")


def describe_hit(hit: SearchHit, *, current: bool) -> Content:
    """The session's title, who wrote the message and when, then the text around the match."""
    when = local_text(hit.created_at, "%Y-%m-%d %H:%M")
    marker = "● " if current else "  "
    pieces: list[str | tuple[str, str]] = [
        marker,
        (inert(hit.session_title), "bold"),
        f" · {ROLE_NAMES.get(hit.role, hit.role)} · {when}\n   ",
    ]
    last = 0
    for start, end in hit.matches:
        pieces += [inert(hit.text[last:start]), (inert(hit.text[start:end]), "bold reverse")]
        last = end
    pieces.append(inert(hit.text[last:]))
    return Content.assemble(*pieces)


class SessionsScreen(Dialog[int | None]):
    """Lists sessions, newest first, or the messages matching a search, best first.

    Dismisses with a :class:`SessionChoice` (the session to open and, from a search hit, the message
    that matched), or None.
    """

    CSS_PATH = "sessions.tcss"
    AUTO_FOCUS = "#session-list"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="sessions_close", tooltip="Clear the search, or close"),
        Binding("slash", "search", "Search", id="sessions_search", tooltip="Search every message"),
        Binding("alt+r", "rename", "Rename", id="sessions_rename", tooltip="Rename the highlighted session"),
        Binding(
            "alt+d,delete", "delete", "Delete", id="sessions_delete", tooltip="Delete the highlighted session"
        ),
        Binding(
            "alt+u", "undo_delete", "Undo delete", id="sessions_undo", tooltip="Bring back the last deleted"
        ),
        Binding("down", "to_list", "To the list", show=False),
    ]

    def __init__(self, store: ChatStore, *, current: int | None) -> None:
        super().__init__()
        self.store = store
        self.archive = store if isinstance(store, SessionArchive) else None
        """The store's search and undoable delete, when it has them."""
        self.current = current
        self.sessions: list[Session] = []
        """Every session, newest first."""
        self.hits: list[SearchHit] | None = None
        """The messages matching the search, best first; None when there is no search."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Sessions", classes="title")
            search = Input(placeholder="/ search every message", id="session-search", max_length=200)
            search.display = self.archive is not None
            yield search
            yield OptionList(id="session-list")
            hint = (
                "Enter opens · / searches · Alt+R renames · Alt+D deletes · Alt+U undoes · Esc closes"
                if self.archive is not None
                else "Enter opens · Alt+R renames · Alt+D deletes · Esc closes"
            )
            yield Static(Content(hint), classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    @property
    def query_text(self) -> str:
        return self.query_one("#session-search", Input).value.strip()

    @work(exclusive=True, group="sessions", exit_on_error=False)
    async def reload(
        self, highlight: int | None = None, *, delay: float = 0.0, open_first: bool = False
    ) -> None:
        """Show the sessions, or the search's hits when there is a search (after ``delay`` seconds:
        a newer keystroke cancels this worker before it asks the store); with ``open_first``, then
        open the first row."""
        if delay:
            await asyncio.sleep(delay)
        query = self.query_text if self.archive is not None else ""
        try:
            self.sessions = await asyncio.to_thread(self.store.list_sessions)
            self.hits = (
                await asyncio.to_thread(self.archive.search, query) if self.archive and query else None
            )
        except StoreError as err:
            self.notify(err.user_message, severity="error", timeout=10)
            return
        options = self.query_one(OptionList)
        had_focus = options.has_focus
        options.clear_options()
        if self.hits is not None:
            self._show_hits(options, self.hits, query)
        else:
            self._show_sessions(options, highlight)
        if not self.query_one("#session-search", Input).has_focus or had_focus:
            options.focus()
        if open_first and options.highlighted is not None:
            options.action_select()

    def _show_sessions(self, options: OptionList, highlight: int | None) -> None:
        if not self.sessions:
            options.add_option(
                Option(Content("No sessions yet: send a message to start one."), disabled=True)
            )
            return
        options.add_options(
            Option(describe(s, current=s.id == self.current), id=str(s.id)) for s in self.sessions
        )
        wanted = highlight if highlight is not None else self.current
        options.highlighted = next((i for i, s in enumerate(self.sessions) if s.id == wanted), 0)

    def _show_hits(self, options: OptionList, hits: list[SearchHit], query: str) -> None:
        if not hits:
            options.add_option(Option(Content(f"No message matches “{inert(query)}”."), disabled=True))
            return
        options.add_options(
            Option(describe_hit(h, current=h.session_id == self.current), id=f"{h.session_id}:{h.message_id}")
            for h in hits
        )
        options.highlighted = 0

    def _selected(self) -> Session | None:
        option = self.query_one(OptionList).highlighted_option
        if option is None or option.id is None:
            return None
        session_id = int(option.id.split(":")[0])
        return next((s for s in self.sessions if s.id == session_id), None)

    @on(Input.Changed, "#session-search")
    def search_changed(self) -> None:
        self.reload(delay=SEARCH_DELAY if self.query_text else 0.0)

    @on(Input.Submitted, "#session-search")
    def search_submitted(self) -> None:
        """Enter in the search box: search now (not after the pause) and open the best hit."""
        self.reload(open_first=True)

    @on(OptionList.OptionSelected)
    def open_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is None:
            return
        session, _, message = event.option.id.partition(":")
        self.dismiss(SessionChoice(int(session), int(message) if message else None))

    def action_close(self) -> None:
        search = self.query_one("#session-search", Input)
        if search.value:
            search.value = ""
            self.query_one(OptionList).focus()
            return
        self.dismiss(None)

    def action_search(self) -> None:
        if self.archive is not None:
            self.query_one("#session-search", Input).focus()

    def action_to_list(self) -> None:
        self.query_one(OptionList).focus()

    def action_rename(self) -> None:
        session = self._selected()
        if session is None:
            return

        async def renamed(title: str | None) -> None:
            if not title:
                return
            try:
                await asyncio.to_thread(self.store.rename_session, session.id, title)
            except StoreError as err:
                self.notify(err.user_message, severity="error", timeout=10)
            self.reload(highlight=session.id)

        self.app.push_screen(TextPromptScreen("New title for this session:", session.title), renamed)

    def action_delete(self) -> None:
        session = self._selected()
        if session is None:
            return
        archive = self.archive

        async def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            try:
                if archive is not None:
                    await asyncio.to_thread(archive.trash_session, session.id)
                else:
                    await asyncio.to_thread(self.store.delete_session, session.id)
            except StoreError as err:
                self.notify(err.user_message, severity="error", timeout=10)
                return
            if archive is not None:
                self.notify(f"Deleted “{inert(session.title)}”. Press u to bring it back.", timeout=10)
            else:
                self.notify(f"Deleted “{inert(session.title)}”.")
            self.reload()

        question = f"Delete the session “{session.title}” and its {session.message_count:,} messages?\n" + (
            "u in this list brings it back until Heedful closes."
            if archive is not None
            else "This cannot be undone."
        )
        self.app.push_screen(ConfirmScreen(question, confirm="Delete", danger=True), confirmed)

    @work(exclusive=True, group="sessions-undo", exit_on_error=False)
    async def action_undo_delete(self) -> None:
        if self.archive is None:
            return
        try:
            trashed = await asyncio.to_thread(self.archive.trashed_sessions)
            if not trashed:
                self.notify("There is no deleted session to bring back.")
                return
            session = await asyncio.to_thread(self.archive.restore_session, trashed[0].id)
        except StoreError as err:
            self.notify(err.user_message, severity="error", timeout=10)
            return
        self.notify(f"Brought back “{inert(session.title)}”.")
        self.reload(highlight=session.id)
