"""Inspect one message: its text, where it stands in the context, its score parts, and its ledger
history ("why is this gone?"). Alt+P, Alt+R and Alt+F act on it from here too; plain keys are
typing, and go to the composer."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static, TextArea

from engine.text.redaction import redact
from tui.bindings import closing
from tui.messages import ItemVerb
from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.typing import TypingPassesThrough
from tui.widgets.context_rows import in_story, repeats_line

if TYPE_CHECKING:
    from engine.curation.context_view import ItemDetail

SCORE_PARTS = ("relevance", "neighbour", "entities", "recency", "role", "recurrence", "total")
STATE_WORDS = {
    "active": "active (whole, not summarized)",
    "summarized": "summarized",
    "pruned": "pruned (restorable)",
}


def describe(detail: ItemDetail) -> str:
    """The facts above the text, as plain lines: one story (its state, its place in the next
    request and why, its score or why it has none)."""
    view = detail.view
    state = STATE_WORDS.get(view.state.value, view.state.value)
    lines = [
        f"{view.role} #{view.id} · {view.tokens:,} tokens · state {state}"
        + (" · pinned" if view.pinned else ""),
        f"In the next request: {view.placement}: {view.reason}",
        f"Memory role: {detail.memory_role}",
    ]
    if view.group:
        lines.insert(2, f"Repeated error: {repeats_line(view)}")
    if detail.scores is not None:
        parts = detail.scores.as_dict()
        lines.append("Score: " + "  ".join(f"{name} {parts[name]:.2f}" for name in SCORE_PARTS))
        if detail.worth is not None:
            lines.append(
                f"Ranked by {detail.worth:.3f}: the total over the square root of its cost, so a long "
                "message needs more to take the place of short ones"
            )
    else:
        lines.append(f"Score: none: {detail.unscored or 'not scored for this request'}")
    return "\n".join(lines)


def history(detail: ItemDetail) -> str:
    if not detail.ledger:
        return "Nothing has been decided about this message yet."
    return "\n".join(
        f"turn {e.turn}: {e.kind.value} {e.action}"
        + (f" ({e.before} → {e.after})" if e.before and e.after and e.before != e.after else "")
        + f": {e.reason}"
        for e in detail.ledger
    )


class InspectScreen(TypingPassesThrough, Dialog[ItemVerb | None]):
    """Dismissed with None, or with what to do to the message (pin, restore, forget)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        closing(),
        Binding("alt+p", "answer('pin')", "Pin/unpin"),
        Binding("alt+r", "answer('restore')", "Restore"),
        Binding("alt+f", "answer('forget')", "Forget"),
    ]

    def __init__(self, detail: ItemDetail) -> None:
        super().__init__()
        self.detail = detail

    def action_answer(self, verb: str) -> None:
        """A key's action names its verb in words; the chat screen is answered with the verb."""
        self.dismiss(ItemVerb(verb))

    def compose(self) -> ComposeResult:
        detail = self.detail
        with Vertical(classes="dialog wide"):
            yield Static(Content.styled(f"Why? Message #{detail.view.id}", "bold"), classes="title")
            yield Static(Content(inert(describe(detail))), id="inspect-facts")
            with VerticalScroll(id="inspect-scroll"):
                if in_story(detail.view):
                    yield Static(Content.styled("Quoted in the story so far (F5 shows it all)", "bold"))
                    yield Static(Content(inert("\n".join(detail.view.story))), id="inspect-story")
                if detail.summary:
                    yield Static(Content.styled("Summary", "bold"))
                    yield Static(Content(inert(detail.summary)), id="inspect-summary")
                yield Static(Content.styled("Original", "bold"))
                yield TextArea(inert(detail.text), read_only=True, soft_wrap=True, id="inspect-text")
                yield Static(Content.styled("Ledger", "bold"))
                yield Static(Content(inert(redact(history(detail)))), id="inspect-ledger")
            yield Static(
                Content("Alt+P pin/unpin · Alt+R restore · Alt+F forget · Esc closes"), classes="hint"
            )
