"""The memory screen with Pilot: list, edit, pin, delete; and a new session in the app carrying the
memory section."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from textual.pilot import Pilot
from textual.widgets import Input, Markdown

from engine.memory.memories import Memory, expiry_for
from engine.memory.service import MemoryService
from tests.apphelpers import make_app, opened, option_rows, refreshed, send, views, wait_for
from tui.app import HeedfulApp
from tui.screens.dialogs import ConfirmScreen
from tui.screens.memory import MemoryEditScreen, MemoryScreen

HOSTILE = "[bold red]not markup[/] [@click=app.quit]click[/] \x1b]52;c;aGVsbG8=\x07 done"


def add(service: MemoryService, summary: str, importance: float, age: timedelta, **kw: object) -> Memory:
    when = datetime.now(UTC) - age
    return service.store.add_memory(
        None,
        summary=summary,
        importance=importance,
        now=when,
        expires_at=expiry_for(importance, when),
        **kw,  # type: ignore[arg-type]
    )


def reply_text(app: HeedfulApp) -> str:
    return views(app)[1].query_one(".body", Markdown).source


def stored(app: HeedfulApp, memory_id: int) -> Memory | None:
    return app.services.memory.store.get_memory(memory_id)


async def open_memories(app: HeedfulApp, pilot: Pilot[None], count: int | None) -> MemoryScreen:
    """The memory screen, once it lists ``count`` memories (None: at once)."""
    screen = MemoryScreen(app.services.memory)
    await app.push_screen(screen)
    if count is not None:
        await wait_for(pilot, lambda: len(screen.items) == count)
    return screen


async def open_edit(app: HeedfulApp, pilot: Pilot[None]) -> MemoryEditScreen:
    """Alt+E on the highlighted memory, and its edit dialog once composed."""
    await pilot.press("alt+e")
    return await opened(pilot, app, MemoryEditScreen)


async def escape_to(pilot: Pilot[None], screen: MemoryScreen) -> None:
    """Esc the dialog over ``screen``, and wait for what an answer would have set off: a worker
    of the list's."""
    await pilot.press("escape")
    await wait_for(pilot, lambda: screen.app.screen is screen)
    await refreshed(pilot)
    await wait_for(pilot, lambda: all(w.is_finished for w in screen.workers))


async def test_the_screen_lists_memories_newest_first_as_plain_text() -> None:
    app = make_app()
    old = add(app.services.memory, HOSTILE, 0.9, timedelta(days=2), tags=["postgresql"], topics=["billing"])
    new = add(app.services.memory, "Small talk about the weather.", 0.2, timedelta(hours=1))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_memories(app, pilot, 2)
        first, second = option_rows(screen)
        assert [m.id for m in screen.items] == [new.id, old.id]
        assert "0.20" in first and "expires in" in first and "Small talk" in first
        assert "0.90" in second and "permanent" in second
        # Markup is shown as written, and the escape sequence is made visible, never sent.
        assert "[bold red]not markup[/] [@click=app.quit]click[/]" in second
        assert "\x1b" not in second and "␛]52;c;aGVsbG8=" in second
        assert "tags: postgresql · topics: billing" in second
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, MemoryScreen))


async def test_an_empty_list_says_how_memories_are_made() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_memories(app, pilot, None)
        await wait_for(pilot, lambda: option_rows(screen) and "No memories yet" in option_rows(screen)[0])
        await pilot.press("alt+e", "alt+p", "alt+d")  # nothing to act on: nothing happens
        assert app.screen is screen


async def test_editing_a_memory_changes_its_summary() -> None:
    app = make_app()
    kept = add(app.services.memory, "The user likes tea.", 0.8, timedelta(days=1))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_memories(app, pilot, 1)
        field = (await open_edit(app, pilot)).query_one(Input)
        assert field.value == "The user likes tea."
        field.value = ""
        await pilot.press(*"Coffee, black")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: (m := stored(app, kept.id)) is not None and m.summary == "Coffee, black"
        )
        await wait_for(pilot, lambda: "Coffee, black" in option_rows(screen)[0])


async def test_an_edit_can_be_cancelled_and_cannot_blank_a_memory() -> None:
    app = make_app()
    kept = add(app.services.memory, "The user likes tea.", 0.8, timedelta(days=1))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_memories(app, pilot, 1)
        (await open_edit(app, pilot)).query_one(Input).value = "   "
        await pilot.press("enter")
        assert isinstance(app.screen, MemoryEditScreen)  # still asking
        await escape_to(pilot, screen)
        memory = stored(app, kept.id)
        assert memory is not None and memory.summary == "The user likes tea."


async def test_pinning_and_unpinning_a_memory() -> None:
    app = make_app()
    kept = add(app.services.memory, "Deploys happen on Fridays.", 0.4, timedelta(days=6))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_memories(app, pilot, 1)
        await pilot.press("alt+p")
        await wait_for(pilot, lambda: (m := stored(app, kept.id)) is not None and m.pinned)
        await wait_for(
            pilot, lambda: "📌" in option_rows(screen)[0] and "never expires" in option_rows(screen)[0]
        )
        await pilot.press("alt+p")
        await wait_for(pilot, lambda: (m := stored(app, kept.id)) is not None and not m.pinned)
        memory = stored(app, kept.id)
        assert memory is not None and memory.expires_at is not None
        # Unpinned, the week of a 0.4 memory starts again.
        assert memory.expires_at > datetime.now(UTC) + timedelta(days=6)


async def test_deleting_asks_first() -> None:
    app = make_app()
    keep = add(app.services.memory, "Keep me.", 0.8, timedelta(days=2))
    drop = add(app.services.memory, "Drop me.", 0.8, timedelta(days=1))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_memories(app, pilot, 2)
        await pilot.press("alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await escape_to(pilot, screen)
        assert stored(app, drop.id) is not None

        await pilot.press("alt+d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("alt+y")
        await wait_for(pilot, lambda: stored(app, drop.id) is None)
        await wait_for(pilot, lambda: [m.id for m in screen.items] == [keep.id])
        assert stored(app, keep.id) is not None


async def test_a_new_session_in_the_app_carries_the_memory_section() -> None:
    app = make_app()
    add(app.services.memory, "The user's project is called Heron.", 0.9, timedelta(days=3))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "hello")
        reply = reply_text(app)
        # The offline model reports what it received: the system prompt and the memory section.
        assert "(2 system, 1 from you, 0 replies)" in reply
        session = app.services.store.latest_session()
        assert session is not None
        view = await app.services.turns.preview(session.id)
        (section,) = [m for m in view.messages if m.form == "memory"]
        assert "Heron" in section.content
