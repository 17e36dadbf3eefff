"""The first screen comes before the curation engine: it imports none of it, and what the user
types and sends while the engine loads is kept and sent once it is ready."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import pytest
from textual.pilot import Pilot
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from cli.chat import build_services
from engine.chat import StoredMessage
from sessions.config_file import default_config_text
from tests.apphelpers import chat, make_app, make_sessions, stored_messages, views, wait_for, write_config
from tui import heap
from tui.app import HeedfulApp
from tui.screens.chat import ChatScreen
from tui.widgets.help_footer import HelpFooter

if TYPE_CHECKING:
    from tui.services import EngineServices

NOT_FOR_THE_FIRST_FRAME = (
    "tiktoken",
    "openai",
    "httpx",
    "Stemmer",
    "engine.curation.planning",
    "engine.curation.context_building",
    "engine.entities.extractor",
    "engine.entities.scan",
    "engine.memory.assessment",
    "engine.memory.service",
    "engine.curation.scoring",
    "engine.curation.index",
    "engine.standing.recognise",
    "engine.standing.section",
    "tui.screens.standing",
    "engine.curation.forgetting",
    "engine.curation.session_curation",
    "engine.summaries.offline",
    "engine.curation.session_curations",
    "engine.curation.context_service",
    "engine.turn.service",
    "engine.text.tokens",
    "providers.catalog",
    "providers.openai_chat",
    "pydantic",
    "sessions.config",
    "engine.memory.assessed",
    "importlib.metadata",
    "hashlib",
    "engine.curation.ledger",
    "engine.curation.result",
    "engine.protocols.store",
    "engine.memory.memories",
    "engine.summaries.model",
    "engine.turn.events",
    "engine.text.analysis",
    "sessions.analysis_codec",
    "numpy",
    "wordllama",
    "tokenizers",
    "engine.curation.dense",
    "providers.local_embedder",
    "tui.screens.dialogs",
    "tui.screens.inspect",
    "tui.screens.model_picker",
    "tui.clipboard",
)
"""The tokenizer, the model client, the curation engine, the engine's types for the curation's,
analyses' and memories' records in the store (its parts import them when first used), a turn's
events, the config's validation (pydantic), the embedding model, and the dialogs the chat screen
opens on demand: what the first frame does without."""

KEYMAP_CHECK = ("tui.keys", "tui.screens.consent", "tui.screens.large_message", "engine.curation.consent")
"""What checking a ``[keys]`` table imports (every screen's bindings): a config without one skips it."""

CONFIGS = {
    "no config yet": None,
    "the starter config": default_config_text(),
    "a model of a provider, keys and timeouts": (
        'model = "ollama/llama3.2"\nprofile = "quality"\n[timeouts]\nread = 30\n[keys]\nretry = "ctrl+t"\n'
        '[providers.ollama]\nbase_url = "http://localhost:11434/v1"\nmodels = { "llama3.2" = 131072 }\n'
    ),
}

UP_TO_THE_FIRST_FRAME = """
import asyncio, sys, threading
from cli.chat import build_services
from tui.app import HeedfulApp

services, theme = build_services(env={}, defer_engine=True)
asked, release = threading.Event(), threading.Event()
load = services.load

def held():
    asked.set()  # the app asks for the engine once its first frame is drawn
    release.wait(30)
    return load()

services.load = held
app = HeedfulApp(services, theme=theme)

async def main() -> None:
    async with app.run_test():
        await asyncio.to_thread(asked.wait, 30)
        print(" ".join(sorted(sys.modules)))
        release.set()

asyncio.run(main())
"""


def loaded_modules(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return set(done.stdout.split())


def test_the_modules_the_first_frame_needs_import_no_engine_tokenizer_or_client() -> None:
    loaded = loaded_modules("import sys, cli.main, cli.chat, tui.app\nprint(' '.join(sys.modules))")
    assert sorted(loaded & set(NOT_FOR_THE_FIRST_FRAME)) == []


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_the_app_draws_its_first_frame_before_importing_the_engine(config: str | None) -> None:
    if config is not None:
        write_config(config)
    make_sessions(("earlier", ["where is the config?", "in ~/.config/heedful"]))
    loaded = loaded_modules(UP_TO_THE_FIRST_FRAME)
    assert "textual.app" in loaded  # it did run up to the first frame
    assert sorted(loaded & set(NOT_FOR_THE_FIRST_FRAME)) == []


@pytest.mark.parametrize("config", [None, default_config_text()], ids=["no config yet", "the starter config"])
def test_with_no_keys_configured_the_first_frame_checks_no_keymap(config: str | None) -> None:
    if config is not None:
        write_config(config)
    loaded = loaded_modules(UP_TO_THE_FIRST_FRAME)
    assert "textual.app" in loaded
    assert sorted(loaded & set(KEYMAP_CHECK)) == []


def test_a_first_frame_with_no_reply_to_show_imports_no_markdown() -> None:
    loaded = loaded_modules(UP_TO_THE_FIRST_FRAME)  # a new HOME: the welcome, no session yet
    assert "textual.app" in loaded
    assert sorted(loaded & {"markdown_it", "textual.widgets._markdown", "pygments"}) == []


async def test_the_engine_starts_loading_only_once_a_frame_is_on_the_terminal() -> None:
    """In a real terminal Textual holds updates back until its start-up is over: the engine's
    thread must not start (and compete for the interpreter) before a frame has been drawn for the
    user, nor the context panel's parts be mounted. Held back here as it is there."""
    release = threading.Event()
    app, asked = held_services(release)
    held: list[object] = []
    drawn: list[object] = []
    display = app._display

    def recording(screen: object, renderable: object) -> None:
        if renderable is not None:
            (held if app._batch_count else drawn).append(renderable)
        display(screen, renderable)  # type: ignore[arg-type]

    app._display = recording  # type: ignore[method-assign]
    drawn_when_asked: list[int] = []
    load = app.services.load

    def counted() -> EngineServices:
        drawn_when_asked.append(len(drawn))
        return load()

    app.services.load = counted
    app._begin_batch()  # updates held back, as Textual's start-up does in a terminal
    try:
        async with app.run_test() as pilot:
            await wait_for(pilot, lambda: footer_keys(app) != [])  # the first screen, composed
            await pilot.pause()  # and what follows done: idle
            panel = chat(app).context_panel
            assert not panel.rows.is_mounted  # the first frame does without the context panel
            assert held == [] and drawn == []  # no frame rendered only to be dropped
            app._end_batch()
            await wait_for(pilot, asked.is_set)
            assert drawn_when_asked[0] > 0
            assert panel.rows.is_mounted  # mounted once the first frame is drawn
    finally:
        release.set()


async def test_the_first_frame_written_after_the_start_up_hold_is_the_whole_screen() -> None:
    """Textual rendered frames while its start-up held updates back, dropped them, and then wrote
    only what changed since: the terminal showed the header and the footer over a blank screen
    until a later layout. The first frame written now covers every row."""
    release = threading.Event()
    app, _ = held_services(release)
    drawn: list[object] = []
    display = app._display

    def recording(screen: object, renderable: object) -> None:
        if renderable is not None and not app._batch_count:
            drawn.append(renderable)
        display(screen, renderable)  # type: ignore[arg-type]

    app._display = recording  # type: ignore[method-assign]
    app._begin_batch()
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: footer_keys(app) != [])
            await pilot.pause()
            app._end_batch()
            await wait_for(pilot, lambda: bool(drawn))
            assert rows_written(drawn[0]) == set(range(30))
    finally:
        release.set()


async def test_collections_stay_off_until_the_first_frame_is_written() -> None:
    """`heedful` turns the cyclic collector off for its start-up. It came back on after the first
    refresh, which Textual's start-up hold kept off the terminal, and the first collections (every
    object the start-up made) ran before the user's first frame. Now the collector stays off until
    a frame is written, and the start-up's objects are frozen out of the young collections."""
    release = threading.Event()
    app, _ = held_services(release)
    heap.starting()
    app._begin_batch()
    try:
        async with app.run_test() as pilot:
            await wait_for(pilot, lambda: footer_keys(app) != [])
            await pilot.pause()
            assert not gc.isenabled()  # the first screen is ready, but no frame is written yet
            app._end_batch()
            await wait_for(pilot, app.first_frame.is_set)
            assert gc.isenabled()
            assert gc.get_freeze_count() > 0
    finally:
        release.set()
        gc.enable()
        gc.unfreeze()


def footer_keys(app: HeedfulApp) -> list[FooterKey]:
    screen = app.screen
    return list(screen.query(FooterKey)) if isinstance(screen, ChatScreen) else []


def rows_written(renderable: object) -> set[int]:
    """The screen rows a frame writes: a layout update's region, a partial update's spans."""
    spans = getattr(renderable, "spans", None)
    if spans is not None:
        return {y for y, _, _ in spans}
    region = renderable.region  # type: ignore[attr-defined]
    return set(range(region.y, region.bottom))


@asynccontextmanager
async def engine_held() -> AsyncIterator[tuple[HeedfulApp, Pilot[None], ChatScreen, threading.Event]]:
    """The app running with its engine held back, once it asked for the engine: the app, Pilot,
    the chat screen, and the event that lets the engine load (set at the end, whatever happens)."""
    release = threading.Event()
    app, asked = held_services(release)
    try:
        async with app.run_test() as pilot:
            await wait_for(pilot, asked.is_set)
            screen = app.screen
            assert isinstance(screen, ChatScreen)
            yield app, pilot, screen, release
    finally:
        release.set()


def held_services(release: threading.Event) -> tuple[HeedfulApp, threading.Event]:
    """The app as `heedful` starts it, its engine held back until ``release`` is set; and an event
    set when the app asks for the engine."""
    services, theme = build_services(env={}, defer_engine=True)
    asked = threading.Event()
    load = services.load

    def held() -> EngineServices:
        asked.set()
        release.wait(30)
        return load()

    services.load = held
    return HeedfulApp(services, theme=theme), asked


async def test_what_is_typed_and_sent_while_the_engine_loads_is_kept_and_sent_once_it_is_ready() -> None:
    make_sessions(("earlier", ["where is the config?", "in ~/.config/heedful"]))
    async with engine_held() as (app, pilot, screen, release):
        # The first screen: the latest page, the badge, the composer (focused) and the footer.
        assert [v.message.content for v in views(app)] == ["where is the config?", "in ~/.config/heedful"]
        assert "offline model" in str(screen.header.query_one("#header-model").render())
        assert screen.composer.has_focus and screen.query_one(Footer).is_mounted
        assert not app.services.ready

        await pilot.press(*"and the data?")
        assert screen.composer.text == "and the data?"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "still loading" in str(screen.draft_hint.render()))
        assert screen.composer.text == "and the data?"  # kept until it is sent
        assert [m.content for m in stored_messages()][-1] == "in ~/.config/heedful"

        release.set()
        await wait_for(pilot, lambda: len(views(app)) == 4 and screen.settled)
        sent: StoredMessage = views(app)[2].message
        assert (sent.role, sent.content) == ("user", "and the data?")
        assert [m.content for m in stored_messages()][2] == "and the data?"
        assert screen.composer.text == ""
        assert not screen.draft_hint.display


async def test_a_message_stopped_while_the_engine_loads_stays_in_the_composer() -> None:
    async with engine_held() as (_, pilot, screen, release):
        await pilot.press(*"not yet")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.busy)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.busy)
        assert screen.composer.text == "not yet"
        assert not screen.draft_hint.display  # no longer announced as waiting
        release.set()
        # The stop stopped the send, not the loading: the panel and the gauge fill in.
        await wait_for(pilot, lambda: screen.context is not None and screen.settled)
        assert stored_messages() == []  # nothing was sent behind the user's back


async def test_the_footer_follows_the_keys_and_is_rebuilt_only_when_they_change() -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.services.ready and chat(app).settled)
        screen = chat(app)

        def keys() -> list[FooterKey]:
            return list(screen.query_one(HelpFooter).query(FooterKey))

        before = keys()
        assert before[0].key == "f1"  # help first
        screen.refresh_bindings()  # as every focus change and many state changes do
        await pilot.pause()
        assert keys() == before  # the same widgets: nothing was composed again
        screen.context_panel.rows.focus()
        await wait_for(pilot, lambda: "Composer" in [k.description for k in keys()])
        screen.composer.focus()
        await wait_for(pilot, lambda: "Composer" not in [k.description for k in keys()])


async def test_the_first_frame_of_a_session_shows_its_latest_message() -> None:
    paragraph = " ".join(f"word{n}" for n in range(60))
    make_sessions(("long", [f"message {n}\n\n{paragraph}\n\n{paragraph}" for n in range(12)]))
    release = threading.Event()
    app, asked = held_services(release)
    at_the_end: list[bool] = []
    display = app._display

    def recording(screen: object, renderable: object) -> None:
        display(screen, renderable)  # type: ignore[arg-type]
        shown = views(app) if isinstance(app.screen, ChatScreen) else []
        if renderable is not None and not app._batch_count and shown:
            listing = chat(app).message_list
            at_the_end.append(listing.scroll_y >= listing.max_scroll_y > 0)

    app._display = recording  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, asked.is_set)
            assert at_the_end[:1] == [True]  # the first frame with messages shows the last one
    finally:
        release.set()
