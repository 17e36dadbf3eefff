"""Run the real ``heedful`` app as a subprocess in a pseudo-terminal, for tests that need the real thing.

The app is started as ``python -m cli`` with its stdin, stdout and stderr on the slave side of a
pty (TERM=xterm-256color, a fixed window size set with TIOCSWINSZ and COLUMNS/LINES), in its own
session so a signal reaches it alone. A reader thread drains the master side into a buffer: a
terminal app blocks once nobody reads what it writes. Config and data go where the test's
``HEEDFUL_CONFIG`` and ``HEEDFUL_DATA_DIR`` point (see conftest.py), and OpenAI settings from the
developer's environment never reach the app.

    with PtyApp.start(["--base-url", server.base_url, "--model", "fake-model"]) as app:
        app.wait_for_output(b"fake-model")
        send_message(app, database, "hello")
        wait_until(lambda: ..., what="the reply is stored")

Leaving the ``with`` block (or calling :meth:`PtyApp.close`) always kills the process and closes
the pty, whether the test passed or not; :func:`running_apps` does it for a whole test as a fixture.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
COLUMNS, LINES = 100, 30
START_TIMEOUT = 30.0
"""Seconds a start may take on a loaded machine (a quiet one needs about one)."""

_OPENAI_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")

BRACKETED_PASTE_START = b"\x1b[200~"
BRACKETED_PASTE_END = b"\x1b[201~"
PERSON_PAUSE = 0.1
"""Seconds between typing a message and pressing Enter (see tui.widgets.composer.TYPED_PASTE_GAP)."""

_T = TypeVar("_T")


def wait_until(
    predicate: Callable[[], _T | None], timeout: float = 20.0, *, what: str = "", interval: float = 0.05
) -> _T:
    """Call ``predicate`` until it returns something truthy, and return that.

    Raises:
        AssertionError: ``timeout`` seconds passed first (the message says ``what`` was awaited).
    """
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(interval)


class PtyApp:
    """One running app in a pty; see the module docstring."""

    def __init__(self, process: subprocess.Popen[bytes], master: int) -> None:
        self.process = process
        self.master = master
        self._buffer = bytearray()
        self._lock = threading.Lock()
        self._closed = False
        self._reader = threading.Thread(target=self._drain, name=f"pty-reader-{process.pid}", daemon=True)
        self._reader.start()

    # --- starting --------------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        args: Sequence[str] = (),
        *,
        env: dict[str, str] | None = None,
        columns: int = COLUMNS,
        lines: int = LINES,
    ) -> PtyApp:
        """Start ``python -m cli ARGS`` in a new pty of ``columns`` × ``lines``.

        Args:
            args: The command-line arguments, e.g. ``["--base-url", url, "--model", "fake-model"]``.
            env: Extra environment variables, on top of this process's (minus OpenAI settings).
        """
        environment = {k: v for k, v in os.environ.items() if k not in _OPENAI_ENV}
        environment.update(
            TERM="xterm-256color",
            COLUMNS=str(columns),
            LINES=str(lines),
            PYTHONPATH=str(ROOT),
            PYTHONDONTWRITEBYTECODE="1",
        )
        for name in ("NO_COLOR", "TEXTUAL", "TEXTUAL_DRIVER", "TEXTUAL_DEBUG", "TMUX"):
            environment.pop(name, None)
        environment.update(env or {})
        for name in ("HEEDFUL_DATA_DIR", "HEEDFUL_CONFIG"):
            # Never the developer's own chats and config (conftest.py points these at tmp_path).
            assert environment.get(name), f"{name} must be set for an app under test"
        master, slave = os.openpty()
        try:
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
            process = subprocess.Popen(
                [sys.executable, "-m", "cli", *args],
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=ROOT,
                env=environment,
                close_fds=True,
                start_new_session=True,  # its own session: a signal for it reaches nothing else
            )
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        os.close(slave)  # the child holds its own copy; EOF on the master once it exits
        return cls(process, master)

    # --- output ------------------------------------------------------------------------------------

    def _drain(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.1)
            except (OSError, ValueError):
                return  # the fd was closed
            if not ready:
                if self._closed:
                    return
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError as err:
                if err.errno == errno.EINTR:
                    continue
                return  # EIO: the child side is closed
            if not data:
                return
            with self._lock:
                self._buffer += data

    @property
    def output(self) -> bytes:
        """Every byte the app has written to its terminal so far."""
        with self._lock:
            return bytes(self._buffer)

    def mark(self) -> int:
        """The current length of the output, to look only at what comes after it."""
        with self._lock:
            return len(self._buffer)

    def output_since(self, mark: int) -> bytes:
        with self._lock:
            return bytes(self._buffer[mark:])

    def quiet_output(self, *, since: int = 0, quiet: float = 0.3, timeout: float = 10.0) -> bytes:
        """The output after ``since`` once the app has written nothing for ``quiet`` seconds.

        A check of the output as it comes can see a frame cut in the middle of an escape
        sequence (the pty hands it over in pieces): the start of a colour looks like a stray ESC.
        """
        deadline = time.monotonic() + timeout
        seen = self.mark()
        while time.monotonic() < deadline:
            time.sleep(quiet)
            now = self.mark()
            if now == seen:
                break
            seen = now
        return self.output_since(since)

    def wait_for_output(self, needle: bytes, timeout: float = 20.0, *, since: int = 0) -> None:
        """Wait until ``needle`` appears in the output after ``since``; fail if the app dies first."""

        def seen() -> bool:
            if needle in self.output_since(since):
                return True
            self.assert_alive()
            return False

        wait_until(seen, timeout, what=f"{needle!r} on the terminal")

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Wait until the chat screen is drawn with its composer (the placeholder is on screen)."""
        self.wait_for_output(b"Enter sends", timeout)

    def wait_for(self, predicate: Callable[[], _T | None], timeout: float = 20.0, *, what: str = "") -> _T:
        """:func:`wait_until`, failing at once (with the app's last output) if the app exits."""

        def check() -> _T | None:
            result = predicate()
            if not result:
                self.assert_alive()
            return result

        return wait_until(check, timeout, what=what)

    def assert_alive(self) -> None:
        code = self.process.poll()
        if code is not None:
            tail = self.output[-2000:].decode("utf-8", "replace")
            raise AssertionError(f"the app exited with {code}; its last output:\n{tail}")

    # --- input -------------------------------------------------------------------------------------

    def type(self, text: str | bytes) -> None:
        """Write ``text`` to the app's terminal as keystrokes (Enter is ``"\\r"``)."""
        data = text.encode() if isinstance(text, str) else text
        while data:
            written = os.write(self.master, data)
            data = data[written:]

    def paste(self, text: str | bytes) -> None:
        """Paste ``text`` as a terminal does with bracketed paste on."""
        data = text.encode() if isinstance(text, str) else text
        self.type(BRACKETED_PASTE_START + data + BRACKETED_PASTE_END)

    # --- ending --------------------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill(self, sig: int = signal.SIGKILL, timeout: float = 10.0) -> int:
        """Send ``sig`` and wait for the process to exit; returns its return code."""
        if self.process.poll() is None:
            os.kill(self.process.pid, sig)
        return self.process.wait(timeout)

    def quit(self, timeout: float = 15.0) -> int:
        """Quit as the user does (Ctrl+Q) and wait for a clean exit."""
        self.type(b"\x11")
        return self.process.wait(timeout)

    def close(self) -> None:
        """Kill the app if it still runs, reap it, and close the pty. Safe to call twice."""
        try:
            if self.process.poll() is None:
                with suppress(ProcessLookupError):
                    os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        finally:
            if not self._closed:
                self._closed = True
                self._reader.join(5)
                os.close(self.master)

    def __enter__(self) -> PtyApp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def running_apps() -> Iterator[Callable[..., PtyApp]]:
    """A ``start(args, **kw)`` function; every app it started is closed on the way out, even when
    closing another one failed."""
    with ExitStack() as stack:

        def start(args: Sequence[str] = (), **kwargs: Any) -> PtyApp:
            app = PtyApp.start(args, **kwargs)
            stack.callback(app.close)
            return app

        yield start


# --- the app's database, read from the test while apps run -------------------------------------


def read_store(database: Path, sql: str, parameters: Sequence[object] = ()) -> list[tuple[object, ...]]:
    """Rows of ``sql`` on ``database`` through a read-only connection of its own; [] before the
    app has created its tables.

    Read-only on purpose: :func:`sessions.store.open_store` would finish every reply still marked
    "streaming", including the one a running app is writing.
    """
    if not database.exists():
        return []
    conn = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True, timeout=10.0)
    try:
        return conn.execute(sql, tuple(parameters)).fetchall()
    except sqlite3.OperationalError as err:
        if "no such table" in str(err):
            return []
        raise
    finally:
        conn.close()


def integrity_check(database: Path) -> list[str]:
    """What ``PRAGMA integrity_check`` says (``["ok"]`` when sound), via a plain connection that
    recovers the WAL as any reader would, and changes nothing else."""
    conn = sqlite3.connect(database, timeout=10.0)
    try:
        return [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()


def send_message(app: PtyApp, database: Path, text: str, timeout: float = 30.0) -> None:
    """Type ``text``, press Enter, and wait until the app has stored it as a user message.

    The app refuses Enter while its previous turn is still finishing (the text stays in the
    composer), so Enter is pressed again until the message is stored; it is never sent twice,
    because a sent message leaves the composer empty.
    """
    app.type(text)
    # As a person would: an Enter hard on the heels of the text waits to see if a paste goes on.
    time.sleep(PERSON_PAUSE)

    def stored() -> bool:
        return bool(
            read_store(database, "SELECT 1 FROM messages WHERE role = 'user' AND content = ?", [text])
        )

    deadline = time.monotonic() + timeout
    while True:
        app.type("\r")
        try:
            app.wait_for(stored, min(0.5, max(0.1, deadline - time.monotonic())), what=f"{text!r} stored")
            return
        except AssertionError:
            app.assert_alive()
            if time.monotonic() > deadline:
                raise
