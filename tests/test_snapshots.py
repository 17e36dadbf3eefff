"""Snapshot tests of the screens. Update with ``pytest --snapshot-update tests/test_snapshots.py``
after an intended change, and look at the new SVGs before committing them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from engine.chat import MessageStatus
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import chat, make_app, refreshed, wait_for, write_config
from tui.app import HeedfulApp
from tui.screens.connect import ConnectScreen
from tui.screens.sessions import SessionsScreen
from tui.widgets.composer import Composer
from tui.widgets.message_list import PAGE

FIXED_TIME = "2026-11-22T09:30:00+00:00"

CONVERSATION = [
    ("user", "The login fails with `JWTError` in auth.py:42 since this morning."),
    (
        "assistant",
        "That error usually means the token's signature did not verify. Check:\n\n"
        "1. `JWT_SECRET` is the same in every process.\n"
        "2. The token is not expired (`exp` claim).\n\n"
        '```python\njwt.decode(token, key, algorithms=["HS256"])\n```',
    ),
    ("user", "It was the secret: staging had an old one. Thanks!"),
]


pytestmark = pytest.mark.usefixtures("utc")


@pytest.fixture(autouse=True)
def quiet_first_run() -> None:
    """An existing config: no "wrote a starter config" toast in the pictures, and no memory: the
    seeded sessions are days old, so opening one would assess it (a toast naming today's date)."""
    write_config("[memory]\nenabled = false\n")


WROTE_IT = "gpt-4o-mini"
"""The seeded replies' model: written by a real model earlier (the offline one writes only
digests, which the engine takes no entities from), shown now with no model connected."""


def seed_conversation(*, failed_reply: bool = False) -> None:
    store = open_store(paths.database_path()).store
    session = store.create_session("Login fails with JWTError")
    for role, content in CONVERSATION:
        store.add_message(session.id, role, content, tokens=len(content) // 4, model=WROTE_IT)  # type: ignore[arg-type]
    if failed_reply:
        reply = store.add_message(session.id, "assistant", "", status=MessageStatus.STREAMING, model=WROTE_IT)
        store.update_message(
            reply.id,
            content="Glad it",
            status=MessageStatus.INTERRUPTED,
            error="The connection dropped in the middle of the reply.",
        )
    store.close()
    with sqlite3.connect(paths.database_path()) as db:
        db.execute("UPDATE messages SET created_at = ?, updated_at = ?", (FIXED_TIME, FIXED_TIME))
        db.execute("UPDATE sessions SET created_at = ?, updated_at = ?", (FIXED_TIME, FIXED_TIME))


def settled(count: int) -> Callable[[Pilot[None]], Any]:
    """Wait until the session's latest page is mounted (``count`` messages at most) and curated."""
    count = min(count, PAGE)

    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, HeedfulApp)
        await wait_for(
            pilot, lambda: len(chat(app).query("MessageView")) == count and chat(app).context is not None
        )
        chat(app).query_one(Composer).cursor_blink = False
        # Twice: the panel's rows are set, then laid out again once their scrollbar shows (a
        # single pause now and then caught the rows cut at their earlier width).
        await pilot.pause()
        await pilot.pause()

    return run_before


def test_first_run_offline(snap_compare: Any) -> None:
    """Empty chat, welcome text, the orange "offline model" badge, the panel counting the system prompt."""
    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=settled(0))


def test_conversation(snap_compare: Any) -> None:
    """A resumed session: user text verbatim, the reply as Markdown with a code block, token counts."""
    seed_conversation()
    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=settled(3))


def test_conversation_wide(snap_compare: Any) -> None:
    """The same at 200×50."""
    seed_conversation()
    assert snap_compare(make_app(), terminal_size=(200, 50), run_before=settled(3))


def test_interrupted_reply(snap_compare: Any) -> None:
    """A cut reply keeps its text, says "interrupted", and offers Ctrl+R."""
    seed_conversation(failed_reply=True)
    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=settled(4))


def test_light_theme(snap_compare: Any) -> None:
    """The conversation in the light theme."""
    seed_conversation()
    app = make_app()

    async def run_before(pilot: Pilot[None]) -> None:
        await settled(3)(pilot)
        app.theme = "heedful-light"
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_sessions_picker(snap_compare: Any) -> None:
    """Ctrl+O over a resumed session: the list with message counts and times."""
    seed_conversation()

    async def run_before(pilot: Pilot[None]) -> None:
        await settled(3)(pilot)
        await pilot.press("ctrl+o")
        await wait_for(
            pilot, lambda: isinstance(pilot.app.screen, SessionsScreen) and bool(pilot.app.screen.sessions)
        )
        await wait_for(pilot, lambda: pilot.app.screen.query_one(OptionList).highlighted is not None)
        await refreshed(pilot)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=run_before)


def test_connect_help(snap_compare: Any) -> None:
    """F3: where the config lives, the env vars, OpenAI and Ollama examples."""

    app = make_app()
    # The real path is a per-test temporary directory; show a stable one in the picture.
    app.services.config_path = Path("/home/you/.config/heedful/config.toml")

    async def run_before(pilot: Pilot[None]) -> None:
        await settled(0)(pilot)
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConnectScreen))
        await refreshed(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


TOPICS = ("billing", "deploy", "garden", "concert", "invoice", "cache", "hiking", "schema")


def seed_long_conversation() -> int:
    """16 turns of long messages: more than the offline model's budget, so the engine must forget
    (its replies) and ask (about the user's messages). Returns the number of messages."""
    store = open_store(paths.database_path()).store
    session = store.create_session("A long week of questions")
    count = 0
    for turn in range(16):
        topic = TOPICS[turn % len(TOPICS)]
        question = f"Question {turn} about the {topic}: " + " ".join(
            f"the {topic} step {n} needs checking before Friday." for n in range(30)
        )
        answer = f"Answer {turn}. " + " ".join(
            f"For the {topic}, item {n} is fine as it is." for n in range(30)
        )
        for role, content in (("user", question), ("assistant", answer)):
            store.add_message(session.id, role, content, tokens=len(content) // 4, model=WROTE_IT)  # type: ignore[arg-type]
            count += 1
    store.close()
    with sqlite3.connect(paths.database_path()) as db:
        db.execute("UPDATE messages SET created_at = ?, updated_at = ?", (FIXED_TIME, FIXED_TIME))
        db.execute("UPDATE sessions SET created_at = ?, updated_at = ?", (FIXED_TIME, FIXED_TIME))
    return count


def test_populated_context_panel(snap_compare: Any) -> None:
    """A session over budget: the next request's picture, then what is sent in full, as summary, or not."""
    count = seed_long_conversation()
    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=settled(count))


def test_populated_context_panel_wide(snap_compare: Any) -> None:
    """The same at 200×50."""
    count = seed_long_conversation()
    assert snap_compare(make_app(), terminal_size=(200, 50), run_before=settled(count))


def opening(count: int, key: str, screen: str, *, row: int | None = None) -> Callable[[Pilot[None]], Any]:
    """Once the seeded session has settled and the panel says its question is open (the picture of
    the next request is in: before it, the panel behind the dialog now and then showed less):
    highlight message ``row`` in the panel (if given), press ``key`` and wait for ``screen``."""

    async def run_before(pilot: Pilot[None]) -> None:
        await settled(count)(pilot)
        app = pilot.app
        assert isinstance(app, HeedfulApp)
        asking = chat(app).context_panel.query_one("#context-asking", Static)
        await wait_for(pilot, lambda: asking.display and "F4 answers" in str(asking.render()))
        await pilot.pause()
        if row is not None:
            await highlight(app, row)
        await pilot.press(key)
        await wait_for(pilot, lambda: type(app.screen).__name__ == screen)
        await pilot.pause()

    return run_before


async def highlight(app: HeedfulApp, item_id: int) -> None:
    rows = chat(app).context_panel.rows
    rows.focus()
    rows.highlighted = rows.get_option_index(f"item-{item_id}")


def test_consent_dialog(snap_compare: Any) -> None:
    """F4: the user's messages the engine would like to summarize or remove, with a choice each."""
    opened = opening(seed_long_conversation(), "f4", "ConsentScreen")

    async def run_before(pilot: Pilot[None]) -> None:
        await opened(pilot)
        await refreshed(pilot)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=run_before)


def test_inspect_screen(snap_compare: Any) -> None:
    """Enter on a pruned reply in the panel: why it is gone, its scores, its text."""
    run_before = opening(seed_long_conversation(), "enter", "InspectScreen", row=2)
    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=run_before)


def test_preview_screen(snap_compare: Any) -> None:
    """F5: exactly what the next request sends."""
    run_before = opening(seed_long_conversation(), "f5", "PreviewScreen")
    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=run_before)


def test_ledger_screen(snap_compare: Any) -> None:
    """F6 after forgetting a message from the panel: the decision and the user's consent, logged."""
    count = seed_long_conversation()

    async def run_before(pilot: Pilot[None]) -> None:
        await settled(count)(pilot)
        app = pilot.app
        assert isinstance(app, HeedfulApp)
        await highlight(app, 1)
        await pilot.press("alt+f")
        await wait_for(pilot, lambda: chat(app).context.item(1).state.value == "pruned")  # type: ignore[union-attr]
        app.clear_notifications()  # the "Forgot #1" toast would time out at any moment
        await opening(count, "f6", "LedgerScreen")(pilot)  # the views stay: nothing is deleted

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=run_before)


def test_high_contrast_theme(snap_compare: Any) -> None:
    """The populated panel in the high-contrast theme."""
    count = seed_long_conversation()
    app = make_app()

    async def run_before(pilot: Pilot[None]) -> None:
        await settled(count)(pilot)
        app.theme = "heedful-high-contrast"
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
