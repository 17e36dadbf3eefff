"""The messages a list has mounted (a window of a session's), the counts of those stored beyond
it above and below, and where the focus goes when a focused message is unmounted."""

from __future__ import annotations

from collections.abc import Sequence

from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from engine.chat import StoredMessage
from engine.curation.context_view import ContextView, ItemView
from tui.filtering import counted
from tui.widgets.laid_out_once import LaidOutOnce, LaidOutStatic
from tui.widgets.message_view import MessageView

LOOKUPS_BEFORE_INDEX = 4
"""Messages mounted after an update that are looked up one by one (a turn mounts two); then the
view's thousands of items are indexed."""


class MessageWindow(VerticalScroll, LaidOutOnce):
    """Message views between two count lines, "↑ N earlier messages" and "↓ N later messages";
    :class:`tui.widgets.message_list.MessageList` pages them in and out."""

    DEFAULT_CSS = """
    MessageWindow > .welcome { color: $heedful-muted; padding: 1 2; }
    MessageWindow > .more { color: $heedful-muted; text-align: center; margin-bottom: 1; display: none; }
    MessageWindow > .more.-shown { display: block; }
    """

    class FocusLost(Message):
        """The focused message was unmounted (a jump, a page scrolled past, a delete), and the
        focus needs a home: Textual gives it to the next focusable widget, the context panel,
        whose Alt+letter keys act on a row, while the user's next keys are meant for the composer."""

    def __init__(self, welcome: Content, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, can_focus=False)
        self._welcome = welcome
        self._views: dict[int, MessageView] = {}
        self._earlier = 0
        """Shown messages stored before the first mounted one."""
        self._later = 0
        """Shown messages stored after the last mounted one."""
        self._last_view: ContextView | None = None
        """The engine's last word on the next request: it marks the views of pages mounted later too."""
        self._placed: dict[int, ItemView] | None = None
        """Its items by message id, once a page mounted later needs them."""
        self._looked_up = 0
        self._top = LaidOutStatic("", classes="more")
        self._bottom = LaidOutStatic("", classes="more")

    def on_mount(self) -> None:
        self.mount_all([self._top, Static(self._welcome, classes="welcome"), self._bottom])

    @property
    def mounted(self) -> list[MessageView]:
        """The mounted message views, oldest first."""
        return [child for child in self.children if isinstance(child, MessageView)]

    def view_for(self, message_id: int) -> MessageView | None:
        return self._views.get(message_id)

    async def drop(self, message_ids: Sequence[int]) -> None:
        """Remove the views of messages that are no longer shown (superseded, deleted)."""
        for message_id in message_ids:
            view = self._views.pop(message_id, None)
            if view is not None:
                lost = self._holds_focus([view])
                await view.remove()
                if lost:
                    self.post_message(self.FocusLost())

    def show_context(self, view: ContextView) -> None:
        """Mark each mounted message (and each mounted later) with where it stands in the next request."""
        # Only the mounted messages' items are looked up (from the latest: they usually are), not
        # thousands indexed each update; a message mounted later is looked up in the whole view.
        self._last_view, self._placed, self._looked_up = view, None, 0
        wanted = set(self._views)
        placed: dict[int, ItemView] = {}
        for item in reversed(view.items) if wanted else ():
            if item.id in wanted:
                placed[item.id] = item
                if len(placed) == len(wanted):
                    break
        for message_id, message_view in self._views.items():
            message_view.show_context(placed.get(message_id))

    def _item(self, message_id: int) -> ItemView | None:
        """The message's item in the last view: a turn's two new messages are found from the
        latest; a page mounted later has the view indexed once."""
        items = self._last_view.items if self._last_view is not None else ()
        if self._placed is None and self._looked_up < LOOKUPS_BEFORE_INDEX:
            self._looked_up += 1
            return next((item for item in reversed(items) if item.id == message_id), None)
        if self._placed is None:
            self._placed = {item.id: item for item in items}
        return self._placed.get(message_id)

    def _view(self, message: StoredMessage) -> MessageView:
        view = MessageView(message)
        view.show_context(self._item(message.id))
        return view

    def last_reply(self) -> StoredMessage | None:
        """The session's last reply with text, if it is mounted (the latest messages are)."""
        if self._later:
            return None
        replies = [v.message for v in self.mounted if v.message.is_reply and v.message.content]
        return replies[-1] if replies else None

    @property
    def at_latest(self) -> bool:
        """Whether the session's latest message is mounted."""
        return not self._later

    def _show_counts(self) -> None:
        self._top.update(Content(f"↑ {counted(self._earlier, 'earlier message')}: scroll up to see them"))
        self._top.set_class(bool(self._earlier), "-shown")
        self._bottom.update(Content(f"↓ {counted(self._later, 'later message')}: scroll down, or Ctrl+End"))
        self._bottom.set_class(bool(self._later), "-shown")

    def _first_visible(self, mounted: list[MessageView]) -> MessageView:
        top = self.scroll_y
        return next((v for v in mounted if v.virtual_region.bottom > top), mounted[-1])

    def _leaving(self, views: Sequence[MessageView], *, later: bool) -> Sequence[MessageView]:
        """Count ``views`` among the later (or earlier) messages, before they are unmounted: the
        counts are shown before a page is mounted. Returns ``views``."""
        if later:
            self._later += len(views)
        else:
            self._earlier += len(views)
        return views

    async def _unmount(self, views: Sequence[MessageView]) -> None:
        """Unmount ``views`` (counted by :meth:`_leaving`)."""
        if not views:
            return
        for view in views:
            self._views.pop(view.message.id, None)
        lost = self._holds_focus(views)
        await self.remove_children(list(views))
        if lost:
            self.post_message(self.FocusLost())

    def _holds_focus(self, widgets: Sequence[Widget]) -> bool:
        """Whether the focused widget is one of ``widgets`` or inside one."""
        focused = self.screen.focused
        return focused is not None and any(node in widgets for node in focused.ancestors_with_self)
