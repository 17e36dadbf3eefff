"""The main screen: chat pane, composer and context panel."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Markdown, Static
from textual.worker import Worker, WorkerError, WorkerState

from engine.chat import MessageStatus, Session, StoredMessage
from engine.errors import ModelErrorKind, StoreError
from engine.turn import (
    ContextCurated,
    NothingToContinue,
    NothingToRetry,
    ReplyCompleted,
    ReplyFailed,
    ReplyResumed,
    ReplyStarted,
    ReplyTextArrived,
    RetryScheduled,
    TurnEvent,
    TurnNotice,
    UserMessageSaved,
)
from tui import heap, slash
from tui.messages import ContextAction
from tui.sanitize import inert
from tui.screens.consent import ConsentAnswer, ConsentScreen
from tui.screens.dialogs import ConfirmScreen
from tui.screens.inspect import InspectScreen
from tui.services import AppServices
from tui.widgets.composer import Composer, describe_size
from tui.widgets.context_panel import ContextPanel
from tui.widgets.header_bar import HeaderBar
from tui.widgets.message_list import MessageList
from tui.widgets.message_view import MessageView

if TYPE_CHECKING:
    from engine.context_view import ContextView

WAIT_REASONS = {
    ModelErrorKind.RATE_LIMIT: "The server is limiting requests (429)",
    ModelErrorKind.SERVER: "The server failed",
    ModelErrorKind.CONNECTION: "Could not connect to the server",
    ModelErrorKind.TIMEOUT: "Could not connect to the server in time",
}
"""What the countdown to an automatic retry says (the full message is shown if it fails for good)."""

TURN_GROUP = "turn"
LOAD_GROUP = "load"
CONTEXT_GROUP = "context"
DRAFT_GROUP = "draft"
NARROW_WIDTH = 90
"""Terminals narrower than this hide the context panel until F2 asks for it."""
EXACT_COUNT_CHARS = 100_000
CHARS_PER_TOKEN = 4
"""For the "is this message larger than the whole budget?" check before sending: messages up to
EXACT_COUNT_CHARS are counted (a few ms), longer ones estimated at CHARS_PER_TOKEN."""
DRAFT_DEBOUNCE = 0.4
"""Seconds of no typing before the draft preview runs."""


def welcome_text(offline: bool) -> Content:
    lines = [
        "Welcome to Heedful.",
        "",
        "Type a message below and press Enter. Ctrl+J starts a new line. "
        "The panel on the right (F2) shows what the model will be sent.",
    ]
    if offline:
        lines += [
            "",
            "No model is connected: replies come from the built-in offline model, which answers with a "
            "digest of what it received. F3 shows how to connect one.",
        ]
    return Content("\n".join(lines))


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
    ]

    def __init__(self, services: AppServices) -> None:
        super().__init__()
        self.services = services
        self.session: Session | None = None
        self.context: ContextView | None = None
        """What the last (or next) request sends, as the panel shows it."""
        self._consent_asked: set[int] = set()
        """Messages the consent dialog has already asked about: it opens by itself only for new ones."""
        self._reply_view: MessageView | None = None
        """The reply that is streaming, so a stop can show what the store kept of it."""
        # Held rather than queried: workers update these after awaits, and a query that races the
        # app's shutdown (children already removed) would fail where an update is harmless.
        self.header = HeaderBar()
        self.message_list = MessageList(welcome_text(services.offline), id="messages")
        self.composer = Composer(id="composer")
        self.draft_hint = Static("", id="draft-hint")
        """What the message being typed would bring back into the context (a debounced preview)."""
        self._draft_timer: Timer | None = None
        self._narrow = False
        self.context_panel = ContextPanel(id="context")

    # --- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.header
        with Horizontal(id="main"):
            with Vertical(id="chat-pane"):
                yield self.message_list
                yield self.draft_hint
                yield self.composer
            yield self.context_panel
        yield Footer(compact=True)

    def on_mount(self) -> None:
        header = self.header
        header.show_title("New chat")
        header.show_model(self.services.model_name, offline=self.services.offline)
        self.composer.focus()
        self.open_session(self.services.session_id)

    def on_resize(self, event: events.Resize) -> None:
        """Under NARROW_WIDTH columns the chat keeps the room: the panel hides (F2 still shows it)."""
        narrow = event.size.width < NARROW_WIDTH
        if narrow != self._narrow:
            self._narrow = narrow
            self.context_panel.display = not narrow

    @property
    def busy(self) -> bool:
        return any(not w.is_finished for w in self.workers if w.group == TURN_GROUP)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.busy
        return True

    # --- sessions ------------------------------------------------------------------------------

    @work(exclusive=True, group=LOAD_GROUP, exit_on_error=False)
    async def open_session(self, session_id: int | None) -> None:
        """Show a session (the latest one when ``session_id`` is None and no session is open)."""
        store = self.services.store

        def load() -> tuple[Session | None, list[StoredMessage]]:
            session = store.get_session(session_id) if session_id is not None else store.latest_session()
            return session, store.messages(session.id) if session else []

        session, messages = await asyncio.to_thread(load)
        await self._show(session, messages)

    async def _show(self, session: Session | None, messages: list[StoredMessage]) -> None:
        self.session = session
        await self.message_list.show(messages)
        self.header.show_title(session.title if session else "New chat")
        if session is not None:
            await asyncio.to_thread(self.services.store.set_state, "last_session", str(session.id))
        await self.refresh_usage()
        heap.settle()  # the session and its curation are loaded: they live until the next switch

    async def refresh_usage(self) -> None:
        """Show what the next request would send, in the header and the panel."""
        view = await self.services.turns.preview(self.session.id if self.session else None)
        self.show_context(view)

    def show_context(self, view: ContextView) -> None:
        counter = self.services.counter
        self.context = view
        self.header.show_usage(view, exact=counter.exact)
        self.context_panel.show(
            view, model=self.services.model_name, exact=counter.exact, counter=counter.description
        )
        self.message_list.show_context(view)

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
        if self.busy:
            self.notify("A reply is still streaming. Esc stops it.", severity="warning")
            return
        text = read
        budget = self.context.budget if self.context is not None else None
        # Exact for ordinary messages; rough beyond EXACT_COUNT_CHARS, where counting exactly would
        # hold up the UI for up to a second and the answer is plain anyway. Cancel keeps the text.
        counter = self.services.counter
        estimate = counter.count(text) if len(text) <= EXACT_COUNT_CHARS else len(text) // CHARS_PER_TOKEN
        if budget is None or estimate <= budget:
            self.run_turn(text)
            return

        def answered(send_anyway: bool | None) -> None:
            if send_anyway:
                self.run_turn(text)

        window = self.context.window if self.context is not None else budget
        self.app.push_screen(
            ConfirmScreen(
                f"This message is about {estimate:,} tokens ({describe_size(text)}): more than the "
                f"{budget:,} tokens a request to {self.services.model_name} may hold (its window is "
                f"{window:,}). The model will most likely refuse it or see only part of it.\n\n"
                "Send it anyway? It is stored either way once sent; Cancel keeps it in the composer.",
                confirm="Send anyway",
            ),
            answered,
        )

    @work(exclusive=True, group=TURN_GROUP, exit_on_error=False)
    async def run_turn(self, text: str | None, *, resume: bool = False) -> None:
        """Send ``text`` (with None: retry the last turn, or continue its cut-off reply with
        ``resume``) and show the reply as it streams."""
        # A session still being shown would replace the message list under this turn's feet (and
        # decides which session the message goes to): let it finish first.
        for loading in [w for w in self.workers if w.group == LOAD_GROUP and not w.is_finished]:
            with contextlib.suppress(WorkerError):
                await loading.wait()
        turns = self.services.turns
        session_id = self.session.id if self.session else None
        if text is None:
            if session_id is None:
                self.notify("Nothing to retry yet.")
                return
            events = turns.resume(session_id) if resume else turns.retry(session_id)
        else:
            events = turns.send(session_id, text)
        self._reply_view = None
        try:
            async with contextlib.aclosing(events) as stream:
                await self._follow(stream)
        except asyncio.CancelledError:
            if self._reply_view is not None:
                await self._settle(self._reply_view)
            self.notify("Stopped. The partial reply is kept; Ctrl+R asks again.")
            raise
        except StoreError as err:
            # The store failed under a streaming reply: what is on screen may not be saved.
            if self._reply_view is not None:
                await self._reply_view.close_stream()
                self._reply_view.update_message(
                    replace(
                        self._reply_view.message, status=MessageStatus.INTERRUPTED, error=err.user_message
                    )
                )
            raise
        except NothingToRetry:
            self.notify("Nothing to retry yet.")
        except NothingToContinue:
            self.notify("The last reply was not cut off: there is nothing to continue. Ctrl+R asks again.")
        finally:
            self._reply_view = None
            await self.refresh_usage()
        self._offer_consent()

    async def _follow(self, events: AsyncIterator[TurnEvent]) -> None:
        messages = self.message_list
        async for event in events:
            view = self._reply_view
            if isinstance(event, UserMessageSaved):
                self.session = event.session
                self.header.show_title(event.session.title)
                self.composer.clear()
                self._show_draft_hint("")
                await messages.add(event.message)
            elif isinstance(event, ContextCurated):
                self.show_context(event.view)
            elif isinstance(event, ReplyStarted):
                await messages.drop(event.superseded)
                self._reply_view = await messages.add(event.message)
            elif isinstance(event, ReplyResumed):
                resumed = messages.view_for(event.message.id) or await messages.add(event.message)
                resumed.update_message(event.message)
                self._reply_view = resumed
            elif isinstance(event, RetryScheduled) and view is not None:
                what = WAIT_REASONS.get(event.error.kind, "The request failed")
                view.show_wait(f"{what} (retry {event.retry} of {event.retries})", event.delay)
            elif isinstance(event, TurnNotice):
                self.notify(event.text, title="Context", severity="warning", timeout=15)
            elif isinstance(event, ReplyTextArrived) and view is not None:
                await view.write(event.text)
            elif isinstance(event, ReplyCompleted) and view is not None:
                await view.close_stream()
                view.update_message(event.message)
            elif isinstance(event, ReplyFailed) and view is not None:
                await view.close_stream()
                view.update_message(event.message)
                self._tell_failure(event)

    async def _settle(self, view: MessageView) -> None:
        """After a stop: show the reply as the store now has it (interrupted, text kept)."""
        await view.close_stream()
        stored = await asyncio.to_thread(self.services.store.messages, view.message.session_id)
        current = next((m for m in stored if m.id == view.message.id), None)
        if current is not None:
            view.update_message(current)

    def _tell_failure(self, event: ReplyFailed) -> None:
        error = event.error
        title = {
            ModelErrorKind.AUTH: "API key refused",
            ModelErrorKind.RATE_LIMIT: "Rate limited",
            ModelErrorKind.CONTEXT_LENGTH: "Too long for the model",
            ModelErrorKind.TIMEOUT: "The model did not answer in time",
            ModelErrorKind.CONNECTION: "Connection problem",
        }.get(error.kind, "The request failed")
        follow_up = (
            " The partial reply is kept: Ctrl+G continues it, Ctrl+R asks again."
            if event.message.content
            else " Ctrl+R retries."
        )
        self.notify(f"{error.user_message}{follow_up}", title=title, severity="error", timeout=12)

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
        self.log.error("worker failed", error)

    # --- links in replies ----------------------------------------------------------------------

    @on(Markdown.LinkClicked)
    def confirm_link(self, event: Markdown.LinkClicked) -> None:
        """Links in model output open only after the user has seen where they go."""
        event.stop()
        href = event.href

        def opened(confirmed: bool | None) -> None:
            if confirmed:
                self.app.open_url(href)

        self.app.push_screen(
            ConfirmScreen(f"Open this link in your browser?\n\n{href}", confirm="Open"), opened
        )

    # --- actions -------------------------------------------------------------------------------

    def action_stop(self) -> None:
        self.workers.cancel_group(self, TURN_GROUP)

    def action_retry(self) -> None:
        if self.busy:
            self.notify("A reply is still streaming. Esc stops it first.", severity="warning")
            return
        self.run_turn(None)

    def action_continue_reply(self) -> None:
        if self.busy:
            self.notify("A reply is still streaming. Esc stops it first.", severity="warning")
            return
        self.run_turn(None, resume=True)

    def action_new_session(self) -> None:
        if self.busy:
            self.notify("A reply is still streaming. Esc stops it first.", severity="warning")
            return
        if self.session is None:
            self.notify("This is already a new session.")
            return
        self.run_worker(self._show(None, []), group=LOAD_GROUP, exclusive=True)
        self.composer.focus()

    def action_sessions(self) -> None:
        from tui.screens.sessions import SessionsScreen

        def chosen(session_id: int | None) -> None:
            if session_id is not None:
                self.open_session(session_id)
            elif self.session is not None:
                # The open session may have been renamed or deleted in the picker.
                self.open_session(self.session.id)

        if self.busy:
            self.notify("A reply is still streaming. Esc stops it first.", severity="warning")
            return
        current = self.session.id if self.session else None
        self.app.push_screen(SessionsScreen(self.services.store, current=current), chosen)

    def action_copy_reply(self) -> None:
        reply = self.message_list.last_reply()
        if reply is None:
            self.notify("There is no reply to copy yet.")
            return
        self.app.copy_to_clipboard(reply.content)
        self.notify(f"Copied the last reply ({len(reply.content):,} characters).")

    def action_toggle_context(self) -> None:
        panel = self.context_panel
        panel.display = not panel.display
        if panel.display:
            panel.rows.focus()
        else:
            self.composer.focus()

    # --- slash commands -------------------------------------------------------------------------

    def run_command(self, invocation: slash.Invocation) -> None:
        """Carry out a slash command; the composer is cleared once it is accepted."""
        name, argument = invocation.command.name, invocation.argument
        if name in ("pin", "unpin", "forget", "restore"):
            target = self._command_target(argument)
            if target is None:
                return
            current = self.context.item(target) if self.context is not None else None
            pinned = current is not None and current.pinned
            if (name == "pin" and pinned) or (name == "unpin" and not pinned):
                self.notify(f"#{target} is {'already' if pinned else 'not'} pinned.")
            else:
                self.run_context_action("pin" if name in ("pin", "unpin") else name, target)
        elif name == "tokens":
            from tui.screens.tokens import TokensScreen

            if self.context is None:
                self.notify("Still counting; try again in a moment.")
                return
            self.app.push_screen(TokensScreen(self.context, exact=self.services.counter.exact))
        elif name == "attach":
            if not argument:
                self.notify("Say which file: /attach path/to/file.txt", severity="warning")
                return
            self.attach_file(argument)
        elif name == "new":
            self.action_new_session()
        elif name == "help":
            self.action_help()
        self.composer.clear()

    @work(group=CONTEXT_GROUP, exit_on_error=False)
    async def attach_file(self, argument: str) -> None:
        """Read a text file (off the event loop) and add it to the conversation as a tool item."""
        from pathlib import Path

        from engine.attachments import MAX_ATTACHMENT_BYTES, AttachmentRefused, attachment_text

        path = Path(argument)

        def read() -> tuple[bytes, int]:
            where = path.expanduser()
            with where.open("rb") as file:
                return file.read(MAX_ATTACHMENT_BYTES + 1), where.stat().st_size

        try:
            data, size = await asyncio.to_thread(read)
            text = attachment_text(path.name, data, size=size)
        except AttachmentRefused as refused:
            self.notify(refused.user_message, severity="warning", timeout=10)
            return
        except OSError as err:
            self.notify(f"Could not read {path}: {err.strerror or err}.", severity="warning", timeout=10)
            return
        session, view = await self.services.context.attach(
            self.session.id if self.session else None, path.name, text
        )
        self.session = session
        self.header.show_title(session.title)
        stored = await asyncio.to_thread(self.services.store.messages, session.id)
        await self.message_list.add(stored[-1])
        self.show_context(view)
        self.notify(f"Attached {path.name}: it is sent while the conversation refers to it.")

    def _command_target(self, argument: str) -> int | None:
        """The message a command names (#N), or the session's last message when it names none."""
        if self.context is None or not self.context.items:
            self.notify("There is no message to act on yet.", severity="warning")
            return None
        if not argument:
            return max(item.id for item in self.context.items)
        number = slash.message_number(argument)
        if number is None or self.context.item(number) is None:
            self.notify(
                f"No message {argument} in this session: write its number, like #12.", severity="warning"
            )
            return None
        return number

    # --- the draft preview ----------------------------------------------------------------------

    @on(Composer.Changed, "#composer")
    def _draft_changed(self) -> None:
        """Typing restarts a short wait; the preview runs only once the user pauses."""
        if self._draft_timer is not None:
            self._draft_timer.stop()
        commands = slash.completions(self.composer.text)
        if commands:
            self._show_draft_hint(
                " · ".join(f"/{c.name} {c.args}".strip() + f": {c.help}" for c in commands[:3])
                + ("  (Tab completes)" if commands else "")
            )
            return
        self._draft_timer = self.set_timer(DRAFT_DEBOUNCE, self._preview_draft)

    def _preview_draft(self) -> None:
        text = self.composer.text
        if not text.strip() or text.startswith("/") or self.session is None or self.busy:
            self._show_draft_hint("")
            return
        self.preview_draft(self.session.id, text)

    @work(group=DRAFT_GROUP, exclusive=True, exit_on_error=False)
    async def preview_draft(self, session_id: int, text: str) -> None:
        view = await self.services.context.draft(session_id, text)
        if self.composer.text != text:
            return  # typed on meanwhile: a newer preview is coming
        recalled = view.recalled
        if not recalled:
            self._show_draft_hint("")
            return
        names = ", ".join(f"#{i.id} {i.preview[:30]}" for i in recalled[:3])
        more = f" and {len(recalled) - 3} more" if len(recalled) > 3 else ""
        self._show_draft_hint(f"↺ Sending this brings back {len(recalled)}: {names}{more}")

    def _show_draft_hint(self, text: str) -> None:
        self.draft_hint.update(Content(inert(text)))
        self.draft_hint.display = bool(text)

    # --- the user's hand on the context ------------------------------------------------------------

    @on(ContextAction)
    def _item_action(self, event: ContextAction) -> None:
        self.run_context_action(event.action, event.item_id)

    @work(group=CONTEXT_GROUP, exit_on_error=False)
    async def run_context_action(self, action: str, item_id: int) -> None:
        """Pin, restore, forget or inspect a message; the engine decides, the panel shows the result."""
        from engine.curator import CurationRefused

        if self.session is None or self.context is None:
            return
        if self.busy:
            self.notify("A reply is still streaming; try again when it is done.", severity="warning")
            return
        context = self.services.context
        session_id = self.session.id
        if action == "inspect":
            detail = await context.inspect(session_id, item_id)

            def chosen(follow_up: str | None) -> None:
                if follow_up is not None:
                    self.run_context_action(follow_up, item_id)

            await self.app.push_screen(InspectScreen(detail), chosen)
            return
        current = self.context.item(item_id)
        try:
            if action == "pin":
                pinned = not (current is not None and current.pinned)
                view = await context.pin(session_id, item_id, pinned=pinned)
                said = (
                    f"Pinned #{item_id}: it is always sent verbatim." if pinned else f"Unpinned #{item_id}."
                )
            elif action == "restore":
                view = await context.restore(session_id, item_id)
                restored = view.item(item_id)
                said = (
                    f"Restored #{item_id}: it is sent verbatim again."
                    if restored is not None and restored.in_prompt
                    else f"Restored #{item_id}, but the next request has no room for it: pin it to send it."
                )
            elif action == "forget":
                view = await context.forget(session_id, item_id)
                said = f"Forgot #{item_id}. It stays in the store; r restores it."
            else:
                raise ValueError(f"unknown context action {action!r}")
        except CurationRefused as refused:
            self.notify(str(refused), severity="warning")
            return
        self.show_context(view)
        self.notify(said)

    def action_preview(self) -> None:
        from tui.screens.preview import PreviewScreen

        if self.context is None:
            self.notify("Still counting; try again in a moment.")
            return
        self.app.push_screen(PreviewScreen(self.context, exact=self.services.counter.exact))

    @work(group=CONTEXT_GROUP, exit_on_error=False)
    async def action_ledger(self) -> None:
        from tui.screens.ledger import LedgerScreen

        if self.session is None:
            self.notify("Nothing has been decided yet: the ledger starts with the first message.")
            return
        entries = await self.services.context.ledger(self.session.id)

        def chosen(item_id: int | None) -> None:
            if item_id is not None:
                self.run_context_action("restore", item_id)

        await self.app.push_screen(LedgerScreen(entries), chosen)

    def action_consent(self) -> None:
        if self.context is None or self.context.consent is None:
            self.notify("Heedful has nothing to ask about your messages right now.")
            return
        self._ask_consent()

    def _offer_consent(self) -> None:
        """After a turn: open the consent dialog if it has something new to ask."""
        consent = self.context.consent if self.context else None
        if consent is not None and any(i.item_id not in self._consent_asked for i in consent.items):
            self._ask_consent()

    def _ask_consent(self) -> None:
        consent = self.context.consent if self.context else None
        if consent is None or self.session is None:
            return
        self._consent_asked.update(i.item_id for i in consent.items)
        session_id = self.session.id

        def answered(answer: ConsentAnswer | None) -> None:
            if answer is None:
                self.notify("Your messages stay as they are. F4 answers later.")
            else:
                self.record_consent(session_id, answer)

        self.app.push_screen(ConsentScreen(consent), answered)

    @work(group=CONTEXT_GROUP, exit_on_error=False)
    async def record_consent(self, session_id: int, answer: ConsentAnswer) -> None:
        view = await self.services.context.answer_consent(
            session_id, answer.answers, remember=answer.remember
        )
        if self.session is not None and self.session.id == session_id:
            self.show_context(view)
        counts: dict[str, int] = {}
        for choice in answer.answers.values():
            counts[choice.value] = counts.get(choice.value, 0) + 1
        summary = ", ".join(f"{n} {choice}" for choice, n in counts.items())
        remembered = f"; from now on: {answer.remember.value}" if answer.remember else ""
        self.notify(f"Recorded your answer ({summary}){remembered}.")

    def action_connect(self) -> None:
        from tui.screens.connect import ConnectScreen

        self.app.push_screen(ConnectScreen(self.services))

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.services.keys))
