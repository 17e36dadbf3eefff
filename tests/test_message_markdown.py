"""Message Markdown: code blocks in their declared language; untagged ones as plain text."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from tui.widgets.message_markdown import MessageMarkdown

CODE = "#!/usr/bin/env python\nimport os\ndef pool(size):\n    return [connect() for _ in range(size)]"


class _Reply(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield MessageMarkdown(self.text)


async def _fence(text: str) -> MarkdownFence:
    app = _Reply(text)
    async with app.run_test() as pilot:
        await pilot.pause()
        return app.query_one(MarkdownFence)


def _styles(fence: MarkdownFence) -> set[object]:
    return {span.style for span in fence._highlighted_code.spans}


async def test_a_block_that_names_its_language_is_highlighted_in_it() -> None:
    fence = await _fence(f"```python\n{CODE}\n```")
    assert fence._highlighted_code.plain.rstrip() == CODE
    assert len(_styles(fence)) > 2  # keywords, names and brackets coloured apart


async def test_a_block_without_a_language_is_plain_text_not_a_guess() -> None:
    # Pygments would guess Python here (importing all of its lexers to do it) and colour it so.
    fence = await _fence(f"```\n{CODE}\n```")
    assert fence._highlighted_code.plain.rstrip() == CODE
    assert _styles(fence) <= {"$text"}  # one colour: the text's


async def test_code_is_drawn_again_for_a_new_theme_not_for_each_style_change() -> None:
    app = _Reply(f"```python\n{CODE}\n```")
    async with app.run_test() as pilot:
        await pilot.pause()
        fence = app.query_one(MarkdownFence)
        drawn = fence._highlighted_code
        app.query_one(MessageMarkdown).add_class("-forgotten")  # as a message marked pruned
        await pilot.pause()
        assert fence._highlighted_code is drawn
        app.theme = "textual-light" if app.current_theme.dark else "textual-dark"
        await pilot.pause()
        assert fence._highlighted_code is not drawn
        assert fence._highlighted_code.plain == drawn.plain


HTML_REPLY = (
    "Wrap it in a div:\n\n"
    '<div class="card">\n  hello card\n</div>\n\n'
    "Then use <b>bold</b> for the title.\n\n"
    "<think>\nthe model's reasoning\n</think>\n\n"
    "Done."
)
"""HTML a model writes when asked about HTML (or a reasoning model's inline thoughts)."""
HTML_SHOWN = ['<div class="card">', "hello card", "</div>", "Then use <b>bold</b> for the title.", "<think>"]


def _screen_lines(markdown: MessageMarkdown) -> list[str]:
    return [
        block.render_line(y).text.strip()
        for block in markdown.query(MarkdownBlock)
        for y in range(block.region.height)
    ]


async def test_html_in_a_reply_is_shown_as_the_text_it_is() -> None:
    """Textual draws neither HTML blocks nor inline tags: read as HTML, the block was missing on
    screen and "<b>" vanished, while the model was still sent them."""
    app = _Reply(HTML_REPLY)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        shown = "\n".join(_screen_lines(app.query_one(MessageMarkdown)))
        for text in HTML_SHOWN:
            assert text in shown
        assert "the model's reasoning" in shown


async def test_html_streamed_in_pieces_is_shown_as_text_too() -> None:
    app = _Reply("")
    async with app.run_test(size=(80, 30)) as pilot:
        markdown = app.query_one(MessageMarkdown)
        stream = Markdown.get_stream(markdown)
        for start in range(0, len(HTML_REPLY), 7):
            await stream.write(HTML_REPLY[start : start + 7])
        await stream.stop()
        await pilot.pause()
        shown = "\n".join(_screen_lines(markdown))
        for text in HTML_SHOWN:
            assert text in shown
