"""/model never changes provider by itself: a name is looked for on the session's provider first,
a switch to another provider is said and confirmed (Enter and Esc keep the model), an unknown name
is refused with the known ones, and the picker lists each provider's models with their windows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Static

from tests.apphelpers import chat, command, make_app, run_from_palette, send, toasts, wait_for, write_config
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp
from tui.screens.chat import ChatScreen
from tui.screens.model_picker import ModelPickerScreen, SwitchProviderScreen

KEYED = {"OPENAI_API_KEY": "sk-test-not-a-real-key"}
"""As in the report: a key for OpenAI is set, which a bare name must never fall back to."""


@pytest.fixture
def other_server() -> Iterator[FakeOpenAIServer]:
    """A second provider's server."""
    with FakeOpenAIServer() as server:
        yield server


def configure(fake: FakeOpenAIServer, other: FakeOpenAIServer | None = None) -> None:
    text = 'model = "fake/fake"\n\n[providers.fake]\n'
    text += f'base_url = "{fake.base_url}"\nmodels = {{ "fake" = 1200 }}\n'
    if other is not None:
        text += f'\n[providers.other]\nbase_url = "{other.base_url}"\nmodels = {{ "big" = 4000 }}\n'
    write_config(text)


def header_model(app: HeedfulApp) -> str:
    rendered = chat(app).header.query_one("#header-model", Static).render()
    assert isinstance(rendered, Content)
    return rendered.plain


async def send_to(pilot: Pilot[None], app: HeedfulApp, server: FakeOpenAIServer, text: str) -> str:
    """Send ``text``; the model ``server`` was asked for (it must be the one that gets it)."""
    before = len(server.requests)
    await send(pilot, text)
    await wait_for(pilot, lambda: len(server.requests) > before)
    return str(server.requests[-1]["body"]["model"])


async def asked(pilot: Pilot[None], app: HeedfulApp) -> SwitchProviderScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, SwitchProviderScreen))
    screen = app.screen
    assert isinstance(screen, SwitchProviderScreen)
    return screen


async def test_a_name_the_providers_server_lists_stays_on_that_provider(
    fake_server: FakeOpenAIServer,
) -> None:
    # The report: model = "fake/fake", /model fake-model-large, then a message went to OpenAI.
    configure(fake_server)
    app = make_app(env=KEYED)
    async with app.run_test(notifications=True) as pilot:
        assert await send_to(pilot, app, fake_server, "hello") == "fake"
        assert header_model(app) == "fake on fake"
        await command(pilot, app, "/model fake-model-large")
        await wait_for(pilot, lambda: any("fake-model-large on fake (http://" in t for t in toasts(app)))
        assert isinstance(app.screen, ChatScreen)  # the same provider: nothing to confirm
        assert header_model(app) == "fake-model-large on fake"
        assert await send_to(pilot, app, fake_server, "bigger brain please") == "fake-model-large"
    again = make_app(env=KEYED)  # a restart: the session's choice is kept, on the same provider
    async with again.run_test() as pilot:
        await wait_for(pilot, lambda: header_model(again) == "fake-model-large on fake")
        assert await send_to(pilot, again, fake_server, "still there?") == "fake-model-large"


async def test_an_unknown_name_is_refused_with_the_known_models(fake_server: FakeOpenAIServer) -> None:
    configure(fake_server)
    app = make_app(env=KEYED)
    async with app.run_test(notifications=True) as pilot:
        await send_to(pilot, app, fake_server, "hello")
        await command(pilot, app, "/model gpt-4o")
        await wait_for(pilot, lambda: any("No configured provider offers gpt-4o" in t for t in toasts(app)))
        (refusal,) = [t for t in toasts(app) if "gpt-4o" in t]
        assert "fake/fake, fake/fake-model, fake/fake-model-large" in refusal
        assert "The model stays fake on fake" in refusal
        assert header_model(app) == "fake on fake"
        assert await send_to(pilot, app, fake_server, "who answers?") == "fake"


async def test_another_providers_model_is_asked_for_and_enter_or_esc_keeps_the_current_one(
    fake_server: FakeOpenAIServer, other_server: FakeOpenAIServer
) -> None:
    configure(fake_server, other_server)
    app = make_app(env=KEYED)
    async with app.run_test(notifications=True) as pilot:
        await send_to(pilot, app, fake_server, "hello")
        for keys in (["enter"], ["escape"], ["y", "s", "space", "enter"]):
            await command(pilot, app, "/model big")
            dialog = await asked(pilot, app)
            assert "other" in dialog.question and other_server.base_url in dialog.question
            await pilot.press(*keys)  # Enter is on Cancel; no plain letter switches
            await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
            assert header_model(app) == "fake on fake"
        assert await send_to(pilot, app, fake_server, "still fake?") == "fake"
        assert other_server.requests == []

        await command(pilot, app, "/model big")
        await asked(pilot, app)
        await pilot.press("tab", "enter")  # the deliberate act: focus the switch button
        await wait_for(pilot, lambda: header_model(app) == "big on other")
        assert any(f"the model big on other ({other_server.base_url})" in t for t in toasts(app))
        assert await send_to(pilot, app, other_server, "now the other one") == "big"

        await command(pilot, app, "/model fake")  # back, after the switch: asked too
        await asked(pilot, app)
        await pilot.press("alt+s")
        await wait_for(pilot, lambda: header_model(app) == "fake on fake")
        assert await send_to(pilot, app, fake_server, "home again") == "fake"


def rows(picker: ModelPickerScreen) -> list[str]:
    return [str(picker.rows.get_option_at_index(i).prompt) for i in range(picker.rows.option_count)]


async def test_the_picker_lists_each_providers_models_with_their_windows_and_asks_before_a_switch(
    fake_server: FakeOpenAIServer, other_server: FakeOpenAIServer
) -> None:
    fake_server.model_window = 32_000
    configure(fake_server, other_server)
    app = make_app(env=KEYED)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await send_to(pilot, app, fake_server, "hello")
        await command(pilot, app, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPickerScreen) and app.screen.ready)
        picker = app.screen
        assert isinstance(picker, ModelPickerScreen)
        shown = rows(picker)
        assert f"fake ({fake_server.base_url})" in shown
        assert " ● fake · 1,200 tokens · config" in shown  # the current one, marked
        assert "   fake-model-large · 32,000 tokens · server" in shown
        assert f"other ({other_server.base_url})" in shown
        assert "   big · 4,000 tokens · config" in shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))

        assert "Model" in {command.title for command in app.get_system_commands(chat(app))}
        await run_from_palette(pilot, app, "Model")  # the command palette offers it too
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPickerScreen) and app.screen.ready)
        picker = app.screen
        assert isinstance(picker, ModelPickerScreen)
        picker.rows.highlighted = rows(picker).index("   big · 4,000 tokens · config")
        await pilot.press("enter")
        await asked(pilot, app)  # another provider: asked first
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        assert header_model(app) == "fake on fake"
        await command(pilot, app, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPickerScreen) and app.screen.ready)
        picker = app.screen
        assert isinstance(picker, ModelPickerScreen)
        picker.rows.highlighted = rows(picker).index("   fake-model-large · 32,000 tokens · server")
        await pilot.press("enter")  # the same provider: no question
        await wait_for(pilot, lambda: header_model(app) == "fake-model-large on fake")


async def test_a_session_that_stored_a_bare_name_opens_on_the_default_provider(
    fake_server: FakeOpenAIServer,
) -> None:
    # Sessions switched before names were stored with their provider hold "fake-model-large":
    # opened, that means the default provider's model, never OpenAI's endpoint.
    from engine.chat import SessionSettings
    from sessions import paths
    from sessions.store import open_store
    from tests.apphelpers import make_sessions

    configure(fake_server)
    ids = make_sessions(("switched long ago", ["hello", "Echo: hello"]))
    store = open_store(paths.database_path()).store
    try:
        store.update_session_settings(ids["switched long ago"], SessionSettings(model="fake-model-large"))
    finally:
        store.close()
    app = make_app(env=KEYED)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: header_model(app) == "fake-model-large on fake")
        assert await send_to(pilot, app, fake_server, "where do I go?") == "fake-model-large"
