"""/tokens: what each part of the next request costs, one row per message sent, and below it
what the request leaves out (the user's own messages first), each with its reason."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.widgets import DataTable, Static

from tui.bindings import closing
from tui.sanitize import inert
from tui.screens.request_dialog import RequestDialog

if TYPE_CHECKING:
    from engine.curation.context_view import ContextView, ItemView

PREVIEW_CHARS = 60


def _preview(text: str) -> Text:
    # Rich Text, never a str: DataTable would read a str cell as markup.
    line = " ".join(inert(text[: PREVIEW_CHARS * 4]).split())
    return Text(line[:PREVIEW_CHARS] + ("…" if len(line) > PREVIEW_CHARS else ""))


def left_out(view: ContextView) -> list[ItemView]:
    """The messages the next request does not carry, verbatim or summarized: the user's own first,
    then the rest, each group in conversation order."""
    missing = [item for item in view.items if not item.in_prompt]
    return sorted(missing, key=lambda item: item.role != "user")


class TokensScreen(RequestDialog):
    """A table of the next request: each part's role, form, sources and tokens, largest first."""

    BINDINGS: ClassVar[list[BindingType]] = [closing()]

    TITLE_TEXT = "What the next request costs"

    def figures(self, approx: str) -> str:
        view = self.view
        return (
            f"{approx}{view.tokens:,} tokens of a {view.budget:,} budget (window {view.window:,}), "
            f"in {len(view.messages):,} parts, largest first."
        )

    def parts(self) -> ComposeResult:
        yield DataTable(id="tokens-table", cursor_type="row", zebra_stripes=True)
        missing = left_out(self.view)
        if missing:
            yours = sum(item.role == "user" for item in missing)
            of_yours = f", {yours:,} of them yours" if yours else ""
            yield Static(
                Content.styled(
                    f"Not sent: {len(missing):,} message{'s' if len(missing) != 1 else ''}{of_yours}",
                    "bold",
                ),
                id="tokens-left-heading",
            )
            yield DataTable(id="tokens-left-out", cursor_type="row", zebra_stripes=True)
        else:
            yield Static(
                Content("Every message is sent, verbatim or as a summary."), id="tokens-left-heading"
            )

    def on_mount(self) -> None:
        if self.is_answered:
            return  # closed before it was mounted: nothing to fill
        table = self.query_one("#tokens-table", DataTable)
        table.add_columns("tokens", "share", "part", "form", "text")
        total = max(1, self.view.tokens)
        parts = sorted(enumerate(self.view.messages), key=lambda pair: -pair[1].tokens)
        for _, message in parts:
            sources = ", ".join(f"#{s}" for s in message.sources[:4])
            more = f" +{len(message.sources) - 4}" if len(message.sources) > 4 else ""
            table.add_row(
                Text(f"{message.tokens:,}", justify="right"),
                Text(f"{message.tokens / total:.0%}", justify="right"),
                Text(f"{message.role} {sources}{more}".strip()),
                Text(message.form),
                _preview(message.content),
            )
        table.focus()
        missing = left_out(self.view)
        if missing:
            left = self.query_one("#tokens-left-out", DataTable)
            left.add_columns("tokens", "message", "why it is not sent", "text")
            for item in missing:
                left.add_row(
                    Text(f"{item.tokens:,}", justify="right"),
                    Text(f"{'you' if item.role == 'user' else item.role} #{item.id}"),
                    Text(inert(item.reason)),
                    _preview(item.preview),
                )
