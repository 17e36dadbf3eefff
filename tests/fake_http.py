"""The HTTP/1.1 writing under the fake OpenAI server: a body, server-sent events in chunks, a
dropped connection, and a wait that ends when the server stops or the client hangs up."""

from __future__ import annotations

import json
import select
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class WireServer(ThreadingHTTPServer):
    """A threaded server whose handlers' waits end when ``stopping`` is set."""

    daemon_threads = True
    stopping: threading.Event


class WireHandler(BaseHTTPRequestHandler):
    """Writes answers as a real server does, kept alive, over a connection with Nagle off."""

    protocol_version = "HTTP/1.1"
    # Without it, Nagle's algorithm and delayed ACKs stall each small SSE write by ~40 ms.
    disable_nagle_algorithm = True
    server: WireServer

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError):
            # The client dropped a kept-alive connection (as it does after a broken stream); the
            # base class would print a traceback for it.
            self.close_connection = True

    def _send_body(self, status: int, body: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", "req_" + uuid.uuid4().hex[:12])
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send_body(status, json.dumps(obj).encode(), "application/json", headers or {})

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _sse(self, obj: Any) -> None:
        payload = obj if isinstance(obj, str) else json.dumps(obj)
        self._chunk(f"data: {payload}\n\n".encode())

    def _end_chunked(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop_connection(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _wait(self, seconds: float) -> None:
        """Wait ``seconds``, or less: stop() ends a slow fault at once, and so does the client
        hanging up (as a real server notices a closed connection; the next write then fails)."""
        stopping = self.server.stopping
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and not stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable:
                if self._hung_up():
                    return
                stopping.wait(min(left, 0.05))  # bytes to read, not an end: wait on

    def _hung_up(self) -> bool:
        """Whether the client closed the connection (it reads as at its end)."""
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            return peeked == b""
        except BlockingIOError:
            return False
        except OSError:
            return True
