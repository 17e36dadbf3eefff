"""The Textual application: themes, app-wide commands, and the chat screen."""

from __future__ import annotations

import asyncio
import contextlib
import io
import signal
import time
from collections.abc import Iterable
from functools import partial
from typing import Any

from rich.console import RenderableType
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from engine.errors import StoreError
from engine.text.redaction import redact
from themes import DEFAULT_THEME, THEMES
from tui import heap, log_gate, textual_fixes
from tui.sanitize import inert
from tui.screens.chat import ChatScreen
from tui.services import THEME_STATE_KEY, AppServices, Notice

PANEL_COMMANDS = frozenset({"pin", "restore", "forget", "filter"})
"""Context panel actions the command palette offers too (they act on the highlighted row)."""


class HeedfulApp(App[None]):
    """Heedful. Small on purpose: workflows live in the screens."""

    TITLE = "Heedful"
    CSS_PATH = "screens/chat.tcss"
    """The first screen's (ChatScreen.CSS_PATH): read with the rest at start, Textual does not
    parse all the CSS again when the screen is pushed."""

    def __init__(self, services: AppServices, *, theme: str | None = None) -> None:
        super().__init__()
        textual_fixes.install()
        log_gate.install()
        heap.limit_arenas()  # before the workers' threads start
        self.services = services
        self._theme_restored = False
        self._signals: list[signal.Signals] = []
        self._toasts_until: dict[tuple[str, str, str], float] = {}
        """Each toast on screen (its words, title and severity) and when it goes."""
        self.first_frame = asyncio.Event()
        """Set once a frame has been drawn on the terminal: what is loaded after the first frame
        waits for it (see :meth:`_display`)."""
        # Before the stylesheet is first parsed: set on mount, the theme had all the CSS parsed
        # again, twice, before the first frame.
        for each in THEMES:
            self.register_theme(each)
        self.theme = theme if theme in self.available_themes else DEFAULT_THEME
        self._theme_restored = True

    def _display(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        """Textual drops the frames it draws while its start-up holds updates back (until the
        first screen is mounted): refreshed is not drawn. The first frame that is drawn (written,
        or would be when headless) sets :attr:`first_frame`."""
        super()._display(screen, renderable)
        if renderable is not None and not self._batch_count and not self.first_frame.is_set():
            self.first_frame.set()
            heap.started()  # collections resume once the user has the first frame

    def get_theme_variable_defaults(self) -> dict[str, str]:
        # Textual's own themes lack Heedful's variables; these keep the CSS valid under them.
        return {
            "heedful-user": "ansi_bright_blue",
            "heedful-assistant": "ansi_bright_green",
            "heedful-muted": "ansi_bright_black",
        }

    def on_mount(self) -> None:
        if self.services.keys:  # a [keys] table: checked against every screen's bindings
            from tui.keys import check_keymap

            keymap, problems = check_keymap(self.services.keys)
            self.set_keymap(keymap)
            self.services.notices.extend(Notice(problem, "warning") for problem in problems)
        self.push_screen(ChatScreen(self.services))
        # After the push: a toast raised before the chat screen exists would stay on the screen below.
        self.call_after_refresh(self._show_notices, self.services.notices)
        self._handle_signals()
        # Not urgent: after the first screen and the session are up, not competing with them.
        self.set_timer(1.0, partial(self.run_worker, self._tell_about_tmux, thread=True, exit_on_error=False))

    def _handle_signals(self) -> None:
        """SIGTERM and SIGHUP (a kill, a closed terminal) close the app as Ctrl+Q does: the reply
        streaming is saved with what arrived and marked interrupted, and the terminal is restored."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
                loop.add_signal_handler(sig, self._close_on_signal, sig)
                self._signals.append(sig)

    def _close_on_signal(self, sig: signal.Signals) -> None:
        if self.services.ready:  # else no turn can be streaming (nor the engine imported)
            from engine.turn.service import closed_by_signal

            self.services.turns.stop_reason = closed_by_signal(sig.name)
        self.exit()

    def _tell_about_tmux(self) -> None:
        """In a thread: tell the user (once for each value) when tmux may join Esc and a letter."""
        from tui.tmux_keys import TOLD_STATE, escape_notice, escape_time

        waited = escape_time()
        said = escape_notice(waited)
        store = self.services.store
        if said is None or store.get_state(TOLD_STATE) == str(waited):
            return
        with contextlib.suppress(StoreError):  # a read-only database: told again next time
            store.set_state(TOLD_STATE, str(waited))
        self.call_from_thread(self.notify, said, severity="warning", timeout=20)

    def _show_notices(self, notices: list[Notice]) -> None:
        for notice in notices:
            self.notify(
                notice.text, severity=notice.severity, timeout=15 if notice.severity != "information" else 8
            )

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification is plain text: they quote paths, titles and server errors, and markup
        would turn a "[" in those into a crash or a clickable action. An exception's text may quote a
        server's error and the key in it: every notification passes the redaction gate. The same
        words twice while the first toast still shows (a failure retried) are shown once."""
        message, title = inert(redact(message)), inert(redact(title))
        now = time.monotonic()
        self._toasts_until = {key: until for key, until in self._toasts_until.items() if until > now}
        key = (message, title, severity)
        if key in self._toasts_until:
            return
        self._toasts_until[key] = now + (self.NOTIFICATION_TIMEOUT if timeout is None else timeout)
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def _fatal_error(self) -> None:
        """Textual's report of a crash (printed when the app ends), without the frames' local
        variables, where Textual shows them and a client's frame holds the key, and through the
        redaction gate: the exception may quote a server's error and the key in it."""
        import rich
        from rich.console import Console
        from rich.text import Text
        from rich.traceback import Traceback

        self.bell()
        report = io.StringIO()
        Console(file=report, width=self.console.width, color_system=None).print(
            Traceback(show_locals=False, suppress=[rich])
        )
        self._exit_renderables.append(Text(inert(redact(report.getvalue()))))
        self._close_messages_no_wait()

    async def on_unmount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            loop.remove_signal_handler(sig)
        # Close HTTP connections on the loop that opened them; left to the garbage collector they
        # would be closed after the loop is gone.
        if self.services.ready:  # else no model was built, nor a connection opened
            await self.services.turns.model.aclose()  # perhaps not one of the catalog's (a test's)
            await self.services.models.aclose()

    def watch_theme(self, theme: str) -> None:
        """Remember the theme in app state (never in the user's config file)."""
        if self._theme_restored:
            self.run_worker(
                partial(self.services.store.set_state, THEME_STATE_KEY, theme), thread=True, group="state"
            )

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, ChatScreen):
            for binding in screen.BINDINGS:
                if isinstance(binding, Binding) and binding.tooltip:
                    yield SystemCommand(
                        binding.description, binding.tooltip, partial(screen.run_action, binding.action)
                    )
            yield SystemCommand(
                "Model",
                "Choose this session's model, from each provider's list (/model)",
                screen.commands.choose_model,
            )
            yield SystemCommand(
                "Forgetting statistics",
                "Tokens saved; messages summarized, pruned, recalled, and pruned then recalled",
                screen.context_actions.stats,
            )
            panel = screen.context_panel
            for binding in panel.BINDINGS:
                if isinstance(binding, Binding) and binding.id in PANEL_COMMANDS:
                    yield SystemCommand(
                        f"{binding.description} (context panel)",
                        f"{binding.tooltip} (the row highlighted in the context panel)",
                        partial(panel.run_action, binding.action),
                    )
