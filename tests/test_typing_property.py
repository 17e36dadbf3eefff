"""The property behind "typing is always typing" (issue 32): whatever ordinary keys the user types,
at whatever moment (a reply streaming, consent becoming due, F4/F5/F6 or a "why?" dialog open, a
search hit focusing a message, the panel focused), the ledger holds no user action but keep
answers, and every message typed is in the store or still in the composer.

Tab and Shift+Tab move the focus in the chat only: in a dialog, Tab to a button that is not the
safe one is how the user deliberately chooses it (see tui/screens/consent.py).

One app runs through every example (on its own thread and loop, driven by Pilot): an app per
example would take minutes. Each example goes on from the state the last one left.
"""

from __future__ import annotations

import asyncio
import os
import string
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from textual import events
from textual.pilot import Pilot

from tests.apphelpers import app_on_fake_model, stored_messages, wait_for
from tests.fake_openai import FakeOpenAIServer
from tests.test_typing import WINDOW, not_keep, until_heedful_asks, user_actions
from tui.app import HeedfulApp
from tui.screens.chat import ChatScreen
from tui.screens.chat_host import LOAD_GROUP

ALPHABET = string.ascii_letters + string.digits + " .,;:!?'\"()-_/[]{}@#$%&*+=<>|~`^\\"
"""Ordinary keys: letters, digits, space and punctuation (Enter is added between segments)."""

NOTE = "the shed roof leaks near the window and the gutter is full of leaves again. " * 6
"""A long message, pasted: with a 1,200-token window, a few of them and Heedful has to ask."""


@dataclass(frozen=True)
class Typing:
    segments: tuple[tuple[str, bool], ...]
    """Text, and whether Enter is pressed after it."""
    burst: bool
    """Delivered as a terminal reads fast typing: every key queued at once (so some are read
    before a dialog that one of them raised is on screen)."""


@dataclass(frozen=True)
class Act:
    kind: str
    """A key that is not typing (f4, f5, f6, escape, tab, shift+tab), "hit" (a search hit opens the
    session focused on a message), or "paste" (a long message pasted, then Enter)."""
    pick: int = 0


segment = st.tuples(
    st.builds(
        lambda first, rest: first + rest,
        st.sampled_from(string.ascii_letters),
        st.text(ALPHABET, max_size=14),
    ),
    st.booleans(),
)
typing = st.builds(Typing, st.lists(segment, min_size=1, max_size=3).map(tuple), st.booleans())
acts = st.builds(
    Act,
    st.sampled_from(["f4", "f5", "f6", "escape", "tab", "shift+tab", "hit", "paste", "paste"]),
    st.integers(0, 99),
)
scripts = st.lists(st.one_of(typing, typing, acts), min_size=1, max_size=4)


class RunningApp:
    """The app, running on a thread of its own: :meth:`run` hands its loop a coroutine to await
    where a Pilot test would (inside ``run_test``, in the app's context)."""

    def __init__(self, app: HeedfulApp) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self._jobs: asyncio.Queue[tuple[Callable[[Pilot[None]], Awaitable[object]], Future[object]] | None]
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, daemon=True)

    def _main(self) -> None:
        self.loop.run_until_complete(self._host())

    async def _host(self) -> None:
        self._jobs = asyncio.Queue()
        async with self.app.run_test(size=(120, 40)) as pilot:
            self._ready.set()
            while (job := await self._jobs.get()) is not None:
                work, done = job
                try:
                    done.set_result(await work(pilot))
                except BaseException as error:  # the test's thread raises it
                    done.set_exception(error)

    def __enter__(self) -> RunningApp:
        self._thread.start()
        assert self._ready.wait(30), "the app did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self._jobs.put_nowait, None)
        self._thread.join(30)

    def run(self, work: Callable[[Pilot[None]], Awaitable[object]]) -> object:
        done: Future[object] = Future()
        self.loop.call_soon_threadsafe(self._jobs.put_nowait, (work, done))
        return done.result(timeout=180)


def key_name(character: str) -> str:
    from textual.keys import _character_to_key

    return _character_to_key(character) if len(character) == 1 else character


async def settle(pilot: Pilot[None], app: HeedfulApp) -> None:
    screen = app.screen_stack[1]
    await wait_for(
        pilot,
        lambda: (
            screen.settled  # type: ignore[attr-defined]
            and not any(not w.is_finished for w in screen.workers if w.group in (LOAD_GROUP, "context"))
        ),
        60,
    )
    await pilot.pause()


async def carry_out(pilot: Pilot[None], app: HeedfulApp, step: Typing | Act, typed: list[str]) -> None:
    screen = next(s for s in app.screen_stack if isinstance(s, ChatScreen))  # perhaps under a dialog
    if isinstance(step, Typing):
        keys: list[str] = []
        for text, enter in step.segments:
            typed.append(text)
            keys.extend(key_name(c) for c in text)
            keys.extend(["enter"] if enter else [])
        if step.burst:
            for key in keys:
                character = key if len(key) == 1 else None
                if character is None and key != "enter":
                    character = next(c for c in ALPHABET if key_name(c) == key)
                app.post_message(events.Key(key, character))
            await pilot.pause()
        else:
            await pilot.press(*keys)
    elif step.kind == "paste":
        text = f"Note {len(typed)}: {NOTE}"
        typed.append(text)
        app.post_message(events.Paste(text))
        await pilot.pause()
        await pilot.press("enter")
    elif step.kind == "hit":
        session = screen.session
        if session is None or app.screen is not screen:
            return  # a search hit is picked on the sessions screen, over the chat only
        users = [m for m in stored_messages() if m.role == "user" and m.session_id == session.id]
        if users:
            screen.open_session(session.id, at_message=users[step.pick % len(users)].id)
            await settle(pilot, app)
    elif step.kind in ("tab", "shift+tab") and app.screen is not screen:
        return  # in a dialog, Tab is how the user deliberately picks a button that is not the safe one
    else:
        await pilot.press(step.kind)


EXAMPLES = int(os.environ.get("TYPING_EXAMPLES", "40"))
"""About a second each on a quiet machine; more for a deeper run (README, Development), which
also draws new scripts: the suite's are the same each run."""


@pytest.mark.timeout(120 + 10 * EXAMPLES)
def test_no_ordinary_keys_ever_act_for_the_user_and_every_typed_message_is_kept(
    fake_server: FakeOpenAIServer,
) -> None:
    typed: list[str] = []
    with RunningApp(app_on_fake_model(fake_server, WINDOW, "Noted.")) as running:
        app = running.app

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            phases=[Phase.generate],  # each example goes on from the last: shrinking one means nothing
            derandomize="TYPING_EXAMPLES" not in os.environ,  # the suite tries the same scripts each run
            suppress_health_check=list(HealthCheck),
        )
        @given(script=scripts)
        def example(script: list[Typing | Act]) -> None:
            async def play(pilot: Pilot[None]) -> None:
                for step in script:
                    await carry_out(pilot, app, step, typed)
                await settle(pilot, app)

            running.run(play)
            assert not not_keep(user_actions()), "only keep answers, and no message acted on"
            composer = app.screen_stack[1].composer  # type: ignore[attr-defined]
            kept = [m.content for m in stored_messages() if m.role == "user"] + [composer.text]
            lost = [text for text in typed if not any(text in k for k in kept)]
            assert not lost, lost

        # Start where it matters: Heedful has a question about older messages, asked at the next send.
        running.run(lambda pilot: until_heedful_asks(pilot, app))
        example()
        asked = [a for a in user_actions() if a[0] == "consent"]
        assert asked, "Heedful never asked: the property was not tried where it matters"
