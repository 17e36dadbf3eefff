"""Markdown for messages: Textual's, with code blocks that are cheaper to show and never guessed at."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual.content import Content
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownParagraph  # not re-exported by textual.widgets.markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from engine.turn.attachments import split_attachment
from tui import textual_fixes
from tui.widgets.laid_out_once import LaidOutOnce

textual_fixes.fill_mdurl_tables()  # before any of this module's Markdown is parsed, in threads

_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


class MessageFence(MarkdownFence, LaidOutOnce):
    """A fenced block drawn in its declared language; one that declares none is drawn as text.

    Textual asks Pygments to guess an untagged block's language. Its first guess imports every one
    of Pygments' lexers, held for the rest of the run, for a guess that colours logs and shell
    output as some unrelated language.

    It also draws its code again only when the app's theme turns dark or light (or to the
    terminal's colours): Textual's does on every style update, such as the message being focused
    or marked pruned, and each new drawing laid the whole screen out again.
    """

    def __init__(self, markdown: Markdown, token: Token, code: str) -> None:
        super().__init__(markdown, token, code)
        self._drawn_for = self._theme()

    def _theme(self) -> tuple[bool, bool]:
        return self.app.native_ansi_color, self.app.current_theme.dark

    def notify_style_update(self) -> None:
        theme = self._theme()
        if theme == self._drawn_for:
            super(MarkdownFence, self).notify_style_update()  # skip only the redrawing
            return
        self._drawn_for = theme
        super().notify_style_update()

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        return super().highlight(code, language or "text", ansi, dark)


class MessageParagraph(MarkdownParagraph, LaidOutOnce):
    """A paragraph that grows while its reply streams, laid out once per draw."""


def text_html_parser() -> MarkdownIt:
    """Textual's "gfm-like" parser, with HTML read as text.

    Textual draws neither HTML blocks nor inline tags: with HTML on, a reply's ``<div>…</div>``
    block (and all it encloses) or the ``<b>`` of "use <b> tags" was missing on screen while the
    model was still sent it, and shown in the context panel's preview.
    """
    return MarkdownIt("gfm-like", {"html": False})


class MessageMarkdown(Markdown, LaidOutOnce):
    """A message's Markdown body: what the model wrote, all of it on screen."""

    BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012 (Textual declares it so)
        **Markdown.BLOCKS,
        "fence": MessageFence,
        "code_block": MessageFence,
        "paragraph_open": MessageParagraph,
    }

    def __init__(self, markdown: str = "", *, classes: str | None = None) -> None:
        super().__init__(markdown, classes=classes, parser_factory=text_html_parser, open_links=False)


def attachment_markdown(text: str) -> str | None:
    """An attached file's text as Markdown: its heading, then the file in a code block that keeps
    every line break (as paragraphs, a stack trace ran together into one). None: not a file."""
    parts = split_attachment(text)
    if parts is None:
        return None
    heading, body = parts
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)  # longer than any run of backticks in the file
    escaped = _MARKDOWN_PUNCTUATION.sub(r"\\\1", heading)
    return f"{escaped}\n\n{fence}\n{body.rstrip(chr(10))}\n{fence}\n"
