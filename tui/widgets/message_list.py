"""The scrolling list of a session's messages: only a window of them is mounted at a time.

A session may hold 10,000 messages; mounting a widget for each would take minutes and gigabytes.
The list mounts a page around what the user looks at, asks for the next page (:class:`NeedsMore`)
as the view nears either edge of what is mounted, and unmounts the far side beyond
:data:`MOUNTED_LIMIT`. The chat screen reads the pages from the store; this widget never does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from engine.chat import MessagePage, MessageStatus, StoredMessage
from tui.widgets.message_view import MessageView
from tui.widgets.message_window import MessageWindow

PAGE = 10
"""Messages read and mounted at a time: on opening a session, and at each edge reached. A page's
mount holds the event loop, so a page is small (docs/performance.md, "Figures behind the code")."""
MOUNTED_LIMIT = 2 * PAGE
"""At most this many messages are mounted; the far side goes as the user scrolls on, the oldest as
new ones come. Two pages: one coming in and a screenful to keep (every mounted message costs
layout time on each turn)."""
EDGE_LINES = 8
"""The next page is asked for when the view comes this close to an edge of what is mounted."""

Direction = Literal["earlier", "later"]


class MessageList(MessageWindow):
    """Shows messages; stays scrolled to the bottom while a reply streams unless the user scrolls up."""

    DEFAULT_CSS = """
    MessageList { height: 1fr; padding: 1 1 0 1; }
    """

    class NeedsMore(Message):
        """The view reached an edge of the mounted messages and the store has more beyond it."""

        def __init__(self, direction: Direction, beyond: int) -> None:
            super().__init__()
            self.direction: Direction = direction
            self.beyond = beyond
            """The id of the message at that edge: the page wanted is before or after it."""

    def __init__(self, welcome: Content, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(welcome, id=id)
        self._asked: MessageList.NeedsMore | None = None
        """The page asked for and not yet given (one at a time): only that one is mounted."""
        self._placing = False
        """A page was just shown and is not scrolled into place yet."""

    # --- showing a page --------------------------------------------------------------------------

    async def show(self, page: MessagePage, *, focus: int | None = None) -> None:
        """Replace what is shown with ``page`` (a session just opened, or a jump): scrolled to the
        end, or to message ``focus`` (a search hit), which is then scrolled to the top and focused."""
        self._placing = True  # no page is asked for by where the old content was scrolled
        leaving = [c for c in self.children if c not in (self._top, self._bottom)]
        lost = self._holds_focus(leaving)
        if focus is None and not page.later and any(_shown(m) for m in page.messages):
            # The latest page: held at its end from its first layout, so the first frame drawn
            # shows the latest message rather than the page's top (_place scrolls it there too).
            self.anchor()
        views = [self._view(m) for m in page.messages if _shown(m)]
        if views or not leaving or any(not c.has_class("welcome") for c in leaving):
            with self.app.batch_update():  # one layout for the old page's removal and the new one
                await self.remove_children(leaving)
                self._views.clear()
                self._views.update((v.message.id, v) for v in views)
                await self.mount_all(views or [Static(self._welcome, classes="welcome")], before=self._bottom)
        # else the welcome is already shown (a new chat, as the app starts): kept as it is
        self._asked = None
        self._earlier, self._later = page.earlier, page.later
        self._show_counts()
        if lost and focus not in self._views:
            self.post_message(self.FocusLost())
        self.call_after_refresh(self._place, focus)

    def _place(self, focus: int | None) -> None:
        """Scroll a newly shown page into place: to the message ``focus``, to the top of the
        session's first page, or to the end."""
        target = self._views.get(focus) if focus is not None else None
        if target is not None:
            self.release_anchor()
            self.scroll_to_widget(target, top=True, animate=False, immediate=True)
            target.focus()
        elif self._later or not self._views:
            # An empty session's welcome text reads from the top; anchoring would push it down.
            self.release_anchor()
            self.scroll_home(animate=False, immediate=True, force=True)
        else:
            self.anchor()
            self.scroll_end(animate=False, immediate=True, force=True)
        self._placing = False
        self._maybe_ask()
        # Asked before the page is laid out, the view may still have the old page's height; and
        # an anchored view the layout moves gets no scroll event (docs/upstream/
        # textual-anchored-scroll.md): look at the edges again once it is laid out.
        self.call_after_refresh(self._maybe_ask)

    async def extend(self, asked: NeedsMore, page: MessagePage) -> None:
        """Mount the page ``asked`` for, keeping the view where it is, and unmount the far side
        beyond :data:`MOUNTED_LIMIT`.

        No other page is asked for until this one is laid out and the view put back: a page asked
        for in between would be placed by where things were before. A page that no longer
        adjoins what is mounted is dropped: asked for before a jump or a new message replaced the
        window (it put old messages after the new one), or before its edge message went.
        """
        if asked is not self._asked:
            return
        if self._edge(asked.direction) != asked.beyond:
            self._asked = None
            self._maybe_ask(asked.direction)
            return
        # One layout for the whole change, not one for the mount, one per Markdown body and one
        # for the unmount.
        with self.app.batch_update():
            await self._extend(asked.direction, page)

    def _edge(self, direction: Direction) -> int | None:
        """The id of the mounted message at the ``earlier`` or ``later`` edge."""
        mounted = self.mounted
        if not mounted:
            return None
        return mounted[0 if direction == "earlier" else -1].message.id

    async def _extend(self, direction: Direction, page: MessagePage) -> None:
        views = [self._view(m) for m in page.messages if _shown(m) and m.id not in self._views]
        mounted = self.mounted
        if direction == "earlier":
            self._earlier = page.earlier
            if not self._later and mounted and self._following():
                # The view is on the session's latest messages (a message sent from an older page
                # starts a window there): they stay, and the page gives only the newest of its
                # messages that fit beside them.
                cut = max(0, len(views) - max(0, MOUNTED_LIMIT - len(mounted)))
                self._earlier += cut
                views = views[cut:]
            if not mounted or not views:
                self._asked = None
                self._show_counts()
                return
            staying = mounted[: len(mounted) - _over_limit(mounted, views)]
            # Content is added above the view: keep the message at the top of the view in place
            # (or the first of those staying below it, should it be among those that go).
            top = self._first_visible(staying)
            # A view at the end (a new message after a jump starts a short window there) stays
            # on the end, following a reply that grows while the page is laid out; otherwise the
            # user went up, and new text at the end must not pull the view down.
            offset = None if self._following() else top.virtual_region.y - self.scroll_y
            if offset is not None:
                self.release_anchor()
            gone = self._leaving(mounted[len(staying) :], later=True)
            # Before the mount, while the screen's map of where widgets are still holds: after it,
            # redrawing the counts would have the whole screen arranged an extra time.
            self._show_counts()
            await self.mount_all(views, before=mounted[0])
            self._views.update((v.message.id, v) for v in views)
            await self._unmount(gone)
            self.call_after_refresh(self._restore, top, offset, self.scroll_y)
        else:
            self._later = page.later
            if not views:
                self._asked = None
                self._show_counts()
                return
            staying = mounted[_over_limit(mounted, views) :]
            # The message at the top of the view stays in place, or the first of those staying
            # below it: had it gone, the view was left where the page went, on the edge below
            # it, asking for page after page down to the session's end.
            keep = self._first_visible(staying) if staying else None
            offset = keep.virtual_region.y - self.scroll_y if keep is not None else 0
            gone = self._leaving(mounted[: len(mounted) - len(staying)], later=False)
            self._show_counts()  # before the mount, as above
            await self.mount_all(views, before=self._bottom)
            self._views.update((v.message.id, v) for v in views)
            await self._unmount(gone)
            if keep is not None and gone:
                self.call_after_refresh(self._restore, keep, offset, self.scroll_y)
            else:
                self._asked = None

    async def add(self, message: StoredMessage) -> MessageView:
        """Append a new message and keep the bottom in view (jumping there from older pages)."""
        if self._later:
            # The latest messages are not mounted: the new one starts a fresh window at the end.
            earlier = self._earlier + len(self._views) + self._later
            await self.show(MessagePage([], earlier, 0))
        for welcome in self.query_children(".welcome"):
            await welcome.remove()
        view = self._view(message)
        self._views[message.id] = view
        with self.app.batch_update():
            await self.mount(view, before=self._bottom)
            # Each turn adds two messages: the oldest mounted go as they come, or a chat kept
            # open for weeks would lay out (and hold the lines of) more of them on every turn.
            mounted = self.mounted
            await self._unmount(self._leaving(mounted[: _over_limit(mounted, [])], later=False))
        self._show_counts()
        self.anchor()
        # A new message from an older page starts a short window at the end, mounted after the
        # window was placed: look for its edges now that it holds something, and once laid out.
        self._maybe_ask()
        self.call_after_refresh(self._maybe_ask)
        return view

    def _following(self) -> bool:
        """Whether the view is on the end, or anchored there and due back as a reply grows.

        Textual keeps an anchor that the user has not scrolled away from as a private flag; a
        page coming in above while a growing reply had the view a few lines off the end took
        it for the user's own scroll, and the view stopped following the reply.
        """
        released = getattr(self, "_anchor_released", True)
        return self.is_vertical_scroll_end or (self.is_anchored and not released)

    @property
    def paging(self) -> bool:
        """Whether a page has been asked for, or shown, and is not in place yet (a page shown
        may ask for the next as soon as it is placed)."""
        return self._asked is not None or self._placing

    # --- paging ----------------------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value != old_value:
            self._maybe_ask("earlier" if new_value < old_value else "later")

    def page(self, *, up: bool) -> None:
        """Scroll a screenful up or down (PageUp, PageDown), asking for the next page at an edge:
        there the scroll changes nothing, and nothing else would ask."""
        if up:
            self.scroll_page_up(animate=False)
        else:
            self.scroll_page_down(animate=False)
        self._maybe_ask("earlier" if up else "later")

    def action_page_up(self) -> None:  # the list's own keys, with a message focused
        self.page(up=True)

    def action_page_down(self) -> None:
        self.page(up=False)

    def action_scroll_up(self) -> None:
        super().action_scroll_up()
        self._maybe_ask("earlier")

    def action_scroll_down(self) -> None:
        super().action_scroll_down()
        self._maybe_ask("later")

    def on_mouse_scroll_up(self) -> None:
        self._maybe_ask("earlier")  # as for PageUp: at the edge, the wheel scrolls nothing

    def on_mouse_scroll_down(self) -> None:
        self._maybe_ask("later")

    def on_resize(self) -> None:
        self._maybe_ask()

    def _maybe_ask(self, toward: Direction | None = None) -> None:
        """Ask for the next page when the view nears an edge with more stored beyond it: the
        edge it moves ``toward``, or either.

        Only toward where it moves: with short messages, a page can be taller than what lies
        between the two edges, so the view a page from one side leaves is near the other edge,
        and the list paged up and down by itself for as long as it was shown.
        """
        if self._asked is not None or self._placing or not self._views:
            return
        mounted = self.mounted
        if toward != "later" and self._earlier and self.scroll_y <= EDGE_LINES:
            self._ask("earlier", mounted[0].message.id)
        elif toward != "earlier" and self._later and self.max_scroll_y - self.scroll_y <= EDGE_LINES:
            self._ask("later", mounted[-1].message.id)

    def _ask(self, direction: Direction, beyond: int) -> None:
        self._asked = self.NeedsMore(direction, beyond)
        self.post_message(self._asked)

    def page_failed(self, asked: NeedsMore) -> None:
        """The page ``asked`` for could not be read: ask again when the user scrolls again."""
        if asked is self._asked:
            self._asked = None

    def _restore(self, keep: Widget, offset: float | None, mounted_at: float) -> None:
        """Once a page is laid out, put ``keep`` back ``offset`` lines below the view's top, or
        the view back on the end (``offset`` None): where it was when the page was mounted."""
        if offset is None:
            # Unless the user scrolled up meanwhile: the end would undo that scroll (and a scroll
            # to the top that asks for no page). A view the layout pulled up is still at the end.
            if self.scroll_y >= min(mounted_at, self.max_scroll_y):
                self.scroll_end(animate=False, immediate=True, force=True)
        elif keep.is_attached:
            # Forced: right after a page is mounted, Textual may not have decided yet that the
            # list has a scrollbar, and would ignore the scroll otherwise.
            self.scroll_to(y=keep.virtual_region.y - offset, animate=False, immediate=True, force=True)
        came, self._asked = self._asked, None
        self._maybe_ask(
            came.direction if came is not None else None
        )  # still at that edge (a short page): the next one


def _over_limit(mounted: Sequence[MessageView], coming: Sequence[MessageView]) -> int:
    """How many of ``mounted`` must go for ``coming`` to fit within :data:`MOUNTED_LIMIT`."""
    return max(0, len(mounted) + len(coming) - MOUNTED_LIMIT)


def _shown(message: StoredMessage) -> bool:
    return message.status != MessageStatus.SUPERSEDED
