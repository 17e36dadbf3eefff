"""A reasoning model's thinking in the chat pane: one line above the answer while and after it
thinks, its words shown on t (engine side: test_thinking.py)."""

from __future__ import annotations

from textual.widgets.markdown import MarkdownBlock

from tests.apphelpers import chat, idle, make_app, send, views, wait_for
from tests.fake_openai import FakeOpenAIServer
from tui.widgets.message_lines import THINKING_SHOWN
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
        assert _line(reply) == f"💭 thought {len(THOUGHT.split())} words · Alt+T shows the thinking"
        assert "Weighing" not in _body(reply) and "pool size" not in _body(reply)

        reply.focus()
        await pilot.press("alt+t")
        assert THOUGHT in _line(reply) and "not sent back" in _line(reply)
        await pilot.press("alt+t")
        assert _line(reply).startswith("💭 thought")
        await pilot.press("alt+y")  # the answer, as the user reads it
        await wait_for(pilot, lambda: app.clipboard == ANSWER)


async def test_a_reply_that_came_at_once_or_from_the_store_shows_its_thinking_apart(
    fake_server: FakeOpenAIServer,
) -> None:
    fake_server.reply = f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}"
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(100, 40)) as pilot:
        # No delay: the whole reply arrives before its first draw.
        await send(pilot, "How big should the pool be?")
        await wait_for(pilot, lambda: "max_connections" in _body(views(app)[1]))
        assert _line(views(app)[1]).startswith("💭 thought")
        assert "Weighing" not in _body(views(app)[1])
    again = make_app(base_url=fake_server.base_url, model="fake-model")  # reopened: the last session
    async with again.run_test(size=(100, 40)) as pilot:
        await wait_for(
            pilot, lambda: len(views(again)) == 2 and "max_connections" in _body(views(again)[1]), 20
        )
        reply = views(again)[1]
        assert _line(reply).startswith("💭 thought")
        assert "<think>" not in _body(reply)
        assert "Weighing" not in _body(reply)


async def test_very_long_thinking_is_shown_cut_with_what_is_left(fake_server: FakeOpenAIServer) -> None:
    thought = "Considering the pool once more. " * 4_000  # 128,000 characters, as R1 may think
    fake_server.reply, fake_server.piece_chars = f"<think>{thought}</think>{ANSWER}", 20_000
    app = make_app(base_url=fake_server.base_url, model="fake-model")
    async with app.run_test(size=(100, 40)) as pilot:
        await send(pilot, "How big should the pool be?")
        reply = views(app)[1]
        reply.focus()
        await pilot.press("alt+t")
        shown = _line(reply)
        rest = len(thought.strip()) - THINKING_SHOWN
        assert shown.endswith(f"… and {rest:,} more characters, kept in the store.")
        assert len(shown) < THINKING_SHOWN + 200
