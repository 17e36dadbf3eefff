"""The main screen: chat pane, composer and context panel."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from engine.chat import MessagePage, Session
from engine.errors import StoreError
from tui import heap, slash
from tui.log_gate import gated
from tui.messages import ContextAction, ItemVerb, MessageAction
from tui.screens.chat_commands import SlashCommands
from tui.screens.chat_context import ContextActions
from tui.screens.chat_draft import DraftHints
from tui.screens.chat_focus import FocusModel
from tui.screens.chat_memory import MemoryActions
from tui.screens.chat_messages import MessageActions
from tui.screens.chat_pages import EMPTY, LAST_SESSION, SessionPages
from tui.screens.chat_send import Sending
from tui.screens.chat_turn_view import TurnView
from tui.screens.chat_wording import welcome_text
from tui.services import AppServices
from tui.widgets.composer import Composer
from tui.widgets.context_panel import ContextPanel
from tui.widgets.header_bar import HeaderBar
from tui.widgets.help_footer import HelpFooter
from tui.widgets.laid_out_once import LaidOutStatic
from tui.widgets.message_list import MessageList

if TYPE_CHECKING:
    from textual.widgets import Markdown

    from engine.curation.consent import ConsentChoice
    from engine.curation.context_view import ContextView

TURN_GROUP = "turn"
LOAD_GROUP = "load"
USAGE_GROUP = "usage"
SUMMARY_GROUP = "summaries"
"""Model summaries being written after a turn (never waited for)."""
NARROW_WIDTH = 90
"""Terminals narrower than this hide the context panel until F2 asks for it."""


async def _finished(worker: Worker[None]) -> None:
    """Wait until ``worker`` has ended, however it ends. Cancelling this wait (Esc stopping the
    turn that waits) leaves the worker running: awaiting its task directly would cancel it too."""
    waiting = asyncio.ensure_future(worker.wait())
    waiting.add_done_callback(lambda done: done.cancelled() or done.exception())  # seen, not raised
    await asyncio.wait([waiting])


class ChatScreen(Screen[None]):
    """Chat with the model; every turn runs in a worker so typing never waits on the network."""

    CSS_PATH = "chat.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "stop", "Stop", tooltip="Stop the reply that is streaming", id="stop"),
        Binding("ctrl+r", "retry", "Retry", tooltip="Ask for the last reply again", id="retry"),
        Binding(
            "ctrl+g",
            "continue_reply",
            "Continue",
            show=False,
            tooltip="Continue a reply that was cut off, where it stopped",
            id="continue_reply",
        ),
        Binding("ctrl+n", "new_session", "New", tooltip="Start a new session", id="new_session"),
        Binding("ctrl+o", "sessions", "Sessions", tooltip="Open, rename or delete sessions", id="sessions"),
        Binding("alt+c", "copy_reply", "Copy", tooltip="Copy the last reply", id="copy_reply"),
        Binding(
            "f2", "toggle_context", "Context", tooltip="Show or hide the context panel", id="toggle_context"
        ),
        Binding(
            "f4",
            "consent",
            "Consent",
            tooltip="Answer Heedful's request to summarize or remove your older messages",
            id="consent",
        ),
        Binding("f5", "preview", "Preview", tooltip="Show exactly what the next request sends", id="preview"),
        Binding("f6", "ledger", "Ledger", tooltip="The session's forgetting log, with restore", id="ledger"),
        Binding("f3", "connect", "Connect", tooltip="How to connect a model", id="connect"),
        Binding("f1", "help", "Help", tooltip="Keys and help", id="help"),
        Binding(
            "tab",
            "cycle_focus(1)",
            "Next area",
            show=False,
            tooltip="Move to the next area: composer, context panel, conversation",
            id="focus_next",
        ),
        Binding(
            "shift+tab",
            "cycle_focus(-1)",
            "Previous area",
            show=False,
            tooltip="Move to the previous area: composer, context panel, conversation",
            id="focus_previous",
        ),
        Binding(
            "ctrl+home",
            "first_message",
            "First message",
            show=False,
            tooltip="Show the session from its first message",
            id="first_message",
        ),
        Binding(
            "ctrl+end",
            "latest_message",
            "Latest message",
            show=False,
            tooltip="Show the session's latest messages",
            id="latest_message",
        ),
    ]

    def __init__(self, services: AppServices) -> None:
        super().__init__()
        self.services = services
        self._session: Session | None = None
        self.context: ContextView | None = None
        """What the last (or next) request sends, as the panel shows it."""
        # Held rather than queried: workers update these after awaits, and a query that races the
        # app's shutdown (children already removed) would fail where an update is harmless.
        self.header = HeaderBar()
        # Before the first frame, rather than on mount: the first frame has them.
        self.header.show_title("New chat")
        self.header.show_model(services.model_name, offline=services.offline)
        self.message_list = MessageList(welcome_text(services.offline), id="messages")
        self.composer = Composer(id="composer")
        self.draft_hint = LaidOutStatic("", id="draft-hint")
        """What the message being typed would bring back, the commands it could be, or the edit."""
        self._narrow = False
        self.editing: int | None = None
        """The user message being edited in the composer: sending replaces it and what followed."""
        self.context_panel = ContextPanel(id="context")
        self.draft = DraftHints(self)
        self.message_actions = MessageActions(self)
        self.commands = SlashCommands(self)
        self.context_actions = ContextActions(self)
        self.memory_actions = MemoryActions(self)
        self.pages = SessionPages(self)
        self.turn_view = TurnView(self)
        self.focus_model = FocusModel(self)
        self.sending = Sending(self)

    # --- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.header
        with Horizontal(id="main"):
            with Vertical(id="chat-pane"):
                yield self.message_list
                yield self.draft_hint
                yield self.composer
            yield self.context_panel
        yield HelpFooter(compact=True)

    def on_mount(self) -> None:
        self.call_after_refresh(heap.started)  # the first frame is drawn: collections resume
        self.composer.focus()
        self.open_session(self.services.session_id)
        self.run_worker(self._fill_panel(), exit_on_error=False)  # the first frame does without it

    def on_resize(self, event: events.Resize) -> None:
        """Under NARROW_WIDTH columns the chat keeps the room: the panel hides (F2 still shows it)."""
        narrow = event.size.width < NARROW_WIDTH
        if narrow != self._narrow:
            self._narrow = narrow
            self.context_panel.display = not narrow

    @property
    def busy(self) -> bool:
        return any(not w.is_finished for w in self.workers if w.group == TURN_GROUP)

    @property
    def settled(self) -> bool:
        """No turn running, the panel's parts are mounted, and it shows what the next request would send."""
        if not self.context_panel.filled:
            return False
        return not any(not w.is_finished for w in self.workers if w.group in (TURN_GROUP, USAGE_GROUP))

    def refused_while_busy(self) -> bool:
        """True, and the user told why, if a reply is streaming (most actions wait for it)."""
        if self.busy:
            self.notify("A reply is still streaming. Esc stops it first.", severity="warning")
        return self.busy

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.busy or self.editing is not None
        return True

    # --- sessions ------------------------------------------------------------------------------

    @work(exclusive=True, group=LOAD_GROUP, exit_on_error=False)
    async def open_session(self, session_id: int | None, *, at_message: int | None = None) -> None:
        """Show a session (when ``session_id`` is None, the one on screen when the app last closed,
        or the latest): its latest page of messages, or the page around ``at_message`` (a search
        hit), scrolled to that message. Older and newer pages load as the user scrolls."""
        session, page, latest = await asyncio.to_thread(self.pages.opening, session_id, at_message=at_message)
        await self._show(session, page, at_message=at_message)
        if session is not None and latest.messages:
            # A session left alone since before this run (the app was closed) ends like an idle one.
            self.memory_actions.catch_up(session.id, latest.messages[-1].created_at)

    async def _show(
        self, session: Session | None, page: MessagePage, *, at_message: int | None = None
    ) -> None:
        if session is None or self.session is None or session.id != self.session.id:
            # The last session's (or new chat's) context must not stand in for this one's while
            # it is counted (a second or two for a long session): its rows would act on the
            # wrong messages.
            self.context = None
            self.header.show_counting()
            self.context_panel.show_counting()
        self._session = session
        with heap.loading():
            await self.message_list.show(page, focus=at_message)
            self.header.show_title(session.title if session else "New chat")
            if session is not None:
                await asyncio.to_thread(self.services.store.set_state, LAST_SESSION, str(session.id))
            await self.engine_ready()
            await self.commands.use_session_model(session)
            await self.refresh_usage()
        heap.settle()  # the session and its curation are loaded: they live until the next switch
        # Only now: importing the model's client competes with reading the session's curation
        # for the one interpreter (a second or more of a long session's opening). A message sent
        # meanwhile waits for the same warm-up, in a thread.
        self.commands.background(self._warm_up())

    @property
    def session(self) -> Session | None:
        """The session on screen; None for a new chat, stored with its first message."""
        return self._session

    def adopt_session(self, session: Session) -> None:
        """The session on screen was stored, or changed (a new chat's first message, a file
        attached to it): say so in the header."""
        self._session = session
        self.header.show_title(session.title)

    async def engine_ready(self) -> None:
        """Wait for the engine; the first time, load it once the screen is drawn (a thread imports
        it while the user can already read and type), then tell what the loading found."""
        if self.services.ready:
            return
        await self._first_frame_drawn()
        await self.context_panel.fill()  # before the thread starts: a short wait, less for it to share
        engine = await self.services.engine()
        self.commands.show_model()  # now with the provider it talks to
        for notice in engine.notices:
            self.notify(notice.text, severity=notice.severity, timeout=15)
        engine.notices.clear()

    async def _first_frame_drawn(self) -> None:
        """Return once the app's first frame is on the terminal (not just refreshed: Textual drops
        the frames it draws while its start-up holds updates back)."""
        first_frame = getattr(self.app, "first_frame", None)
        if isinstance(first_frame, asyncio.Event):
            await first_frame.wait()
        else:
            drawn = asyncio.Event()
            if self.call_after_refresh(drawn.set):
                await drawn.wait()

    async def _fill_panel(self) -> None:
        await self._first_frame_drawn()
        await self.context_panel.fill()

    async def _warm_up(self) -> None:
        from engine.text import analysis  # the text reader: not for the first frame

        await self.services.turns.warm_up()
        await asyncio.to_thread(analysis.warm_up)
        heap.keep()  # the client's modules, and the text reader's, live as long as the app

    @on(MessageList.NeedsMore)
    def _read_page(self, event: MessageList.NeedsMore) -> None:
        self.pages.read_next(event)

    @on(MessageList.FocusLost)
    def _focus_composer(self) -> None:
        self.composer.focus()

    @on(Composer.HistoryPaged)
    def _page_history(self, event: Composer.HistoryPaged) -> None:
        self.message_list.page(up=event.up)

    def action_first_message(self) -> None:
        self.pages.jump(to_start=True)

    def action_latest_message(self) -> None:
        self.pages.jump(to_start=False)

    async def refresh_usage(self) -> None:
        """Show what the next request would send, in the header and the panel."""
        view = await self.services.turns.preview(self.session.id if self.session else None)
        self.show_context(view)

    def show_context(self, view: ContextView) -> None:
        counter = self.services.counter
        self.context = view
        self.header.show_usage(view, exact=counter.exact)
        self.header.show_asking(len(view.consent.items) if view.consent else 0)
        self.context_panel.show(
            view, model=self.services.model_name, exact=counter.exact, counter=counter.description
        )
        self.message_list.show_context(view)
        self.context_actions.follow_build(view)

    # --- turns ---------------------------------------------------------------------------------

    @on(Composer.Submitted)
    def send(self, event: Composer.Submitted) -> None:
        read = slash.read(event.text)
        if isinstance(read, slash.UnknownCommand):
            self.notify(
                f"There is no command /{read.name}. /help lists them; // starts a message with a slash.",
                severity="warning",
            )
            return
        if isinstance(read, slash.Invocation):
            self.run_command(read)
            return
        if self.refused_while_busy():
            return
        self.sending.submit(read, event.draft)

    @work(exclusive=True, group=TURN_GROUP, exit_on_error=False)
    async def run_turn(
        self,
        text: str | None,
        *,
        resume: bool = False,
        branch_from: int | None = None,
        answer: ConsentChoice | None = None,
    ) -> None:
        """Send ``text`` (with None: retry the last turn, or continue its cut-off reply with
        ``resume``) and show the reply as it streams; ``answer``: the user's consent answer for
        the message sent (given when it was sent, as a large one)."""
        if not self.services.ready and text is not None:
            self.draft.show("⧗ Heedful is still loading: your message is sent as soon as it is ready.")
        # A session still being shown would replace the message list under this turn's feet (and
        # decides which session the message goes to): let it finish first.
        try:
            for loading in [w for w in self.workers if w.group == LOAD_GROUP and not w.is_finished]:
                await _finished(loading)
            await self.engine_ready()
        except asyncio.CancelledError:
            self.draft.show("")  # stopped before it was sent: it is still in the composer
            raise
        self.workers.cancel_group(self, USAGE_GROUP)  # the last turn's preview: this turn plans anew
        turns = self.services.turns
        session_id = self.session.id if self.session else None
        if text is None:
            if session_id is None:
                self.notify("Nothing to retry yet.")
                return
            events = turns.resume(session_id) if resume else turns.retry(session_id)
        else:
            if branch_from is not None and session_id is not None:
                from engine.turn.conversation_edits import (  # after the first frame
                    ConversationEdits,
                    NotEditable,
                )

                try:
                    gone = await ConversationEdits(turns.curations).branch_at(session_id, branch_from)
                except NotEditable as refused:
                    self.notify(str(refused), severity="warning")
                    return
                await self.message_list.drop(gone.ids)
            events = turns.send(session_id, text)
        try:
            await self.turn_view.show(events, sending=text)
            if answer is not None and self.turn_view.sent_id is not None:
                self.context_actions.answer_sent(self.turn_view.sent_id, answer)
        finally:
            self.memory_actions.restart_idle_timer()
            # Not awaited: planning the next request again takes a while in a long session, and
            # the user may send the next message meanwhile.
            self._after_turn()
            if self.session is not None:
                self._write_summaries(self.session.id)

    @work(exclusive=True, group=USAGE_GROUP, exit_on_error=False)
    async def _after_turn(self) -> None:
        """Show what the next request would send (never asking: that waits for the user to act)."""
        await self.refresh_usage()
        await asyncio.to_thread(self.services.store.checkpoint)
        heap.release()  # what the turn and its preview planning freed

    @work(group=SUMMARY_GROUP, exit_on_error=False)
    async def _write_summaries(self, session_id: int) -> None:
        """Have the model write the summaries the last plan asked for, in the background (while a
        run is under way, it takes them and this one ends at once); then the panel shows them,
        unless a turn is under way."""
        written = await self.services.turns.write_summaries(session_id)
        if written and not self.busy and self.session is not None and self.session.id == session_id:
            await self.refresh_usage()

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """One place for failures nobody planned for: tell the user, never show a traceback."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if isinstance(error, StoreError):
            self.notify(error.user_message, title="Could not save", severity="error", timeout=20)
        else:
            self.notify(
                f"{type(error).__name__}: {error}. Your message is kept; Ctrl+R retries.",
                title="Something went wrong",
                severity="error",
                timeout=20,
            )
        self.log.error("worker failed", gated(f"{type(error).__name__}: {error}"))

    # --- links in replies ----------------------------------------------------------------------

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """A link clicked in a reply (Textual's Markdown, imported only once one is shown)."""
        event.stop()
        self.message_actions.confirm_link(event.href)

    # --- actions -------------------------------------------------------------------------------

    def action_stop(self) -> None:
        if self.busy:
            self.workers.cancel_group(self, TURN_GROUP)
        elif self.editing is not None:
            self.editing = None
            self.composer.clear()
            self.draft.show("")
            self.notify("Edit cancelled; the conversation is as it was.")

    def action_retry(self) -> None:
        if self.refused_while_busy():
            return
        self.run_turn(None)

    def action_continue_reply(self) -> None:
        if self.refused_while_busy():
            return
        self.run_turn(None, resume=True)

    def action_new_session(self) -> None:
        if self.refused_while_busy():
            return
        if self.session is None:
            self.notify("This is already a new session.")
            return
        self.memory_actions.remember(self.session.id, asked=False)  # leaving it: the session ends here
        self.run_worker(self._show(None, EMPTY), group=LOAD_GROUP, exclusive=True)
        self.composer.focus()

    def action_sessions(self) -> None:
        from tui.screens.sessions import SessionChoice, SessionsScreen

        def chosen(choice: int | None) -> None:
            if choice is not None:
                if self.session is not None and self.session.id != choice:
                    self.memory_actions.remember(self.session.id, asked=False)
                hit = choice.message_id if isinstance(choice, SessionChoice) else None
                self.open_session(int(choice), at_message=hit)
            elif self.session is not None:
                # The open session may have been renamed or deleted in the picker.
                self.open_session(self.session.id)

        if self.refused_while_busy():
            return
        current = self.session.id if self.session else None
        self.app.push_screen(SessionsScreen(self.services.store, current=current), chosen)

    def action_copy_reply(self) -> None:
        self.pages.background(self._copy_reply())

    async def _copy_reply(self) -> None:
        reply = await self.pages.last_reply()
        if reply is None:
            self.notify("There is no reply to copy yet.")
            return
        self.message_actions.copy_text(reply.sent_text, "the last reply")

    def action_toggle_context(self) -> None:
        panel = self.context_panel
        panel.display = not panel.display
        if panel.display:
            self.focus_panel()
        else:
            self.composer.focus()

    def focus_panel(self) -> None:
        """Focus the context panel's rows: at once, or once mounted (asked for before the parts
        the first frame does without were)."""
        if self.context_panel.rows.is_mounted:
            self.context_panel.rows.focus()
        else:
            self.run_worker(self._focus_panel(), exit_on_error=False)

    async def _focus_panel(self) -> None:
        await self.context_panel.fill()
        if self.context_panel.display:
            self.context_panel.rows.focus()

    # --- the draft preview ----------------------------------------------------------------------

    @on(Composer.Changed, "#composer")
    def _draft_changed(self) -> None:
        self.draft.changed()

    # --- delegated to the screen's parts (tui/screens/chat_*.py) ---------------------------------

    @on(MessageAction)
    def _message_action(self, event: MessageAction) -> None:
        self.message_actions.on_action(event)

    @on(ContextAction)
    def _item_action(self, event: ContextAction) -> None:
        self.context_actions.run(event.action, event.item_id)

    def run_command(self, invocation: slash.Invocation) -> None:
        self.commands.run(invocation)

    def run_context_action(self, action: ItemVerb, item_id: int) -> None:
        self.context_actions.run(action, item_id)

    def action_preview(self) -> None:
        self.context_actions.preview()

    def action_ledger(self) -> None:
        self.context_actions.ledger()

    def action_consent(self) -> None:
        self.context_actions.consent()

    def action_cycle_focus(self, step: int) -> None:
        self.focus_model.cycle(step)

    def action_home(self) -> None:
        """Esc outside the composer: back to it (the panel, a message)."""
        self.focus_model.home()

    def on_key(self, event: events.Key) -> None:
        self.focus_model.typed(event)

    def on_paste(self, event: events.Paste) -> None:
        self.focus_model.pasted(event)

    def action_connect(self) -> None:
        from tui.screens.connect import ConnectScreen

        self.app.push_screen(ConnectScreen(self.services))

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.services.keys))
