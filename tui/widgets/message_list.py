"""The scrolling list of a session's messages."""

from __future__ import annotations

from collections.abc import Sequence

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from engine.chat import MessageStatus, StoredMessage
from engine.context_view import ContextView
from tui.widgets.message_view import MessageView

SHOWN_ON_OPEN = 60
"""How many of a session's latest messages are mounted when it is opened: each Markdown message
costs layout time, and a long session would otherwise take seconds to appear."""


def _visible(message: StoredMessage) -> bool:
    return message.status != MessageStatus.SUPERSEDED


class MessageList(VerticalScroll):
    """Shows messages; stays scrolled to the bottom while a reply streams unless the user scrolls up."""

    DEFAULT_CSS = """
    MessageList { height: 1fr; padding: 1 1 0 1; }
    MessageList > .welcome { color: $heedful-muted; padding: 1 2; }
    MessageList > .earlier { color: $heedful-muted; text-align: center; margin-bottom: 1; }
    """

    def __init__(self, welcome: Content, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, can_focus=False)
        self._welcome = welcome

    def on_mount(self) -> None:
        self.mount(Static(self._welcome, classes="welcome"))

    async def show(self, messages: Sequence[StoredMessage], *, around: int | None = None) -> None:
        """Replace what is shown with ``messages``: the latest of them if there are many, or those
        around message ``around`` (a search hit), which is then scrolled to the top and focused."""
        visible = [m for m in messages if _visible(m)]
        await self.remove_children()
        if not visible:
            await self.mount(Static(self._welcome, classes="welcome"))
            return
        index = next((i for i, m in enumerate(visible) if m.id == around), None)
        start = len(visible) - SHOWN_ON_OPEN if index is None else index - SHOWN_ON_OPEN // 2
        start = max(0, min(start, len(visible) - SHOWN_ON_OPEN))
        shown = visible[start : start + SHOWN_ON_OPEN]
        widgets: list[Static | MessageView] = []
        if start:
            widgets.append(
                Static(Content(f"… {start:,} earlier messages are in the store"), classes="earlier")
            )
        widgets.extend(MessageView(m) for m in shown)
        later = len(visible) - start - len(shown)
        if later:
            widgets.append(
                Static(Content(f"… {later:,} later messages (Ctrl+O reopens at the end)"), classes="earlier")
            )
        await self.mount_all(widgets)
        target = self.view_for(around) if around is not None else None
        if target is None:
            self.anchor()
            return
        self.release_anchor()
        self.call_after_refresh(self.scroll_to_widget, target, top=True, animate=False)
        target.focus()

    async def add(self, message: StoredMessage) -> MessageView:
        """Append a message and keep the bottom in view."""
        for welcome in self.query(".welcome"):
            await welcome.remove()
        view = MessageView(message)
        await self.mount(view)
        self.anchor()
        return view

    def view_for(self, message_id: int) -> MessageView | None:
        found = self.query(f"#message-{message_id}")
        return found.first(MessageView) if found else None

    async def drop(self, message_ids: Sequence[int]) -> None:
        """Remove the views of messages that are no longer shown (superseded by a retry)."""
        for message_id in message_ids:
            view = self.view_for(message_id)
            if view is not None:
                await view.remove()

    def show_context(self, view: ContextView) -> None:
        """Mark each shown message with where it stands in the next request."""
        placed = {item.id: item for item in view.items}
        for message_view in self.query(MessageView):
            message_view.show_context(placed.get(message_view.message.id))

    def last_reply(self) -> StoredMessage | None:
        replies = [v.message for v in self.query(MessageView) if v.message.is_reply and v.message.content]
        return replies[-1] if replies else None
