"""What the next request sends, exactly: each message's role, form and tokens, and its text."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from engine.curation.budget import budget_percent
from tui.bindings import closing
from tui.sanitize import inert
from tui.screens.request_dialog import RequestDialog

SHOWN_CHARS = 2_000
"""Characters of each message shown here; the rest is counted, not drawn."""


def heading(index: int, role: str, form: str, tokens: int, sources: tuple[int, ...]) -> str:
    where = f" · from {', '.join(f'#{s}' for s in sources[:8])}" if sources else ""
    more = f" +{len(sources) - 8}" if len(sources) > 8 else ""
    return f"{index}. {role} · {form} · {tokens:,} tokens{where}{more}"


def body(text: str) -> str:
    if len(text) <= SHOWN_CHARS:
        return inert(text)
    return inert(text[:SHOWN_CHARS]) + f"\n… {len(text) - SHOWN_CHARS:,} more characters"


class PreviewScreen(RequestDialog):
    BINDINGS: ClassVar[list[BindingType]] = [closing("escape,f5")]
    TITLE_TEXT = "The next request"

    def figures(self, approx: str) -> str:
        view = self.view
        return (
            f"{len(view.messages):,} messages, {approx}{view.tokens:,} of {view.budget:,} budget · "
            f"{budget_percent(view.tokens, view.budget)} (window {view.window:,}), sent exactly as "
            "below, in this order."
        )

    def parts(self) -> ComposeResult:
        view = self.view
        with VerticalScroll(id="preview-messages"):
            if not view.messages:
                yield Static(Content("Nothing yet: send a message first."))
            for index, message in enumerate(view.messages, 1):
                yield Static(
                    Content.styled(
                        heading(index, message.role, message.form, message.tokens, message.sources),
                        "bold",
                    ),
                    classes=f"preview-heading -{message.form}",
                )
                yield Static(Content(body(message.content)), classes="preview-body")
