"""The message list on its own, in a bare app, where the moment a page comes in relative to a
streaming reply's growth can be set exactly (in the whole app it is a race between threads)."""

from __future__ import annotations

from datetime import UTC, datetime

from textual.app import App, ComposeResult
from textual.content import Content

from engine.chat import MessagePage, MessageStatus, StoredMessage
from tests.apphelpers import wait_for
from themes import DEFAULT_THEME, THEMES
from tui.widgets.message_list import EDGE_LINES, PAGE, MessageList


def message(n: int, role: str = "user", content: str | None = None) -> StoredMessage:
    return StoredMessage(
        id=n,
        session_id=1,
        role="assistant" if role == "assistant" else "user",
        content=f"note {n}" if content is None else content,
        status=MessageStatus.COMPLETE,
        created_at=datetime(2026, 11, 26, tzinfo=UTC),
    )


class ListHost(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[MessageList.NeedsMore] = []
        for theme in THEMES:
            self.register_theme(theme)
        self.theme = DEFAULT_THEME

    def compose(self) -> ComposeResult:
        yield MessageList(Content("welcome"))

    def on_message_list_needs_more(self, event: MessageList.NeedsMore) -> None:
        self.asked.append(event)


async def test_a_page_coming_in_above_a_followed_reply_keeps_the_view_on_its_growing_end() -> None:
    """A new message after a jump starts a short window at the end, which asks for the page before
    it. If the reply grows while that page is laid out, the view must still follow the reply."""
    app = ListHost()
    async with app.run_test(size=(60, 20)) as pilot:
        listing = app.query_one(MessageList)
        first = PAGE + 100
        await listing.show(MessagePage([message(first, "assistant", "the reply starts")], first, 0))
        await pilot.pause()
        reply = listing.view_for(first)
        assert reply is not None
        # Just taller than the view: at its end, and near its top, where the page above is asked for.
        while listing.max_scroll_y == 0:
            await reply.write("\n\nmore of the reply")
            await reply.close_stream()
            await pilot.pause()
        assert listing.is_vertical_scroll_end and listing.max_scroll_y <= EDGE_LINES
        assert [event.direction for event in app.asked] == ["earlier"]

        older = [message(n) for n in range(first - PAGE, first)]
        await listing.extend(app.asked[-1], MessagePage(older, first - PAGE, 1))
        # The reply grows in the same frame as the page is laid out.
        await reply.write("".join(f"\n\nline {n}" for n in range(10)))
        await reply.close_stream()
        await pilot.pause()
        assert listing.is_vertical_scroll_end
        assert listing.view_for(first - PAGE) is not None

        await reply.write("".join(f"\n\nlater line {n}" for n in range(10)))
        await reply.close_stream()
        await pilot.pause()
        assert listing.is_vertical_scroll_end


async def test_scrolling_up_while_a_page_above_is_laid_out_is_not_undone() -> None:
    """A view on the end asks for the page above; the user scrolls to the top before that page is
    laid out. Putting the view back on the end would undo the scroll, and the top it reached would
    ask for nothing more."""
    app = ListHost()
    async with app.run_test(size=(60, 30)) as pilot:
        listing = app.query_one(MessageList)
        first = 3 * PAGE
        latest = [message(n) for n in range(first, first + PAGE)]
        await listing.show(MessagePage(latest, first, 0))
        await wait_for(pilot, lambda: app.asked)  # placed on the end, near the top: the page above
        assert listing.is_vertical_scroll_end and listing.max_scroll_y <= EDGE_LINES
        assert [event.direction for event in app.asked] == ["earlier"]

        older = [message(n) for n in range(first - PAGE, first)]
        await listing.extend(app.asked[-1], MessagePage(older, first - PAGE, PAGE))
        listing.scroll_home(animate=False, immediate=True)  # in the same frame as the page's layout
        for _ in range(20):  # until the page is in place and the view settled
            await pilot.pause()
            if len(app.asked) > 1:
                break
        assert not listing.is_vertical_scroll_end
        assert listing.scroll_y <= EDGE_LINES
        # At the top of what is mounted, with more above: the next page is asked for.
        assert [event.direction for event in app.asked] == ["earlier", "earlier"]


async def test_a_page_asked_for_before_a_new_message_started_a_window_at_the_end_is_not_put_after() -> None:
    """The session's first page, shown by Ctrl+Home, asks for the page after it; the user sends
    before it comes. The new message starts a window at the end: the old page must not follow it."""
    app = ListHost()
    async with app.run_test(size=(60, 40)) as pilot:
        listing = app.query_one(MessageList)
        stored = 5 * PAGE
        await listing.show(MessagePage([message(n) for n in range(3)], 0, stored - 3))
        await wait_for(pilot, lambda: app.asked)
        asked = app.asked[-1]
        assert asked.direction == "later"

        await listing.add(message(stored, content="and now?"))
        await listing.extend(
            asked, MessagePage([message(n) for n in range(3, 3 + PAGE)], 3, stored - 3 - PAGE)
        )
        await pilot.pause()
        assert [view.message.content for view in listing.mounted][-1:] == ["and now?"]
        assert listing.at_latest
        # The new window asks for what is before it instead.
        assert app.asked[-1].direction == "earlier" and app.asked[-1].beyond == stored


async def test_a_page_asked_for_above_a_message_that_went_meanwhile_is_dropped() -> None:
    """A new message unmounts the oldest while the page above it is being read: mounted as it
    came, that page would leave a gap where the oldest was. It is dropped, and the next one asked
    for is above the new oldest."""
    app = ListHost()
    async with app.run_test(size=(60, 30)) as pilot:
        listing = app.query_one(MessageList)
        first = 3 * PAGE
        await listing.show(MessagePage([message(n) for n in range(first, first + 2 * PAGE)], first, 0))
        await wait_for(pilot, lambda: not listing.paging)  # placed on the end
        listing.scroll_home(animate=False, immediate=True)
        await wait_for(pilot, lambda: app.asked)
        asked = app.asked[-1]
        assert (asked.direction, asked.beyond) == ("earlier", first)

        await listing.add(message(first + 2 * PAGE, content="and now?"))  # the oldest, #first, goes
        assert listing.view_for(first) is None
        await listing.extend(
            asked, MessagePage([message(n) for n in range(first - PAGE, first)], first - PAGE, 1)
        )
        await pilot.pause()
        assert listing.view_for(first - 1) is None
        assert not listing.paging
        listing.scroll_home(animate=False, immediate=True)
        await wait_for(pilot, lambda: len(app.asked) == 2)
        assert (app.asked[-1].direction, app.asked[-1].beyond) == ("earlier", first + 1)
