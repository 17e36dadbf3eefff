"""Helpers for driving the real app with Pilot."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from textual import events
from textual.message_pump import MessagePump
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import OptionList

from cli.chat import build_services
from engine.chat import StoredMessage
from sessions import paths
from sessions.store import open_store
from tui.app import HeedfulApp
from tui.screens.chat import ChatScreen
from tui.screens.consent import ConsentScreen
from tui.widgets.composer import Composer
from tui.widgets.message_view import MessageView

if TYPE_CHECKING:
    from sessions.store import SqliteChatStore
    from tests.fake_openai import FakeOpenAIServer
    from tui.services import AppServices, EngineServices

Question = TypeVar("Question", bound=Screen[Any])
"""A dialog type :func:`asked` waits for."""
Shown = TypeVar("Shown", bound=Screen[Any])
"""A screen type :func:`opened` waits for."""

Reply = str | Callable[[dict[str, Any]], str]
"""What the fake server answers: a fixed text, or one made from the request's body."""

CURATION_OFF = "\n[curation]\ncurator = false\nmodel_summaries = false\n"


def make_app(
    *,
    base_url: str | None = None,
    model: str | None = None,
    env: dict[str, str] | None = None,
    curation_models: bool = False,
) -> HeedfulApp:
    """The app as `heedful` builds it, against the test's data dir and config (see conftest).

    Args:
        curation_models: Let a connected model advise curation and write summaries (on by default
            in the product). Off unless a test is about them: their requests would take the fake
            server's queued faults and change its request counts.
    """
    if not curation_models:
        _turn_off_curation_models()
    services, theme = build_services(base_url=base_url, model=model, env=env or {})
    return HeedfulApp(services, theme=theme)


@contextlib.contextmanager
def loaded_engine(
    config: str, *, base_url: str | None = None, model: str | None = None
) -> Iterator[tuple[AppServices, EngineServices]]:
    """The services `heedful` builds from a config file holding ``config``, and their engine
    loaded as the app loads it after its first frame; the store is closed on leaving."""
    write_config(config)
    services, _ = build_services(base_url=base_url, model=model, env={}, defer_engine=True)
    try:
        yield services, services.load_engine()
    finally:
        services.store.close()


def _turn_off_curation_models() -> None:
    path = paths.config_path()
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if "[curation]" not in text:
        write_config(text + CURATION_OFF)


def write_config(text: str) -> Path:
    path = paths.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def fake_provider(
    server: FakeOpenAIServer, window: int, *, max_retries: int | None = 0, tables: str = ""
) -> Path:
    """Configure the model "fake/fake-model" on ``server`` with a ``window``-token window, and
    ``max_retries`` (None: the default); ``tables`` are more config tables after the provider's."""
    retries = f"max_retries = {max_retries}\n" if max_retries is not None else ""
    return write_config(
        f'model = "fake/fake-model"\n{retries}[providers.fake]\nbase_url = "{server.base_url}"\n'
        f'models = {{ "fake-model" = {window} }}\n{tables}'
    )


def app_on_fake_model(server: FakeOpenAIServer, window: int, reply: Reply) -> HeedfulApp:
    """The app on ``server``'s model with a ``window``-token window, the model answering ``reply``."""
    fake_provider(server, window)
    server.reply = reply
    return make_app()


@contextlib.asynccontextmanager
async def running_on_fake_model(
    server: FakeOpenAIServer, window: int, reply: Reply, *, notifications: bool = False
) -> AsyncIterator[tuple[HeedfulApp, Pilot[None]]]:
    """:func:`app_on_fake_model`, run by Pilot in a 120×40 terminal."""
    app = app_on_fake_model(server, window, reply)
    async with app.run_test(size=(120, 40), notifications=notifications) as pilot:
        yield app, pilot


async def wait_for(pilot: Pilot[None], predicate: Callable[[], object], seconds: float = 10.0) -> None:
    """Let the app run until ``predicate()`` is true; fail with a clear message after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds}s waiting for {predicate}")
        await pilot.pause(0.02)


async def refreshed(pilot: Pilot[None], node: MessagePump | None = None, seconds: float = 10.0) -> None:
    """Wait until ``node`` (the current screen by default) has handled every message already sent
    to it and the screen has been drawn after them, with no layout or scroll left pending: what
    those messages set going (a scroll, a page asked for, a dialog pushed) has happened by then."""
    done = asyncio.Event()
    (node or pilot.app.screen).call_after_refresh(done.set)
    try:
        await asyncio.wait_for(done.wait(), seconds)
    except TimeoutError:
        raise AssertionError(f"no refresh of {node or pilot.app.screen} within {seconds}s") from None


def palette_highlights(app: HeedfulApp, title: str) -> bool:
    """Whether the command palette is open with ``title`` as its highlighted command (its search
    runs in a worker as the user types: Enter runs whatever is highlighted)."""
    from textual.command import CommandList, CommandPalette

    palette = app.screen
    if not isinstance(palette, CommandPalette):
        return False
    listing = palette.query_one(CommandList)
    if listing.highlighted is None:
        return False
    return str(listing.get_option_at_index(listing.highlighted).prompt).startswith(title)


async def run_from_palette(pilot: Pilot[None], app: HeedfulApp, typed: str, title: str | None = None) -> None:
    """Open the command palette (Ctrl+P), type ``typed``, and run the command titled ``title``
    (``typed`` if not given) once the palette's search highlights it."""
    from textual.command import CommandPalette

    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*typed)
    await wait_for(pilot, lambda: palette_highlights(app, title or typed))
    await pilot.press("enter")


TYPING_PACE = 0.03
"""Seconds between the keys of :func:`type_keys`: a fast typist, just slower than the keys of a
paste a terminal types out (``tui.widgets.composer.TYPED_PASTE_GAP``)."""


def key_in(pilot: Pilot[None], keys: str) -> None:
    """Send ``keys`` to the app as the terminal does (``\\n`` is Enter) and go on at once: the
    caller waits for what they should do. ``pilot.press`` also waits for the app to fall idle after
    each key, which takes longest while a reply streams."""
    from textual.keys import _character_to_key

    for character in keys:
        if character == "\n":
            pilot.app.post_message(events.Key("enter", None))
        else:
            pilot.app.post_message(events.Key(_character_to_key(character), character))


async def type_keys(pilot: Pilot[None], keys: str) -> None:
    """Type ``keys`` as a person does, one every :data:`TYPING_PACE` seconds, going on whatever the
    app is doing. The caller waits for what the keys should have done."""
    for character in keys:
        key_in(pilot, character)
        await asyncio.sleep(TYPING_PACE)


def chat(app: HeedfulApp) -> ChatScreen:
    screen = app.screen
    assert isinstance(screen, ChatScreen), screen
    return screen


async def command(pilot: Pilot[None], app: HeedfulApp, text: str) -> None:
    """Types ``text`` in the chat's composer and sends it with Enter (a slash command, mostly)."""
    composer = chat(app).composer
    composer.focus()
    composer.insert(text)
    await pilot.press("enter")


def option_rows(screen: Screen[Any]) -> list[str]:
    """The rows of the screen's option list, as shown."""
    options = screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def views(app: HeedfulApp) -> list[MessageView]:
    return list(chat(app).query(MessageView))


def new_views(screen: ChatScreen, before: set[int]) -> int:
    """How many messages ``screen`` shows that are not among the ids ``before``: counted, not
    compared with the number of views then, as the oldest go when a turn fills the window
    (MOUNTED_LIMIT). The screen is passed: a dialog may be over it meanwhile."""
    return sum(v.message.id not in before for v in screen.query(MessageView))


def idle(app: HeedfulApp) -> bool:
    """No turn running, and the panel showing what the next request would send."""
    return chat(app).settled


async def send(pilot: Pilot[None], text: str) -> None:
    """Type ``text`` into the composer, press Enter, and wait until the reply has settled."""
    app = pilot.app
    assert isinstance(app, HeedfulApp)
    composer = chat(app).query_one(Composer)
    composer.focus()
    before = {v.message.id for v in views(app)}
    if len(text) <= 40:
        key_in(pilot, text)  # typed for real, key by key
        await wait_for(pilot, lambda: composer.text.endswith(text))
    else:
        composer.insert(text)  # as a paste would
    key_in(pilot, "\n")
    await wait_for(pilot, lambda: new_views(chat(app), before) >= 2 and idle(app))


async def say(pilot: Pilot[None], app: HeedfulApp, text: str, *, keep: bool = False) -> ConsentScreen | None:
    """Send ``text`` and wait for the reply; return the consent dialog if the send raised it (it
    opens as the message is sent, never later). With ``keep``, it is answered with Esc, the safe
    answer (keep them whole), and the user carries on chatting."""
    screen = chat(app)
    before = {v.message.id for v in screen.query(MessageView)}
    screen.composer.focus()
    screen.composer.insert(text)
    key_in(pilot, "\n")
    await wait_for(pilot, lambda: new_views(screen, before) >= 2 and screen.settled)
    if not isinstance(app.screen, ConsentScreen):
        return None
    if keep:
        await wait_for(pilot, lambda: app.screen.shown_at is not None)  # type: ignore[attr-defined]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        return None
    return app.screen


async def asked(pilot: Pilot[None], app: HeedfulApp, kind: type[Question]) -> Question:
    """Wait until a question of ``kind`` is on screen and drawn (a key pressed before that, it
    ignores: see tui/typing.py), and return it."""
    await wait_for(
        pilot, lambda: isinstance(app.screen, kind) and getattr(app.screen, "shown_at", 0) is not None
    )
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


async def opened(pilot: Pilot[None], app: HeedfulApp, kind: type[Shown]) -> Shown:
    """Wait until a screen of ``kind`` is on top and mounted, and return it."""
    await wait_for(pilot, lambda: isinstance(app.screen, kind) and app.screen.is_mounted)
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


@contextlib.contextmanager
def users_store() -> Iterator[SqliteChatStore]:
    """The test's database (HEEDFUL_DATA_DIR, see conftest) on a separate connection, closed on leaving."""
    store = open_store(paths.database_path()).store
    try:
        yield store
    finally:
        store.close()


def stored_messages() -> list[StoredMessage]:
    """Every message in the test's database, read through a separate connection."""
    with users_store() as store:
        return [m for s in store.list_sessions() for m in store.messages(s.id)]


def toasts(app: HeedfulApp) -> list[str]:
    """The text of the notifications on screen now, as the user reads them."""
    return [str(toast.render()) for toast in app.screen.query("Toast")]


def make_sessions(*sessions: tuple[str, list[str]]) -> dict[str, int]:
    """Sessions in the test's database before the app starts: title → id (the last is the latest)."""
    with users_store() as store:
        ids = {}
        for title, texts in sessions:
            session = store.create_session(title)
            for n, text in enumerate(texts):
                store.add_message(session.id, ("user", "assistant")[n % 2], text)
            ids[title] = session.id
        return ids


async def type_command(pilot: Pilot[None], app: HeedfulApp, line: str) -> None:
    """Enter ``line`` in the composer and wait until the screen has taken it: a command accepted
    clears the composer (a message, once stored), one refused is left there and says why."""
    composer = chat(app).composer
    composer.focus()
    composer.text = line
    told = {n.identity for n in app._notifications}
    key_in(pilot, "\n")

    def taken() -> bool:
        return composer.text != line or any(n.identity not in told for n in app._notifications)

    await wait_for(pilot, taken)


async def command_says(pilot: Pilot[None], app: HeedfulApp, line: str, *words: str) -> None:
    """Enter the command ``line`` and wait for a notice that holds every one of ``words``."""
    await type_command(pilot, app, line)
    await wait_for(pilot, lambda: any(all(w in t for w in words) for t in toasts(app)))
