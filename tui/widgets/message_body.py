"""A message's body, drawn by its size: Markdown, plain text in a read-only TextArea, or its start
and a note (very large texts cost Textual seconds, and hundreds of MB, to lay out)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Literal, TypeGuard

from textual.content import Content
from textual.widget import Widget
from textual.widgets import TextArea

from tui.sanitize import inert
from tui.widgets.laid_out_once import LaidOutStatic

if TYPE_CHECKING:
    from textual.widgets import Markdown

MARKDOWN_LIMIT = 40_000
"""Above this many characters a message is shown as plain text in a read-only TextArea: Textual's
Markdown takes seconds, and hundreds of MB, to lay out very large documents."""

SHOWN_LIMIT = 200_000
SHOWN_HEAD = 4_000
"""A message longer than SHOWN_LIMIT characters shows its first SHOWN_HEAD and a note: even a
read-only TextArea takes seconds (and hundreds of MB) to lay out megabytes."""

BodyKind = Literal["markdown", "plain", "head"]


def body_kind(chars: int) -> BodyKind:
    """How a message of ``chars`` characters is drawn (a user's short one: as plain Static text)."""
    if chars > SHOWN_LIMIT:
        return "head"
    return "plain" if chars > MARKDOWN_LIMIT else "markdown"


def make_body(text: str, role: str) -> Widget:
    """The widget that shows ``text``, a message of ``role``, as its size allows."""
    kind = body_kind(len(text))
    if kind == "head":
        return LaidOutStatic(head_text(text), classes="body")
    safe = inert(text)
    if kind == "plain":
        return TextArea(safe, read_only=True, soft_wrap=True, classes="body")
    if role == "user":
        # The user's words are shown exactly as typed, never interpreted as markup.
        return LaidOutStatic(Content(safe), classes="body")
    # Here, not at the top: a first screen with no reply to show does without markdown-it.
    from tui.widgets.message_markdown import MessageMarkdown, attachment_markdown

    if role == "tool":  # an attached file: its lines as code, not reflowed
        safe = attachment_markdown(safe) or safe
    return MessageMarkdown(safe, classes="body")


def is_markdown(body: Widget) -> TypeGuard[Markdown]:
    """A Markdown body (there is none, nor markdown-it, until a reply is first shown)."""
    markdown = sys.modules.get("textual.widgets._markdown")
    return markdown is not None and isinstance(body, markdown.Markdown)


def head_text(text: str) -> Content:
    """The start of a message too long to show, and a note saying the rest is kept and sent."""
    rest = text[SHOWN_HEAD:]
    note = (
        f"\n\n… and {len(rest):,} more characters ({rest.count(chr(10)):,} more lines), not shown "
        "here. All of it is stored, sent as the context allows, and Alt+Y copies it."
    )
    return Content(inert(text[:SHOWN_HEAD])) + Content.styled(note, "italic")
