"""The story so far in the app, driven with Pilot: the context panel's legend counts it as a part
of the request, and F5 shows it where the model reads it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from textual.pilot import Pilot
from textual.widgets import Static

from engine.curation.context_view import ContextView
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import chat, fake_provider, make_app, say, wait_for
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp

TOPICS = ("the greenhouse tomatoes", "the billing refund", "the marathon training", "the triangle theorem")


def seed_long_session() -> None:
    """A conversation of ~30k tokens: far more than a 24k window's budget holds whole."""
    store = open_store(paths.database_path()).store
    session = store.create_session("A long week of questions")
    for n in range(120):
        topic = TOPICS[n % len(TOPICS)]
        question = f"Question {n}: how should I think about {topic} this week, given plan {n}?"
        answer = f"About {topic} and plan {n}: " + f"step {n} keeps {topic} simple and steady. " * 25
        store.add_message(session.id, "user", question, tokens=len(question) // 4)
        store.add_message(session.id, "assistant", answer, tokens=len(answer) // 4)
    store.close()


def carries_a_story(view: ContextView) -> bool:
    return any(m.form == "story" for m in view.messages)


def quotes_a_message(view: ContextView) -> bool:
    return any(i.story for i in view.items)


@asynccontextmanager
async def asked_in_a_long_session(
    fake_server: FakeOpenAIServer, shown: Callable[[ContextView], bool]
) -> AsyncIterator[tuple[HeedfulApp, Pilot[None]]]:
    """The app on a session far longer than a 24k window's budget, a question asked, once its
    context is ``shown``."""
    fake_provider(fake_server, 24_000, tables="[memory]\nenabled = false\n")
    seed_long_session()
    fake_server.reply = "Noted."
    app = make_app()
    async with app.run_test(size=(140, 45)) as pilot:
        await say(pilot, app, "What did we settle about the billing refund?", keep=True)
        await wait_for(pilot, lambda: (view := chat(app).context) is not None and shown(view))
        yield app, pilot


async def test_the_panel_and_the_preview_show_the_story_so_far(fake_server: FakeOpenAIServer) -> None:
    async with asked_in_a_long_session(fake_server, carries_a_story) as (app, pilot):
        view = chat(app).context
        assert view is not None
        story = next(m for m in view.messages if m.form == "story")
        assert story.tokens <= view.budget * 0.06 + 1
        await wait_for(
            pilot, lambda: "story so far" in str(app.screen.query_one("#context-legend", Static).render())
        )
        await pilot.press("f5")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "PreviewScreen")
        said = "\n".join(str(s.render()) for s in app.screen.query(Static))
        assert "The story so far" in said and "· story ·" in said
        # Its first line tells the whole session, before the topics' lines.
        told = said[said.index("The story so far") :].split("\n- [")
        assert len(told) > 2 and "the session so far" in told[1]
        assert story.content.split("\n")[1].startswith("- [") and "the session so far" in story.content


async def test_a_row_the_story_quotes_is_tagged_and_its_why_dialog_shows_the_line(
    fake_server: FakeOpenAIServer,
) -> None:
    async with asked_in_a_long_session(fake_server, quotes_a_message) as (app, pilot):
        view = chat(app).context
        assert view is not None
        quoted = max((i for i in view.items if i.story), key=lambda i: i.id)  # the newest: in sight
        assert not quoted.sent_in_full
        panel = chat(app).context_panel
        await wait_for(pilot, lambda: panel.rows.get_option(f"item-{quoted.id}") is not None)
        row = str(panel.rows.get_option(f"item-{quoted.id}").prompt)
        assert f"#{quoted.id}" in row and " story " in row
        unquoted = max((i for i in view.items if not i.story and not i.in_prompt), key=lambda i: i.id)
        assert " story " not in str(panel.rows.get_option(f"item-{unquoted.id}").prompt)

        panel.rows.focus()
        panel.rows.highlighted = panel.rows.get_option_index(f"item-{quoted.id}")
        why = panel.query_one("#context-why", Static)
        await wait_for(pilot, lambda: "quoted in the story so far, line [" in str(why.render()))
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "InspectScreen" and app.screen.is_mounted)
        told = str(app.screen.query_one("#inspect-story", Static).render())
        assert told == "\n".join(quoted.story) and f"#{quoted.id}" in told
