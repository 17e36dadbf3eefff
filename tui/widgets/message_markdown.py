"""Markdown for messages: Textual's, except that a code block without a language stays plain text."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence


class PlainUntaggedFence(MarkdownFence):
    """A fenced block drawn in its declared language; one that declares none is drawn as text.

    Textual asks Pygments to guess an untagged block's language. Its first guess imports every one
    of Pygments' lexers: 15 MB of RSS for the rest of the run and ~0.15 s on the event loop, for a
    guess that colours logs and shell output as some unrelated language.
    """

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        return super().highlight(code, language or "text", ansi, dark)


class MessageMarkdown(Markdown):
    """A message's Markdown body."""

    BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012 (Textual declares it so)
        **Markdown.BLOCKS,
        "fence": PlainUntaggedFence,
        "code_block": PlainUntaggedFence,
    }
