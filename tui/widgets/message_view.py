"""One message in the chat pane."""

from __future__ import annotations

import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Literal, TypeGuard

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import TextArea

from engine.chat import MessageStatus, StoredMessage
from engine.curation.context_view import ItemView, Mark, Section
from engine.text.moments import local_text
from engine.text.redaction import redact
from engine.text.thinking import ThinkingSplitter, split_thinking
from tui.messages import ContextAction, ItemVerb, MessageAction, MessageVerb
from tui.sanitize import inert
from tui.widgets.laid_out_once import LaidOutOnce, LaidOutStatic

if TYPE_CHECKING:
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

MARKDOWN_LIMIT = 40_000
"""Above this many characters a message is shown as plain text in a read-only TextArea: Textual's
Markdown takes seconds, and hundreds of MB, to lay out very large documents."""

STREAM_FLUSH = 0.1
"""Seconds between two draws of a streaming reply (ten a second reads as smooth)."""

SHOWN_LIMIT = 200_000
SHOWN_HEAD = 4_000
"""A message longer than SHOWN_LIMIT characters shows its first SHOWN_HEAD and a note: even a
read-only TextArea takes seconds (and hundreds of MB) to lay out megabytes."""

THINKING_SHOWN = 40_000
"""A reasoning model's thinking, shown, is cut after this many characters: it is drawn as plain
text, wrapped and laid out whole again on every redraw, unlike a long answer (see SHOWN_LIMIT)."""

BodyKind = Literal["markdown", "plain", "head"]
LineKind = Literal["summary", "thinking", "waiting", "problem"]

ROLE_LABELS = {"user": "you", "assistant": "assistant", "system": "system", "tool": "tool"}


def _clock(moment: datetime) -> str:
    return local_text(moment, "%H:%M")


CONTEXT_MARKS = {
    Mark.PINNED: "📌 pinned",
    Mark.RECALLED: "↺ recalled",
    Mark.SUMMARIZED: "≈ summarized",
    Mark.PRUNED: "✂ pruned",
    Mark.LEFT_OUT: "○ not sent this time",
}
"""How the meta line says where a message stands in the next request (verbatim says nothing)."""


class MessageView(Vertical, LaidOutOnce, can_focus=True):
    """A message: a meta line (who, when, state, context), its text, and a problem line when it failed.

    Focused, it takes the context panel's keys for itself: Alt+P pin, Alt+R restore, Alt+F forget,
    Enter inspect, and Alt+E shows or hides the summary of a summarized message (plain keys are
    typing: they go to the composer). A reasoning model's thinking (see :mod:`engine.text.thinking`) is
    one line above the answer, its length; Alt+T shows it. ↑ ↓ move to the next message.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # The same ids as the panel's: one [keys] entry remaps both.
        Binding("alt+p", "context('pin')", "Pin/unpin", tooltip="Pin or unpin this message", id="pin"),
        Binding(
            "alt+r",
            "context('restore')",
            "Restore",
            tooltip="Send this message verbatim again",
            id="restore",
        ),
        Binding("alt+f", "context('forget')", "Forget", tooltip="Forget this message now", id="forget"),
        Binding(
            "enter", "context('inspect')", "Why?", tooltip="Why this message is where it is", id="inspect"
        ),
        Binding("alt+e", "expand", "Summary", tooltip="Show or hide the summary sent instead", id="expand"),
        Binding("alt+t", "thinking", "Thinking", tooltip="Show or hide the model's thinking", id="thinking"),
        Binding(
            "alt+i",
            "message('edit')",
            "Edit",
            tooltip="Edit your message and send it again from here",
            id="edit",
        ),
        Binding(
            "alt+d",
            "message('delete')",
            "Delete",
            tooltip="Delete this message (kept in the store)",
            id="delete",
        ),
        Binding("alt+y", "message('copy')", "Copy", tooltip="Copy this message", id="copy_message"),
        Binding(
            "alt+c",
            "message('copy_code')",
            "Copy code",
            tooltip="Copy this message's code block",
            id="copy_code",
        ),
        Binding("up", "neighbour(-1)", "Previous", show=False, id="message_previous"),
        Binding("down", "neighbour(1)", "Next", show=False, id="message_next"),
        Binding("escape", "screen.home", "Composer", id="home"),
    ]

    DEFAULT_CSS = """
    MessageView {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
    }
    MessageView > .meta { color: $heedful-muted; }
    MessageView.-user > .meta { color: $heedful-user; }
    MessageView.-assistant > .meta { color: $heedful-assistant; }
    MessageView > .body { height: auto; }
    MessageView > Markdown { margin: 0; padding: 0; background: transparent; }
    MessageView > Markdown > MarkdownBlock:last-child { margin-bottom: 0; }
    MessageView > TextArea.body { max-height: 30; }
    MessageView > .problem { color: $error; display: none; }
    MessageView.-problem > .problem { display: block; }
    MessageView > .waiting { color: $warning; display: none; }
    MessageView.-waiting > .waiting { display: block; }
    MessageView:focus { background: $boost; }
    MessageView.-forgotten > .body { opacity: 60%; }
    MessageView > .summary {
        display: none;
        color: $heedful-muted;
        border-left: outer $heedful-muted;
        padding-left: 1;
    }
    MessageView.-expanded > .summary { display: block; }
    MessageView > .thinking { color: $heedful-muted; }
    MessageView.-thinking-shown > .thinking {
        border-left: outer $heedful-muted;
        padding-left: 1;
        margin-bottom: 1;
    }
    """

    def __init__(self, message: StoredMessage) -> None:
        super().__init__(id=f"message-{message.id}", classes=f"-{message.role}")
        self.message = message
        self.context_item: ItemView | None = None
        """Where this message stands in the next request, as the engine last said."""
        self._stream: MarkdownStream | None = None
        self._pending: list[str] = []
        """Streamed text not drawn yet (see :meth:`write`)."""
        self._drawn: list[str] = []
        """While a reply streams, the text drawn so far: a body it outgrows is rebuilt from it."""
        self._drawn_chars = 0
        self._flush_timer: Timer | None = None
        self._meta_line = LaidOutStatic(self._meta(), classes="meta")
        self._thought, answer = split_thinking(message.content) if message.is_reply else ("", message.content)
        """A reasoning model's thinking, shown apart from the answer (the body); while it streams,
        as it came (the pieces' spaces between them)."""
        self._splitter: ThinkingSplitter | None = None
        """While a reply streams: where its thinking ends and its answer begins."""
        self._body_widget = self._body(answer)
        self._wait: tuple[str, float] | None = None
        """While an automatic retry is pending: what it says, and when (monotonic) it fires."""
        self._wait_timer: Timer | None = None
        self._lines: dict[LineKind, LaidOutStatic] = {}
        """The summary, waiting and problem lines given text so far (mounted, or to be: the
        summary only once the user expands it)."""
        self._composed = False
        if self._thought:
            self._show_thinking()

    def compose(self) -> ComposeResult:
        # The summary, waiting and problem lines are made and mounted when first needed: a long
        # session mounts a hundred messages, every widget costs Textual layout time on each page,
        # and even an unmounted one holds a few kB.
        self._composed = True
        lines = self._lines
        yield self._meta_line
        yield from [lines["summary"]] if "summary" in lines and self.has_class("-expanded") else []
        yield from [lines["thinking"]] if "thinking" in lines else []
        yield self._body_widget
        yield from [lines[kind] for kind in ("waiting", "problem") if kind in lines]

    def _say(self, kind: LineKind, text: Content) -> None:
        """Show ``text`` on one of the lines under (or, for the summary, above) the body."""
        line = self._lines.get(kind)
        if line is not None:
            line.update(text)
            return
        if not text.plain:
            return
        line = self._lines[kind] = LaidOutStatic(text, classes=kind)
        if not self._composed:
            return  # compose yields it
        if kind == "summary":
            # Hidden until the user expands it: mounting it now would lay the whole screen out
            # again in the very turn that summarizes the message.
            if self.has_class("-expanded"):
                self.mount(line, after=self._meta_line)
        elif kind == "thinking":
            self.mount(line, before=self._body_widget)
        elif kind == "waiting":
            self.mount(line, after=self._body_widget)
        else:
            self.mount(line)

    def on_mount(self) -> None:
        self._show_problem()

    def _meta(self) -> Content:
        message = self.message
        parts: list[str | tuple[str, str]] = [(ROLE_LABELS[message.role], "bold")]
        if message.role == "assistant" and message.model:
            parts.append(f" · {message.model}")
        parts.append(f" · {_clock(message.created_at)}")
        if message.status == MessageStatus.STREAMING:
            parts.append(" · writing…")
        elif message.status == MessageStatus.INTERRUPTED:
            parts.append(" · interrupted")
        elif message.status == MessageStatus.FAILED:
            parts.append(" · failed")
        item = self.context_item
        if item is not None and item.mark in CONTEXT_MARKS:
            parts.append((f"  {CONTEXT_MARKS[item.mark]}", "italic"))
        return Content.assemble(*parts)

    def show_context(self, item: ItemView | None) -> None:
        """Mark the message with its state in the next request; pruned ones are dimmed, not hidden."""
        if item == self.context_item:
            return
        self.context_item = item
        self._meta_line.update(self._meta())
        self.set_class(item is not None and item.section is Section.PRUNED, "-forgotten")
        summary = item.summary if item is not None else None
        self._say("summary", Content(f"Summary sent instead: {inert(summary)}" if summary else ""))
        if not summary:
            self.remove_class("-expanded")

    def action_context(self, action: str) -> None:
        if self.context_item is None:
            self.notify("This message is not part of the context yet.")
            return
        self.post_message(ContextAction(ItemVerb(action), self.message.id))

    def action_neighbour(self, step: int) -> None:
        """Focus the message before (or after) this one; at the edge, scroll on (a page may load)."""
        listed = self.parent
        siblings = [c for c in listed.children if isinstance(c, MessageView)] if listed else []
        index = siblings.index(self) + step if self in siblings else -1
        if 0 <= index < len(siblings):
            siblings[index].focus()
        elif isinstance(listed, Widget):
            listed.call_later(listed.run_action, "scroll_up" if step < 0 else "scroll_down")

    def action_message(self, action: str) -> None:
        self.post_message(MessageAction(MessageVerb(action), self.message.id))

    def action_expand(self) -> None:
        if self.context_item is None or not self.context_item.summary:
            self.notify("This message has no summary: it is sent as it is, or not at all.")
            return
        self.toggle_class("-expanded")
        summary = self._lines["summary"]
        if not summary.is_attached:
            self.mount(summary, after=self._meta_line)

    def action_thinking(self) -> None:
        if not self._thought.strip():
            self.notify("This reply has no thinking to show.")
            return
        self.toggle_class("-thinking-shown")
        self._show_thinking()

    def _show_thinking(self) -> None:
        thought = self._thought.strip()
        if self.has_class("-thinking-shown"):
            head = Content.styled("💭 the model's thinking, not sent back to it · Alt+T hides it\n", "italic")
            shown = Content(inert(thought[:THINKING_SHOWN]))
            if len(thought) > THINKING_SHOWN:
                rest = len(thought) - THINKING_SHOWN
                shown += Content.styled(f"\n… and {rest:,} more characters, kept in the store.", "italic")
            self._say("thinking", head + shown)
            return
        words = f"{len(thought.split()):,} words"
        still = self._splitter is not None and self._splitter.thinking
        text = f"💭 thinking… {words}" if still else f"💭 thought {words} · Alt+T shows the thinking"
        self._say("thinking", Content.styled(text, "italic"))

    def _body(self, text: str) -> Widget:
        kind = _body_kind(len(text))
        if kind == "head":
            return LaidOutStatic(_head(text), classes="body")
        safe = inert(text)
        if kind == "plain":
            return TextArea(safe, read_only=True, soft_wrap=True, classes="body")
        if self.message.role == "user":
            # The user's words are shown exactly as typed, never interpreted as markup.
            return LaidOutStatic(Content(safe), classes="body")
        # Here, not at the top: a first screen with no reply to show does without markdown-it.
        from tui.widgets.message_markdown import MessageMarkdown, attachment_markdown

        if self.message.role == "tool":  # an attached file: its lines as code, not reflowed
            safe = attachment_markdown(safe) or safe
        return MessageMarkdown(safe, classes="body")

    def _show_problem(self) -> None:
        message = self.message
        problem = (
            message.error if message.status in (MessageStatus.FAILED, MessageStatus.INTERRUPTED) else None
        )
        self.set_class(bool(problem), "-problem")
        if problem:
            follow_up = (
                "Ctrl+G continues it · Ctrl+R asks again."
                if message.status == MessageStatus.INTERRUPTED and message.content
                else "Ctrl+R retries this turn."
            )
            # stored by an older Heedful, a server's error may still quote the key
            self._say("problem", Content(f"⚠ {inert(redact(problem))}  {follow_up}"))

    def update_message(self, message: StoredMessage) -> None:
        """Show a new state of the same message (finished, failed, interrupted, continuing)."""
        self.message = message
        self._meta_line.update(self._meta())
        self._show_problem()
        self.show_wait(None)

    def show_wait(self, reason: str | None, seconds: float = 0.0) -> None:
        """Count down to an automatic retry under the message (None: no retry pending)."""
        self._wait = None if reason is None else (reason, time.monotonic() + seconds)
        if self._wait_timer is not None:
            self._wait_timer.stop()
            self._wait_timer = None
        if self._wait is not None:
            self._wait_timer = self.set_interval(0.25, self._tick_wait)
        self._tick_wait()

    def _tick_wait(self) -> None:
        wait = self._wait
        self.set_class(wait is not None, "-waiting")
        if wait is None:
            return
        reason, due = wait
        left = max(0, round(due - time.monotonic()))
        when = f"in {left} s" if left else "now"
        self._say("waiting", Content(f"⟳ {inert(reason)}. Asking again {when}; Esc stops."))

    async def write(self, text: str) -> None:
        """Append streamed text to an assistant reply: gathered, and drawn every STREAM_FLUSH seconds.

        Drawing each piece costs a layout of the whole screen: at 200 pieces a second that took
        over 90% of a core. Pieces that arrive between two flushes are drawn together.
        """
        if self._wait is not None:
            self.show_wait(None)
        if self._splitter is None:
            self._splitter = ThinkingSplitter(self.message.content)  # a continued reply goes on from it
        if not self._drawn:
            answer = self.message.sent_text
            self._drawn, self._drawn_chars = [answer], len(answer)
        self._pending.append(text)
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(STREAM_FLUSH, self._flush)

    async def _flush(self) -> None:
        self._flush_timer = None
        if not self._pending:
            return
        piece = "".join(self._pending)
        self._pending.clear()
        splitter = self._splitter
        if splitter is not None:
            was_thinking = splitter.thinking
            thought, piece = splitter.feed(piece)
            self._thought += thought
            if thought or was_thinking != splitter.thinking:
                self._show_thinking()
            if not piece:
                return
        was = _body_kind(self._drawn_chars)
        self._drawn.append(piece)
        self._drawn_chars += len(piece)
        kind = _body_kind(self._drawn_chars)
        body = self._body_widget
        if kind != was:
            # The reply outgrew its body (Markdown, then plain text, then its start and a note):
            # draw it again in the cheaper one, once.
            await self._end_stream()
            self._drawn = ["".join(self._drawn)]
            self._body_widget = self._body(self._drawn[0])
            await body.remove()
            await self.mount(self._body_widget, after=self._above_body())
        elif isinstance(body, TextArea):
            body.insert(inert(piece), body.document.end)
        elif _is_markdown(body):
            if self._stream is None:
                self._stream = type(body).get_stream(body)
            await self._stream.write(inert(piece))
        elif isinstance(body, LaidOutStatic) and kind == "head":
            body.update(_head("".join(self._drawn)))  # only the note's count changes

    async def close_stream(self) -> None:
        """Draw what is still gathered, then end the stream."""
        if self._flush_timer is not None:
            self._flush_timer.stop()
        await self._flush()
        splitter, self._splitter = self._splitter, None
        if splitter is not None:  # what it held back, in case it was the start of a tag
            thought, rest = splitter.finish()
            self._thought += thought
            if rest:
                self._pending.append(rest)
                await self._flush()
        await self._end_stream()
        if self._thought.strip():
            self._show_thinking()  # "thought", no longer "thinking…"
        self._drawn = []  # the message holds the text now; a continued reply starts again from it

    def _above_body(self) -> Widget:
        """The line the body comes after: the thinking, the summary, or the meta line."""
        for kind in ("thinking", "summary"):
            line = self._lines.get(kind)
            if line is not None and line.parent is self:
                return line
        return self._meta_line

    async def _end_stream(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None


def _is_markdown(body: Widget) -> TypeGuard[Markdown]:
    """A Markdown body (there is none, nor markdown-it, until a reply is first shown)."""
    markdown = sys.modules.get("textual.widgets._markdown")
    return markdown is not None and isinstance(body, markdown.Markdown)


def _body_kind(chars: int) -> BodyKind:
    """How a message of ``chars`` characters is drawn (a user's short one: as plain Static text)."""
    if chars > SHOWN_LIMIT:
        return "head"
    return "plain" if chars > MARKDOWN_LIMIT else "markdown"


def _head(text: str) -> Content:
    """The start of a message too long to show, and a note saying the rest is kept and sent."""
    rest = text[SHOWN_HEAD:]
    note = (
        f"\n\n… and {len(rest):,} more characters ({rest.count(chr(10)):,} more lines), not shown "
        "here. All of it is stored, sent as the context allows, and Alt+Y copies it."
    )
    return Content(inert(text[:SHOWN_HEAD])) + Content.styled(note, "italic")
