"""What the chat screen's parts (tui/screens/chat_*.py) may use of the screen that holds them.

A narrow interface rather than the screen itself: a part reads and changes the screen only through
these members, and never imports tui/screens/chat.py (which imports the parts).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.timer import Timer, TimerCallback
    from textual.widget import Widget
    from textual.worker import Worker

    from engine.chat import Session
    from engine.curation.consent import ConsentChoice
    from engine.curation.context_view import ContextView
    from tui.services import AppServices
    from tui.widgets.composer import Composer
    from tui.widgets.context_panel import ContextPanel
    from tui.widgets.header_bar import HeaderBar
    from tui.widgets.laid_out_once import LaidOutStatic
    from tui.widgets.message_list import MessageList

TURN_GROUP = "turn"
LOAD_GROUP = "load"
USAGE_GROUP = "usage"
SUMMARY_GROUP = "summaries"
"""Model summaries being written after a turn (never waited for)."""
CONTEXT_GROUP = "context"
"""Workers of the user's actions on the context and on messages (several may run at once)."""


class ChatHost(Protocol):
    """The chat screen as its parts see it: the services, the widgets they drive, what is on screen."""

    services: AppServices
    header: HeaderBar
    message_list: MessageList
    composer: Composer
    context_panel: ContextPanel
    draft_hint: LaidOutStatic

    @property
    def app(self) -> App[Any]: ...

    @property
    def focused(self) -> Widget | None: ...

    @property
    def session(self) -> Session | None:
        """The session on screen; None for a new chat."""
        ...

    @property
    def context(self) -> ContextView | None:
        """What the next request sends, as the panel shows it (None while it is counted)."""
        ...

    @property
    def editing(self) -> int | None:
        """The user message being edited in the composer, if any."""
        ...

    @property
    def busy(self) -> bool: ...

    @property
    def settled(self) -> bool: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def call_after_refresh(self, callback: Callable[[], object]) -> bool: ...

    def set_timer(self, delay: float, callback: TimerCallback | None = None) -> Timer: ...

    def run_worker(
        self,
        work: Coroutine[Any, Any, None] | Callable[[], Coroutine[Any, Any, None]],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[None]: ...

    async def engine_ready(self) -> None:
        """Wait until the engine is loaded (the services' model, store and curations are usable)."""
        ...

    async def refresh_usage(self) -> None:
        """Show what the next request would send, in the header and the panel."""
        ...

    def show_context(self, view: ContextView) -> None: ...

    def adopt_session(self, session: Session) -> None:
        """The session on screen was stored or changed."""
        ...

    def refused_while_busy(self) -> bool: ...

    def edit(self, message_id: int | None) -> None:
        """Start editing the user message ``message_id`` in the composer (None: no edit)."""
        ...

    def run_turn(
        self,
        text: str | None,
        *,
        resume: bool = False,
        branch_from: int | None = None,
        answer: ConsentChoice | None = None,
    ) -> object:
        """Send ``text`` (None: retry the last turn, or continue it with ``resume``) in a worker."""
        ...

    def open_session(self, session_id: int | None, *, at_message: int | None = None) -> object:
        """Show the session ``session_id`` (at the message ``at_message``), in a worker."""
        ...

    def action_new_session(self) -> None: ...

    def action_help(self) -> None: ...
