"""Reading a session's messages a page at a time for the chat pane (see
:class:`tui.widgets.message_list.MessageList`): the page a session opens on, the next page as the
user scrolls, and the last reply when it is not on screen."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from engine.chat import MessagePage, Session, StoredMessage
from engine.errors import StoreError
from tui.screens.chat_parts import ChatPart
from tui.widgets.message_list import PAGE

if TYPE_CHECKING:
    from engine.protocols.store import ChatStore
    from tui.screens.chat_host import ChatHost
    from tui.screens.chat_memory import MemoryActions
    from tui.widgets.message_list import MessageList

PAGE_GROUP = "page"

EMPTY = MessagePage([], 0, 0)

LAST_SESSION = "last_session"
"""The state key of the session on screen last: the app opens on it again."""


class SessionPages(ChatPart):
    """The chat pane's pages, read from the store in workers (widgets never touch the store)."""

    def __init__(self, host: ChatHost, *, memory: MemoryActions) -> None:
        super().__init__(host)
        self.memory = memory

    def choose_session(self) -> None:
        """Ctrl+O: open another session (or a search hit in one), rename or delete sessions."""
        from tui.screens.sessions import SessionChoice, SessionsScreen

        host = self.host

        def chosen(choice: int | None) -> None:
            if choice is not None:
                if host.session is not None and host.session.id != choice:
                    self.memory.remember(host.session.id, asked=False)  # leaving it: it ends here
                hit = choice.message_id if isinstance(choice, SessionChoice) else None
                host.open_session(int(choice), at_message=hit)
            elif host.session is not None:
                # The open session may have been renamed or deleted in the picker.
                host.open_session(host.session.id)

        current = host.session.id if host.session else None
        host.app.push_screen(SessionsScreen(self.store, current=current), chosen)

    @property
    def store(self) -> ChatStore:
        return self.host.services.store

    def opening(
        self, session_id: int | None, *, at_message: int | None
    ) -> tuple[Session | None, MessagePage, MessagePage]:
        """Blocking (call it from a thread): the session (when ``session_id`` is None, the one on
        screen when the app last closed, else the latest), the page to show (its latest, or the
        one around ``at_message``) and its latest page."""
        store = self.store
        if session_id is not None:
            session = store.get_session(session_id)
        else:
            last = store.get_state(LAST_SESSION)
            shown = store.get_session(int(last)) if last is not None and last.isdigit() else None
            session = shown or store.latest_session()  # none shown yet, or deleted since
        if session is None:
            return None, EMPTY, EMPTY
        latest = store.message_page(session.id, limit=PAGE)
        if at_message is None:
            return session, latest, latest
        up_to = store.message_page(session.id, before=at_message + 1, limit=PAGE // 2)
        after = store.message_page(session.id, after=at_message, limit=PAGE // 2)
        return session, MessagePage(up_to.messages + after.messages, up_to.earlier, after.later), latest

    def read_next(self, event: MessageList.NeedsMore) -> None:
        """Read the page the message list asked for and give it to the list."""
        session = self.host.session
        if session is not None:
            self.host.run_worker(
                self._read_next(session.id, event),
                group=PAGE_GROUP,
                exit_on_error=False,
            )

    async def _read_next(self, session_id: int, asked: MessageList.NeedsMore) -> None:
        if asked.direction == "earlier":
            read = partial(self.store.message_page, session_id, before=asked.beyond, limit=PAGE)
        else:
            read = partial(self.store.message_page, session_id, after=asked.beyond, limit=PAGE)
        messages = self.host.message_list
        try:
            page = await asyncio.to_thread(read)
        except StoreError:
            messages.page_failed(asked)
            raise
        session = self.host.session
        if session is not None and session.id == session_id:
            await messages.extend(asked, page)

    def jump(self, *, to_start: bool) -> None:
        """Show the open session from its first message, or its latest (Ctrl+Home, Ctrl+End).

        Only the messages change: the session, its settings and its context stay as they are.
        """
        session = self.host.session
        if session is not None:
            self.host.run_worker(
                self._jump(session.id, to_start), group=PAGE_GROUP, exclusive=True, exit_on_error=False
            )

    async def _jump(self, session_id: int, to_start: bool) -> None:
        if to_start:
            read = partial(self.store.message_page, session_id, after=0, limit=PAGE)
        else:
            read = partial(self.store.message_page, session_id, limit=PAGE)
        page = await asyncio.to_thread(read)
        session = self.host.session
        if session is not None and session.id == session_id:
            await self.host.message_list.show(page)

    async def last_reply(self) -> StoredMessage | None:
        """The session's last reply with text: from the screen, or from the store when the latest
        messages are not mounted (the user went back to older pages)."""
        messages, session = self.host.message_list, self.host.session
        if messages.at_latest or session is None:
            return messages.last_reply()
        page = await asyncio.to_thread(self.store.message_page, session.id, limit=PAGE)
        replies = [m for m in page.messages if m.is_reply and m.content]
        return replies[-1] if replies else None
