"""What the lines around a message's body say: the meta line (who, when, state, context), the
model's thinking, a pending retry's countdown and a failure with what the user can do next."""

from __future__ import annotations

from textual.content import Content

from engine.chat import MessageStatus, StoredMessage
from engine.curation.context_view import ItemView, Mark
from engine.text.moments import local_text
from engine.text.redaction import redact
from tui.sanitize import inert

THINKING_SHOWN = 40_000
"""A reasoning model's thinking, shown, is cut after this many characters: it is drawn as plain
text, wrapped and laid out whole again on every redraw, unlike a long answer (see SHOWN_LIMIT)."""

ROLE_LABELS = {"user": "you", "assistant": "assistant", "system": "system", "tool": "tool"}

CONTEXT_MARKS = {
    Mark.PINNED: "📌 pinned",
    Mark.RECALLED: "↺ recalled",
    Mark.SUMMARIZED: "≈ summarized",
    Mark.PRUNED: "✂ pruned",
    Mark.LEFT_OUT: "○ not sent this time",
}
"""How the meta line says where a message stands in the next request (verbatim says nothing)."""

_STATES = {
    MessageStatus.STREAMING: " · writing…",
    MessageStatus.INTERRUPTED: " · interrupted",
    MessageStatus.FAILED: " · failed",
}


def meta_text(message: StoredMessage, item: ItemView | None) -> Content:
    """Who wrote the message, with which model, when, its state and its place in the next request."""
    parts: list[str | tuple[str, str]] = [(ROLE_LABELS[message.role], "bold")]
    if message.role == "assistant" and message.model:
        parts.append(f" · {message.model}")
    parts.append(f" · {local_text(message.created_at, '%H:%M')}")
    if message.status in _STATES:
        parts.append(_STATES[message.status])
    if item is not None and item.mark in CONTEXT_MARKS:
        parts.append((f"  {CONTEXT_MARKS[item.mark]}", "italic"))
    return Content.assemble(*parts)


def thinking_text(thought: str, *, shown: bool, still: bool) -> Content:
    """The thinking line: the thinking itself when ``shown``, else its length (``still`` while it streams)."""
    thought = thought.strip()
    if shown:
        head = Content.styled("💭 the model's thinking, not sent back to it · Alt+T hides it\n", "italic")
        text = Content(inert(thought[:THINKING_SHOWN]))
        if len(thought) > THINKING_SHOWN:
            rest = len(thought) - THINKING_SHOWN
            text += Content.styled(f"\n… and {rest:,} more characters, kept in the store.", "italic")
        return head + text
    words = f"{len(thought.split()):,} words"
    said = f"💭 thinking… {words}" if still else f"💭 thought {words} · Alt+T shows the thinking"
    return Content.styled(said, "italic")


def problem_text(message: StoredMessage) -> Content:
    """Why a failed or interrupted message stopped, and what the user can do (empty otherwise)."""
    problem = message.error if message.status in (MessageStatus.FAILED, MessageStatus.INTERRUPTED) else None
    if not problem:
        return Content("")
    follow_up = (
        "Ctrl+G continues it · Ctrl+R asks again."
        if message.status == MessageStatus.INTERRUPTED and message.content
        else "Ctrl+R retries this turn."
    )
    # stored by an older Heedful, a server's error may still quote the key
    return Content(f"⚠ {inert(redact(problem))}  {follow_up}")


def waiting_text(reason: str, seconds_left: int) -> Content:
    """The countdown to an automatic retry."""
    when = f"in {seconds_left} s" if seconds_left else "now"
    return Content(f"⟳ {inert(reason)}. Asking again {when}; Esc stops.")
