"""The session picker in the real app (Pilot): full-text search across sessions, and delete with undo."""

from __future__ import annotations

import sqlite3
import threading
import time

from textual.content import Content
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from engine.chat import Session
from sessions import paths
from sessions.store import SearchHit, SqliteChatStore, open_store
from tests.apphelpers import chat, make_app, make_sessions, refreshed, toasts, views, wait_for
from tui.app import HeedfulApp
from tui.screens.dialogs import ConfirmScreen
from tui.screens.sessions import SEARCH_DELAY, SessionChoice, SessionsScreen

SESSIONS = (
    ("Cats", ["Biscuit needs her vaccine before Tuesday.", "Book the vet for the vaccine."]),
    ("Deploy", ["The flux capacitor failed in [bold]auth.py[/bold]:42", "Check the flux settings."]),
    ("Hiking", ["Mount Rainier on 14 August, about 18 km.", "Bring water."]),
)


def picker(app: HeedfulApp) -> SessionsScreen:
    screen = app.screen
    assert isinstance(screen, SessionsScreen), screen
    return screen


def rows(screen: SessionsScreen) -> list[Content]:
    options = screen.query_one(OptionList)
    prompts = [options.get_option_at_index(i).prompt for i in range(options.option_count)]
    assert all(isinstance(p, Content) for p in prompts)
    return [p for p in prompts if isinstance(p, Content)]


async def open_picker(pilot: Pilot[None], app: HeedfulApp, count: int) -> SessionsScreen:
    await pilot.press("ctrl+o")
    await wait_for(
        pilot, lambda: isinstance(app.screen, SessionsScreen) and len(app.screen.sessions) == count
    )
    return picker(app)


async def search(pilot: Pilot[None], screen: SessionsScreen, words: str, hits: int) -> None:
    """Type ``words`` into the picker's search (after its /) and wait for ``hits`` messages found."""
    await pilot.press("slash", *words)
    await wait_for(pilot, lambda: screen.hits is not None and len(screen.hits) == hits)


async def test_search_lists_matching_messages_and_enter_opens_that_session() -> None:
    ids = make_sessions(*SESSIONS)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: chat(app).session is not None and len(views(app)) == 2)
        assert chat(app).session.id == ids["Hiking"]  # type: ignore[union-attr]
        screen = await open_picker(pilot, app, 3)
        await pilot.press("slash")
        assert screen.query_one("#session-search", Input).has_focus
        await pilot.press(*"vaccine")
        await wait_for(pilot, lambda: screen.hits is not None and len(screen.hits) == 2)
        shown = rows(screen)
        assert all(row.plain.startswith("  Cats · ") for row in shown)
        assert "Biscuit needs her vaccine before Tuesday." in shown[0].plain + shown[1].plain
        marked = [
            row.plain[span.start : span.end]
            for row in shown
            for span in row.spans
            if "reverse" in str(span.style)
        ]
        assert marked == ["vaccine", "vaccine"]
        await pilot.press("enter")  # from the search box: opens the best hit
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionsScreen))
        await wait_for(pilot, lambda: chat(app).session is not None and chat(app).session.id == ids["Cats"])  # type: ignore[union-attr]


async def test_the_picker_answers_with_the_session_and_the_message_that_matched() -> None:
    ids = make_sessions(*SESSIONS)
    app = make_app()
    answers: list[int | None] = []
    async with app.run_test(size=(100, 30)) as pilot:
        store = app.services.store
        await app.push_screen(SessionsScreen(store, current=None), answers.append)
        screen = picker(app)
        await wait_for(pilot, lambda: len(screen.sessions) == 3)
        await search(pilot, screen, "flux settings", 1)
        await pilot.press("down", "enter")  # into the list, then open the highlighted hit
        await wait_for(pilot, lambda: answers != [])
    (answer,) = answers
    wanted = store.messages(ids["Deploy"])[1]
    assert isinstance(answer, SessionChoice)
    assert (answer, answer.session_id, answer.message_id) == (ids["Deploy"], ids["Deploy"], wanted.id)


async def test_search_waits_for_typing_to_pause_and_runs_off_the_event_loop() -> None:
    make_sessions(*SESSIONS)
    app = make_app()
    calls: list[tuple[str, float, bool]] = []
    typed: dict[int, float] = {}  # each change once (the hook sees it at every node it bubbles through)

    def hook(message: Message) -> None:
        if isinstance(message, Input.Changed) and message.input.id == "session-search":
            typed.setdefault(id(message), time.monotonic())

    async with app.run_test(size=(100, 30), message_hook=hook) as pilot:
        store = app.services.store
        assert isinstance(store, SqliteChatStore)
        real_search = store.search

        def recording(query: str, limit: int = 50) -> list[SearchHit]:
            calls.append((query, time.monotonic(), threading.current_thread() is threading.main_thread()))
            return real_search(query, limit)

        store.search = recording  # type: ignore[method-assign]
        screen = await open_picker(pilot, app, 3)
        await search(pilot, screen, "flux", 2)
        await pilot.pause(SEARCH_DELAY * 2)
    assert len(typed) == 4
    assert [query for query, _, _ in calls] == ["flux"]  # one search, for the whole word
    ((_, when, on_loop),) = calls
    assert when - max(typed.values()) >= SEARCH_DELAY * 0.9  # after the pause, not at each key
    assert not on_loop


async def test_a_query_in_fts_syntax_or_markup_is_only_text() -> None:
    make_sessions(*SESSIONS)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(pilot, app, 3)
        await pilot.press("slash", *'"foo AND (')
        await wait_for(pilot, lambda: screen.hits == [])
        assert [row.plain for row in rows(screen)] == ['No message matches “"foo AND (”.']
        search = screen.query_one("#session-search", Input)
        search.value = "[bold]auth"
        await wait_for(pilot, lambda: screen.hits is not None and len(screen.hits) == 1)
        assert "[bold]auth.py[/bold]:42" in rows(screen)[0].plain  # the message's brackets, shown as typed


async def test_escape_clears_the_search_then_closes() -> None:
    make_sessions(*SESSIONS)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(pilot, app, 3)
        await search(pilot, screen, "bring", 1)
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen.hits is None and len(rows(screen)) == 3)
        assert screen.query_one("#session-search", Input).value == ""
        assert app.screen is screen
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is not screen)


async def test_a_deleted_session_comes_back_with_u_until_the_app_closes() -> None:
    ids = make_sessions(("keep", ["stay"]), ("gone", ["secret words"]))
    app = make_app()
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        screen = await open_picker(pilot, app, 2)
        assert screen.sessions[0].id == ids["gone"]  # the latest first, and highlighted: it is open
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("alt+y")
        await wait_for(pilot, lambda: [s.title for s in screen.sessions] == ["keep"])
        await wait_for(pilot, lambda: any("Press u to bring it back" in t for t in toasts(app)))
        assert [s.title for s in app.services.store.list_sessions()] == ["keep"]
        assert isinstance(app.services.store, SqliteChatStore)
        assert app.services.store.search("secret") == []

        await pilot.press("alt+u")
        await wait_for(pilot, lambda: [s.title for s in screen.sessions] == ["gone", "keep"])
        assert any("Brought back “gone”" in t for t in toasts(app))

        # Delete it again and close the picker: the undo still works from the next one.
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("alt+y")
        await wait_for(pilot, lambda: len(screen.sessions) == 1)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionsScreen))
        # The open session was the deleted one: the chat shows a new one.
        await wait_for(pilot, lambda: chat(app).session is None and views(app) == [])
        screen = await open_picker(pilot, app, 1)
        await pilot.press("alt+u")
        await wait_for(pilot, lambda: len(screen.sessions) == 2)
        await pilot.press("alt+u")
        await wait_for(pilot, lambda: any("no deleted session" in t for t in toasts(app)))

        # Deleted once more, then the app quits: now it is gone for good.
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("alt+y")
        await wait_for(pilot, lambda: len(screen.sessions) == 1)
    app.services.store.close()  # as `heedful` does when the app exits
    conn = sqlite3.connect(paths.database_path())
    try:
        assert conn.execute("SELECT title FROM sessions").fetchall() == [("keep",)]
        assert conn.execute("SELECT content FROM messages").fetchall() == [("stay",)]
    finally:
        conn.close()


async def test_rename_still_works_on_a_search_hit() -> None:
    ids = make_sessions(*SESSIONS)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_picker(pilot, app, 3)
        await search(pilot, screen, "vet", 1)
        await pilot.press("down", "alt+r", *"Vet visits", "enter")
        await wait_for(pilot, lambda: any(s.title == "Vet visits" for s in screen.sessions))
        renamed: Session | None = app.services.store.get_session(ids["Cats"])
        assert renamed is not None and renamed.title == "Vet visits"
        assert screen.hits is not None and screen.hits[0].session_title == "Vet visits"


async def test_a_search_hit_in_a_long_session_opens_scrolled_to_that_message() -> None:
    texts = [f"routine note number {n} about nothing much" for n in range(150)]
    texts[10] = "the zeppelin hangar key is under the blue mat"
    ids = make_sessions(("Long", texts), ("Other", ["hello", "hi"]))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: chat(app).session is not None and chat(app).session.id == ids["Other"])  # type: ignore[union-attr]
        screen = await open_picker(pilot, app, 2)
        await search(pilot, screen, "zeppelin", 1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: chat(app).session is not None and chat(app).session.id == ids["Long"])  # type: ignore[union-attr]
        # Message 11 of 150 is far older than the latest page shown on opening: it is mounted anyway,
        # focused, and on screen.
        await wait_for(pilot, lambda: any("zeppelin" in v.message.content for v in views(app)))
        target = next(v for v in views(app) if "zeppelin" in v.message.content)
        await wait_for(pilot, lambda: app.focused is target)
        listing = chat(app).message_list
        await wait_for(pilot, lambda: not listing.paging)  # scrolled into place
        await refreshed(pilot, listing)
        assert listing.region.contains_region(target.region) or target.region.y < listing.region.bottom
        assert target.region.y >= listing.region.y


async def test_while_an_opened_session_is_counted_the_panel_shows_none_of_the_last_ones_rows() -> None:
    ids = make_sessions(*SESSIONS)
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.context is not None and screen.settled)
        panel = screen.context_panel
        hiking = {item.id for item in screen.context.items}  # type: ignore[union-attr]
        assert {option.id for option in panel.rows.options} >= {f"item-{i}" for i in hiking}
        # Counting the opened session waits for the curation (as a long session's does).
        curations = app.services.turns.curations
        with curations.held(ids["Cats"]):
            screen.open_session(ids["Cats"])
            await wait_for(pilot, lambda: screen.session is not None and screen.session.id == ids["Cats"])
            # Its messages shown and drawn: all the opening does until the curation is free.
            await wait_for(pilot, lambda: any("Biscuit" in v.message.content for v in views(app)))
            await refreshed(pilot)
            assert screen.context is None
            assert panel.rows.option_count == 0
            assert "counting" in str(panel.query_one("#context-total").render())
        await wait_for(pilot, lambda: screen.context is not None and screen.settled)
        assert screen.context is not None
        cats = {item.id for item in screen.context.items}
        assert cats and not cats & hiking
        assert {option.id for option in panel.rows.options} >= {f"item-{i}" for i in cats}


async def test_the_app_opens_on_the_session_it_showed_when_it_closed() -> None:
    """Not the latest one written to: the user was reading an older one."""
    ids = make_sessions(*SESSIONS)  # Hiking is the latest
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = chat(app)
        await wait_for(pilot, lambda: screen.session is not None and screen.settled)
        assert screen.session is not None and screen.session.id == ids["Hiking"]
        screen.open_session(ids["Cats"])
        # Its context counted: the session was noted as the one on screen before that.
        await wait_for(pilot, lambda: screen.session is not None and screen.session.id == ids["Cats"])
        await wait_for(pilot, lambda: screen.context is not None and screen.settled)
    again = make_app()
    async with again.run_test(size=(120, 30)) as pilot:
        screen = chat(again)
        await wait_for(pilot, lambda: screen.session is not None and screen.settled)
        assert screen.session is not None and screen.session.id == ids["Cats"]
    # Deleted since (from another window, say): the latest one instead.
    store = open_store(paths.database_path()).store
    try:
        store.delete_session(ids["Cats"])
    finally:
        store.close()
    last = make_app()
    async with last.run_test(size=(120, 30)) as pilot:
        screen = chat(last)
        await wait_for(pilot, lambda: screen.session is not None and screen.settled)
        assert screen.session is not None and screen.session.id == ids["Hiking"]
