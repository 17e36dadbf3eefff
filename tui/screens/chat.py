"""The main screen: chat pane, composer and context panel."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from engine.chat import MessagePage, Session
from tui import heap, slash
from tui.log_gate import gated
from tui.messages import ContextAction, MessageAction
from tui.screens.chat_bindings import CHAT_BINDINGS
from tui.screens.chat_commands import SlashCommands
from tui.screens.chat_context import ContextActions
from tui.screens.chat_draft import DraftHints
from tui.screens.chat_focus import FocusModel
from tui.screens.chat_host import LOAD_GROUP, TURN_GROUP, USAGE_GROUP
from tui.screens.chat_loading import EngineLoading, finished
from tui.screens.chat_memory import MemoryActions
from tui.screens.chat_messages import MessageActions
from tui.screens.chat_model import ModelSwitch
from tui.screens.chat_pages import EMPTY, LAST_SESSION, SessionPages
from tui.screens.chat_send import Sending
from tui.screens.chat_turn_view import TurnView
from tui.screens.chat_unsent import UnsentText
from tui.screens.chat_wording import unplanned_failure, welcome_text
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

NARROW_WIDTH = 90
"""Terminals narrower than this hide the context panel until F2 asks for it."""


class ChatScreen(Screen[None]):
    """Chat with the model; every turn runs in a worker so typing never waits on the network."""

    CSS_PATH = "chat.tcss"

    BINDINGS: ClassVar[list[BindingType]] = CHAT_BINDINGS

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
        self._editing: int | None = None
        self.context_panel = ContextPanel(id="context")
        # The parts (tui/screens/chat_*.py): each sees the screen as a ChatHost, and is handed the
        # parts it talks to.
        self.draft = DraftHints(self)
        self.models = ModelSwitch(self)
        self.engine_loading = EngineLoading(self, models=self.models)
        self.memory_actions = MemoryActions(self)
        self.context_actions = ContextActions(self)
        self.pages = SessionPages(self, memory=self.memory_actions)
        self.message_actions = MessageActions(self, draft=self.draft, pages=self.pages)
        self.commands = SlashCommands(
            self, context=self.context_actions, memory=self.memory_actions, models=self.models
        )
        self.turn_view = TurnView(self, draft=self.draft)
        self.focus_model = FocusModel(self)
        self.sending = Sending(self, context=self.context_actions)
        self.unsent = UnsentText(self)

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
        self.composer.focus()
        self.open_session(self.services.session_id)
        self.run_worker(self.engine_loading.fill_panel(), exit_on_error=False)  # after the first frame
        self.run_worker(self.unsent.restore(), exit_on_error=False)

    def on_unmount(self) -> None:
        self.unsent.keep()  # the app is closing

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
        running = any(not w.is_finished for w in self.workers if w.group in (TURN_GROUP, USAGE_GROUP))
        return self.context_panel.filled and not running

    def refused_while_busy(self) -> bool:
        """True, and the user told why, if a reply is streaming (most actions wait for it)."""
        if busy := self.busy:
            self.notify("A reply is still streaming. Esc stops it first.", severity="warning")
        return busy

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
            await self.models.use_session_model(session)
            await self.refresh_usage()
        heap.settle()  # the session and its curation are loaded: they live until the next switch
        # Only now: importing the model's client competes with reading the session's curation
        # for the one interpreter (a second or more of a long session's opening). A message sent
        # meanwhile waits for the same warm-up, in a thread.
        self.engine_loading.background(self.engine_loading.warm_up())

    @property
    def session(self) -> Session | None:
        """The session on screen; None for a new chat, stored with its first message."""
        return self._session

    @property
    def editing(self) -> int | None:
        """The user message being edited in the composer: sending replaces it and what followed."""
        return self._editing

    def edit(self, message_id: int | None) -> None:
        """Edit the user message ``message_id`` from now on (None: no edit)."""
        self._editing = message_id

    def adopt_session(self, session: Session) -> None:
        """The session on screen was stored, or changed (a new chat's first message, a file
        attached to it): say so in the header."""
        self._session = session
        self.header.show_title(session.title)

    async def engine_ready(self) -> None:
        """Wait for the engine (the first time, load it once the screen is drawn)."""
        await self.engine_loading.engine_ready()

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
                await finished(loading)
            await self.engine_ready()
        except asyncio.CancelledError:
            self.draft.show("")  # stopped before it was sent: it is still in the composer
            raise
        self.workers.cancel_group(self, USAGE_GROUP)  # the last turn's preview: this turn plans anew
        events = await self.turn_view.start(text, resume=resume, branch_from=branch_from)
        if events is None:
            return
        try:
            await self.turn_view.show(events, sending=text)
            if answer is not None and self.turn_view.sent_id is not None:
                self.context_actions.answer_sent(self.turn_view.sent_id, answer)
        finally:
            self.memory_actions.restart_idle_timer()
            self.turn_view.after()

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        """One place for failures nobody planned for: tell the user, never show a traceback."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        title, text = unplanned_failure(error)
        self.notify(text, title=title, severity="error", timeout=20)
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
            self._editing = None
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
        if not self.refused_while_busy():
            self.pages.choose_session()

    def action_copy_reply(self) -> None:
        self.message_actions.copy_last_reply()

    def action_toggle_context(self) -> None:
        self.focus_model.toggle_panel()

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
