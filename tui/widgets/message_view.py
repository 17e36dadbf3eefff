"""One message in the chat pane."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import TextArea

from engine.chat import StoredMessage
from engine.curation.context_view import ItemView, Section
from engine.text.thinking import ThinkingSplitter, split_thinking
from tui.bindings import key
from tui.messages import ContextAction, ItemVerb, MessageAction, MessageVerb
from tui.sanitize import inert
from tui.widgets.item_keys import item_bindings
from tui.widgets.laid_out_once import LaidOutOnce, LaidOutStatic
from tui.widgets.message_body import body_kind, head_text, is_markdown, make_body
from tui.widgets.message_lines import meta_text, problem_text, thinking_text, waiting_text

if TYPE_CHECKING:
    from textual.widgets.markdown import MarkdownStream

STREAM_FLUSH = 0.1
"""Seconds between two draws of a streaming reply (ten a second reads as smooth)."""

LineKind = Literal["summary", "thinking", "waiting", "problem"]


def _drawn_of(item: ItemView | None) -> tuple[object, ...]:
    """What a message shows of its place in the next request: its mark, dimmed or not, its summary."""
    if item is None:
        return (None, False, None)
    return (item.mark, item.section is Section.PRUNED, item.summary)


class MessageView(Vertical, LaidOutOnce, can_focus=True):
    """A message: a meta line (who, when, state, context), its text, and a problem line when it failed.

    Focused, it takes the context panel's keys for itself: Alt+P pin, Alt+R restore, Alt+F forget,
    Enter inspect, and Alt+E shows or hides the summary of a summarized message (plain keys are
    typing: they go to the composer). A reasoning model's thinking (see :mod:`engine.text.thinking`) is
    one line above the answer, its length; Alt+T shows it. ↑ ↓ move to the next message.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *item_bindings("context", "this message"),
        key("enter", "context('inspect')", "Why?", "Why this message is where it is", name="inspect"),
        key("alt+e", "expand", "Summary", "Show or hide the summary sent instead"),
        key("alt+t", "thinking", "Thinking", "Show or hide the model's thinking"),
        key("alt+i", "message('edit')", "Edit", "Edit your message and send it again from here", name="edit"),
        key("alt+d", "message('delete')", "Delete", "Delete this message (kept in the store)", name="delete"),
        key("alt+y", "message('copy')", "Copy", "Copy this message", name="copy_message"),
        key("alt+c", "message('copy_code')", "Copy code", "Copy this message's code block", name="copy_code"),
        key("up", "neighbour(-1)", "Previous", name="message_previous", show=False),
        key("down", "neighbour(1)", "Next", name="message_next", show=False),
        key("escape", "screen.home", "Composer", name="home"),
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
        self._body_widget = make_body(answer, message.role)
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
        return meta_text(self.message, self.context_item)

    def show_context(self, item: ItemView | None) -> None:
        """Mark the message with its state in the next request; pruned ones are dimmed, not hidden."""
        before, self.context_item = self.context_item, item
        if _drawn_of(item) == _drawn_of(before):
            return  # a new score or reason: nothing the message shows (the panel's rows do)
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
        still = self._splitter is not None and self._splitter.thinking
        shown = self.has_class("-thinking-shown")
        self._say("thinking", thinking_text(self._thought, shown=shown, still=still))

    def _show_problem(self) -> None:
        problem = problem_text(self.message)
        self.set_class(bool(problem.plain), "-problem")
        if problem.plain:
            self._say("problem", problem)

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
        self._say("waiting", waiting_text(reason, max(0, round(due - time.monotonic()))))

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
        was = body_kind(self._drawn_chars)
        self._drawn.append(piece)
        self._drawn_chars += len(piece)
        kind = body_kind(self._drawn_chars)
        body = self._body_widget
        if kind != was:
            # The reply outgrew its body (Markdown, then plain text, then its start and a note):
            # draw it again in the cheaper one, once.
            await self._end_stream()
            self._drawn = ["".join(self._drawn)]
            self._body_widget = make_body(self._drawn[0], self.message.role)
            await body.remove()
            await self.mount(self._body_widget, after=self._above_body())
        elif isinstance(body, TextArea):
            body.insert(inert(piece), body.document.end)
        elif is_markdown(body):
            if self._stream is None:
                self._stream = type(body).get_stream(body)
            await self._stream.write(inert(piece))
        elif isinstance(body, LaidOutStatic) and kind == "head":
            body.update(head_text("".join(self._drawn)))  # only the note's count changes

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
