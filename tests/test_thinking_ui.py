"""A reasoning model's thinking in the chat pane: one line above the answer while and after it
thinks, its words shown on t (engine side: test_thinking.py)."""

from __future__ import annotations

from textual.widgets.markdown import MarkdownBlock

from tests.apphelpers import chat, idle, make_app, views, wait_for
from tests.fake_openai import FakeOpenAIServer
from tui.widgets.message_view import MessageView

THOUGHT = "The user asks about the pool. Weighing pool size against the worker count first."
ANSWER = "Set max_connections to 20."


def _line(view: MessageView) -> str:
    """What the view's thinking line says ("" when it has none)."""
    lines = view.query(".thinking")
    return str(lines.first().render()) if lines else ""


def _body(view: MessageView) -> str:
    return "\n".join(
        block.render_line(y).text for block in view.query(MarkdownBlock) for y in range(block.region.height)
    )


async def test_the_thinking_is_a_line_above_the_answer_that_t_opens(fake_server: FakeOpenAIServer) -> None:
    fake_server.reasoning, fake_server.reply, fake_server.chunk_delay = THOUGHT, ANSWER, 0.03
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(100, 40)) as pilot:
        screen = chat(app)
        screen.composer.focus()
        screen.composer.insert("How big should the pool be?")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: len(views(app)) == 2 and _line(views(app)[1]).startswith("💭 thinking…")
        )
        assert "Weighing" not in _body(views(app)[1])  # the thinking is not drawn as the answer

        await wait_for(pilot, lambda: idle(app) and "max_connections" in _body(views(app)[1]), 20)
        reply = views(app)[1]
        assert _line(reply) == f"💭 thought {len(THOUGHT.split())} words · t shows the thinking"
        assert "Weighing" not in _body(reply) and "pool size" not in _body(reply)

        reply.focus()
        await pilot.press("t")
        assert THOUGHT in _line(reply) and "not sent back" in _line(reply)
        await pilot.press("t")
        assert _line(reply).startswith("💭 thought")
        await pilot.press("y")  # the answer, as the user reads it
        await wait_for(pilot, lambda: app.clipboard == ANSWER)


async def test_a_reply_read_back_from_the_store_shows_its_thinking_apart(
    fake_server: FakeOpenAIServer,
) -> None:
    fake_server.reply = f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}"
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(100, 40)) as pilot:
        screen = chat(app)
        screen.composer.focus()
        screen.composer.insert("How big should the pool be?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(views(app)) == 2 and idle(app), 20)
    again = make_app(base_url=fake_server.base_url, model="fake-model")  # reopened: the last session
    async with again.run_test(size=(100, 40)) as pilot:
        await wait_for(
            pilot, lambda: len(views(again)) == 2 and "max_connections" in _body(views(again)[1]), 20
        )
        reply = views(again)[1]
        assert _line(reply).startswith("💭 thought")
        assert "<think>" not in _body(reply)
        assert "Weighing" not in _body(reply)
