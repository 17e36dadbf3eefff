"""A long session on screen: a window of messages is mounted, and pages come and go as the user
scrolls; jumps to either end; a new message always lands in view."""

from __future__ import annotations

import contextlib
import gc
import sqlite3
from collections.abc import AsyncIterator

from textual import events
from textual._styles_cache import StylesCache
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static

from sessions import paths
from tests.apphelpers import chat, make_app, make_sessions, refreshed, say, send, views, wait_for
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp
from tui.widgets.message_body import SHOWN_HEAD
from tui.widgets.message_list import MOUNTED_LIMIT, PAGE

COUNT = 300


def texts() -> list[str]:
    return [f"note {n}: the {'orchard' if n % 2 else 'harbour'} log line {n}" for n in range(COUNT)]


def shown_numbers(app: HeedfulApp) -> list[int]:
    return [
        int(v.message.content.split(":")[0].removeprefix("note "))
        for v in views(app)
        if v.message.content.startswith("note ")
    ]


async def opened(pilot: Pilot[None], app: HeedfulApp, last: int = COUNT - 1) -> None:
    await wait_for(pilot, lambda: chat(app).session is not None and last in shown_numbers(app))
    await wait_for(pilot, lambda: chat(app).context is not None)
    await wait_for(pilot, lambda: not chat(app).message_list.paging)  # a short first page asks for one above


@contextlib.asynccontextmanager
async def long_session(size: tuple[int, int] = (100, 30)) -> AsyncIterator[tuple[Pilot[None], HeedfulApp]]:
    """The app on a session of :data:`COUNT` notes, opened on its latest page."""
    make_sessions(("Long", texts()))
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await opened(pilot, app)
        yield pilot, app


def counts_said(app: HeedfulApp) -> list[str]:
    """What the list says of the messages above and below those mounted (the notes shown)."""
    return [str(note.render()) for note in chat(app).message_list.query(".more.-shown")]


def counts_due(app: HeedfulApp) -> list[str]:
    """What it should say: as many earlier and later messages as are not mounted."""
    first, last = shown_numbers(app)[0], shown_numbers(app)[-1]
    due = [f"↑ {first} earlier messages"] if first else []
    return due + ([f"↓ {COUNT - 1 - last} later messages"] if last < COUNT - 1 else [])


async def paging_done(pilot: Pilot[None], app: HeedfulApp) -> None:
    """Wait until the list has no page asked for or being placed, and a frame has been drawn
    since with none asked for: a page's placement (and any scroll the layout makes after it) is
    what would ask for another one by itself."""
    listing = chat(app).message_list
    while True:
        await wait_for(pilot, lambda: not listing.paging)
        await refreshed(pilot, listing)
        if not listing.paging:
            return


async def pages_up(pilot: Pilot[None], app: HeedfulApp) -> AsyncIterator[int]:
    """Scroll to the top of what is mounted until the session's first message is, one page at a
    time; yields the number of the message that was first before each page came in."""
    listing = chat(app).message_list
    for _ in range(200):
        if 0 in shown_numbers(app):
            return
        before = shown_numbers(app)[0]
        listing.scroll_home(animate=False, immediate=True, force=True)
        await wait_for(pilot, lambda b=before: shown_numbers(app)[0] < b and not listing.paging)  # type: ignore[misc]
        yield before


async def test_a_long_session_opens_on_its_latest_page_and_says_how_much_is_above() -> None:
    async with long_session() as (_, app):
        # The latest page, and the one before it where a page of these one-line notes leaves the
        # screen unfilled: whole pages, up to the last message.
        shown = shown_numbers(app)
        assert shown == list(range(COUNT - len(shown), COUNT))
        assert len(shown) % PAGE == 0 and PAGE <= len(shown) <= MOUNTED_LIMIT
        listing = chat(app).message_list
        assert listing.is_vertical_scroll_end
        top = listing.query(".more.-shown").first()
        assert f"{COUNT - len(shown)} earlier messages" in str(top.render())


async def test_scrolling_up_loads_earlier_pages_until_the_first_message_keeping_the_view_still() -> None:
    async with long_session() as (pilot, app):
        listing = chat(app).message_list
        most = 0
        async for before in pages_up(pilot, app):
            # A page went in above, and the view was put back where it was (no longer at the top).
            assert listing.scroll_y > 0
            most = max(most, len(views(app)))
            kept = next(v for v in views(app) if v.message.content.startswith(f"note {before}:"))
            assert 0 <= kept.virtual_region.y - listing.scroll_y < listing.scrollable_content_region.height
            said, due = counts_said(app), counts_due(app)
            assert len(said) == len(due) and all(s.startswith(d) for s, d in zip(said, due, strict=True))
        assert 0 in shown_numbers(app)
        assert most <= MOUNTED_LIMIT  # the far end went as the top came in
        assert COUNT - 1 not in shown_numbers(app)

        # Back down: later pages come back as the user scrolls to the end.
        for _ in range(200):
            if COUNT - 1 in shown_numbers(app):
                break
            after = shown_numbers(app)[-1]
            listing.scroll_end(animate=False, immediate=True, force=True)
            await wait_for(pilot, lambda a=after: shown_numbers(app)[-1] > a and not listing.paging)  # type: ignore[misc]
            said, due = counts_said(app), counts_due(app)
            assert len(said) == len(due) and all(s.startswith(d) for s, d in zip(said, due, strict=True))
        assert COUNT - 1 in shown_numbers(app)
        assert len(views(app)) <= MOUNTED_LIMIT


async def test_messages_scrolled_away_leave_none_of_their_drawn_lines_behind() -> None:
    # Textual kept the style caches of its last 1,024 widgets alive, every line each had drawn,
    # after the widgets were gone (textual#6665): memory grew with every page scrolled.
    async with long_session() as (pilot, app):
        async for _ in pages_up(pilot, app):
            pass
        gc.collect()
        alive = gc.get_objects()
        owned = {id(w._styles_cache) for w in alive if isinstance(w, Widget)}
        left = [c for c in alive if isinstance(c, StylesCache) and id(c) not in owned and c._cache]
        assert COUNT - PAGE > MOUNTED_LIMIT  # pages did go
        assert left == []


async def test_turns_keep_the_window_of_mounted_messages() -> None:
    # Each turn adds two messages at the end: without a limit, a chat kept open for weeks would
    # lay out every one of them on every turn.
    async with long_session() as (pilot, app):
        turns = (MOUNTED_LIMIT - PAGE) // 2 + 1
        for n in range(turns):
            await say(pilot, app, f"and now {n}?", keep=True)  # the budget is long spent
        assert len(views(app)) == MOUNTED_LIMIT
        assert views(app)[-2].message.content == f"and now {turns - 1}?"
        assert views(app)[-1].message.is_reply
        first = COUNT - PAGE + 2  # one turn's two messages more than fitted: the oldest two went
        assert shown_numbers(app)[0] == first
        top = chat(app).message_list.query(".more.-shown").first()
        assert f"{first} earlier messages" in str(top.render())
        async for _ in pages_up(pilot, app):  # they come back as the user scrolls up
            pass
        assert 0 in shown_numbers(app)


async def test_a_settled_turn_leaves_its_writes_in_the_database_file_not_only_in_its_log() -> None:
    # SQLite copies its write-ahead log into the file by itself only once the log passes 1,000
    # pages, in whichever commit takes it there: in a long session, ~20 ms of a turn's planning.
    # Copied while the app waits for the user, the log rarely gets that long.
    async with long_session() as (pilot, app):
        await say(pilot, app, "what did the harbour log say?")
        await wait_for(pilot, lambda: chat(app).settled)
        # Read as the file alone has it (immutable: SQLite does not look at the log).
        file_only = sqlite3.connect(f"file:{paths.database_path()}?immutable=1", uri=True)
        try:
            found = file_only.execute(
                "SELECT count(*) FROM messages WHERE content = 'what did the harbour log say?'"
            ).fetchone()[0]
        finally:
            file_only.close()
        assert found == 1


async def test_ctrl_home_and_ctrl_end_jump_to_either_end_and_a_new_message_shows_at_the_end() -> None:
    async with long_session() as (pilot, app):
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: shown_numbers(app)[:1] == [0])
        assert chat(app).message_list.scroll_y == 0
        # Messages mounted after the context was shown say where they stand in it too.
        assert all(v.context_item is not None for v in views(app))
        assert "later messages" in str(chat(app).message_list.query(".more.-shown").first().render())
        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: shown_numbers(app)[-1:] == [COUNT - 1])

        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: shown_numbers(app)[:1] == [0])
        # Sending from the start of the session: the conversation's end is shown, with the reply.
        await send(pilot, "and now?")
        # The jump to the end is a page read after the turn: wait for it, not for a fixed time.
        await wait_for(pilot, lambda: views(app)[-2].message.content == "and now?")
        assert views(app)[-1].message.is_reply
        listing = chat(app).message_list
        await wait_for(pilot, lambda: listing.is_vertical_scroll_end)
        assert 0 not in shown_numbers(app)


async def test_a_reply_of_a_megabyte_streams_into_ever_cheaper_bodies_and_is_stored_whole(
    fake_server: FakeOpenAIServer,
) -> None:
    """Markdown while short, plain text past MARKDOWN_LIMIT, its start and a note past SHOWN_LIMIT;
    the whole reply is stored, and reopening the session shows it the same way."""
    line = "Line {n}: the *fox* jumps over the lazy dog, again and again.\n"
    big = "".join(line.format(n=n) for n in range(20_000))[:1_000_000]
    fake_server.reply, fake_server.piece_chars, fake_server.chunk_delay = big, 5_000, 0.02
    kinds: list[str] = []
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: chat(app).context is not None)
        screen = chat(app)
        screen.composer.text = "a very long answer please"
        screen.composer.action_submit()

        def body_kind() -> bool:
            reply = [v for v in views(app) if v.message.role == "assistant"]
            for body in reply[-1:] and reply[-1].query(".body"):  # none while one replaces another
                kind = type(body).__name__
                if not kinds or kinds[-1] != kind:
                    kinds.append(kind)
            return bool(reply) and screen.settled

        await wait_for(pilot, body_kind, 60)
        assert kinds == ["MessageMarkdown", "TextArea", "LaidOutStatic"]
        reply = views(app)[-1]
        shown = str(reply.query_one(".body", Static).render())
        assert shown.startswith("Line 0: the *fox*")  # the start, as text, not as Markdown
        assert f"and {len(big) - SHOWN_HEAD:,} more characters" in shown
        assert reply.message.content == big
        session_id = screen.session.id if screen.session else None
        await screen.open_session(session_id).wait()
        reopened = views(app)[-1]
        assert str(reopened.query_one(".body", Static).render()) == shown


async def test_alt_c_copies_the_sessions_last_reply_even_from_its_first_page() -> None:
    async with long_session() as (pilot, app):
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: shown_numbers(app)[:1] == [0] and not chat(app).message_list.at_latest)
        await pilot.press("alt+c")
        await wait_for(pilot, lambda: app.clipboard == texts()[-1])  # the last reply, not on screen


async def test_a_focused_message_that_goes_hands_the_focus_to_the_composer_not_the_panel() -> None:
    # The panel's keys act on a row (p pins, f forgets now): a sentence typed there after a
    # jump or a scroll took the focused message away would act on whatever row was highlighted.
    async with long_session() as (pilot, app):
        screen = chat(app)
        views(app)[-1].focus()
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: shown_numbers(app)[:1] == [0])
        await wait_for(pilot, lambda: app.focused is screen.composer)

        views(app)[0].focus()  # the session's first message, scrolled away below
        listing = screen.message_list
        for _ in range(2 * MOUNTED_LIMIT // PAGE + 1):
            last = shown_numbers(app)[-1]
            # Laid out first: scrolled to the end of the page before it was laid out, the list stops
            # above the page just mounted, where it asks for no more.
            await refreshed(pilot, listing)
            listing.scroll_end(animate=False, immediate=True, force=True)
            await wait_for(pilot, lambda last=last: shown_numbers(app)[-1] > last and not listing.paging)  # type: ignore[misc]
        assert 0 not in shown_numbers(app)
        await wait_for(pilot, lambda: app.focused is screen.composer)
        await pilot.press(*"pf")
        assert screen.composer.text == "pf"


async def test_page_up_in_the_composer_pages_the_conversation_and_the_list_settles_where_it_stops() -> None:
    async with long_session() as (pilot, app):
        screen = chat(app)
        listing = screen.message_list
        assert app.focused is screen.composer
        first = shown_numbers(app)[0]
        for _ in range(8):  # older pages come in as the view nears the top of what is mounted
            await pilot.press("pageup")
            await wait_for(pilot, lambda: not listing.paging)
            shown = shown_numbers(app)
            # These messages are short: a page is taller than the room between the two edges
            # where a page is asked for, and the list went on paging down and up by itself, from
            # the page's placement on: a frame drawn after it asks for none.
            await refreshed(pilot, listing)
            assert shown_numbers(app) == shown
            assert not listing.paging
        assert shown_numbers(app)[0] < first
        assert app.focused is screen.composer

        # A draft taller than the composer: the keys move through it, and the list stays put.
        screen.composer.text = "\n".join(f"line {n}" for n in range(40))
        await refreshed(pilot, screen.composer)
        at = listing.scroll_y
        await pilot.press("pageup")
        assert screen.composer.cursor_location[0] < 39
        assert listing.scroll_y == at


async def up_to_the_bottom_edge_of_an_earlier_window(pilot: Pilot[None], app: HeedfulApp) -> None:
    """PageUp eight times at 120×40: the last page to come in above leaves the view exactly on
    the bottom edge of what is mounted, with later messages beyond it."""
    for _ in range(8):
        await pilot.press("pageup")
        await paging_done(pilot, app)
    listing = chat(app).message_list
    assert listing.is_vertical_scroll_end
    assert shown_numbers(app)[-1] < COUNT - 1


async def test_page_down_in_the_composer_goes_back_to_the_latest_message() -> None:
    async with long_session(size=(120, 40)) as (pilot, app):
        listing = chat(app).message_list
        await up_to_the_bottom_edge_of_an_earlier_window(pilot, app)
        # A PageDown there scrolls nothing: the list stayed there for good.
        for _ in range(40):
            if shown_numbers(app)[-1] == COUNT - 1 and listing.is_vertical_scroll_end:
                break
            await pilot.press("pagedown")
            await paging_done(pilot, app)
        assert shown_numbers(app)[-1] == COUNT - 1
        assert listing.is_vertical_scroll_end


async def test_the_mouse_wheel_at_the_bottom_edge_of_an_earlier_page_brings_the_later_ones() -> None:
    async with long_session(size=(120, 40)) as (pilot, app):
        listing = chat(app).message_list
        await up_to_the_bottom_edge_of_an_earlier_window(pilot, app)
        for _ in range(300):  # a turn of the wheel scrolls 3 lines; 80 messages of 3 lines lie below
            if shown_numbers(app)[-1] == COUNT - 1 and listing.is_vertical_scroll_end:
                break
            listing.post_message(events.MouseScrollDown(listing, 5, 5, 0, 1, 0, False, False, False))
            await refreshed(pilot, listing)  # the turn of the wheel handled and drawn
            await paging_done(pilot, app)
        assert shown_numbers(app)[-1] == COUNT - 1
        assert listing.is_vertical_scroll_end


async def test_page_down_from_a_search_hit_brings_one_page_not_the_rest_of_the_session() -> None:
    async with long_session(size=(120, 40)) as (pilot, app):
        screen, listing = chat(app), chat(app).message_list
        assert screen.session is not None
        screen.open_session(screen.session.id, at_message=151)  # message ids start at 1: note 150
        await wait_for(pilot, lambda: 150 in shown_numbers(app))
        await paging_done(pilot, app)
        last = shown_numbers(app)[-1]
        assert last < COUNT - 1
        await pilot.press("pagedown")  # on the focused hit
        await wait_for(pilot, lambda: shown_numbers(app)[-1] > last)
        # The message at the top of the view was among those let go below the new page: the
        # view was left on the edge, and page after page came down to the session's end, each
        # asked for as the one before was placed: wait until paging stops.
        await paging_done(pilot, app)
        assert shown_numbers(app)[-1] <= last + PAGE
        assert not listing.paging
