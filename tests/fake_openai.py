"""A small loopback fake of an OpenAI-compatible server (stdlib only), with fault injection.

Endpoints:
  GET  /v1/models, GET /v1/models/{id}
  POST /v1/chat/completions   stream false, or true as SSE (with a final usage chunk when
                              ``stream_options.include_usage`` is true)
  POST /_fake/faults          ``{"faults": ["429", "slow_first_token:2", ...]}`` queues faults
  POST /_fake/settings        ``{"reply": ..., "chunk_delay": ...}``: any of :data:`SETTINGS`
  GET  /_fake/requests        each chat request's ``received_at``, ``finished_at``, ``outcome`` and
                              ``kind`` ("json": it asked for JSON; "stream"; or "plain")

The two ``/_fake`` controls let a client in another process (a benchmark that must measure only
the app's own memory and CPU) drive the server as tests drive its attributes.

Each queued fault (``server.faults``, first in first out) is consumed by the next chat request; a
request header ``X-Fake-Fault: NAME[:ARG]`` applies to that request only. Faults:

  429                 HTTP 429, rate_limit_exceeded body, header retry-after-ms (ARG ms, default 10)
  500, 503            HTTP 500 / 503 with OpenAI's JSON error body
  502                 HTTP 502 with an HTML body, as a reverse proxy in front of a dead server sends
  401                 HTTP 401, invalid_api_key body
  context_length      HTTP 400, code=context_length_exceeded (OpenAI's body format); ARG is the
                      window the message states (default 8192)
  cutoff              stream: half the tokens, then the TCP connection is dropped mid-body
  truncate            stream: half the tokens, then the body ends cleanly with no finish chunk
                      and no [DONE]
  stream_error        stream: half the tokens, then ``data: {"error": {...}}``
  invalid_json        stream: half the tokens, then ``data: {not json``, then the body ends
  malformed_sse       stream: half the tokens, a garbage line without a ``data:`` prefix, then
                      the rest of a normal reply
  html_page           HTTP 200 with an HTML page, as a web app at a mistaken base URL answers
  slow_first_token    headers at once, the first token after ARG seconds (default 2)
  slow_headers        nothing for ARG seconds (default 2), then a normal reply

A model's window can be set as the real servers set it: ``model_window`` is advertised as
``max_model_len`` in ``GET /v1/models`` and ``/v1/models/{id}`` (as vLLM does), and
``enforced_window`` refuses, with a context_length error stating it, any request whose messages
hold more word-pieces than that.

The reply is ``Echo: <last user message>`` unless ``reply`` is set, either to a string or to a
function of the request body. Every chat request is recorded in ``requests`` as
``{"path", "headers", "body", "outcome", "finished_at"}`` (header names in lower case; the last
is ``time.perf_counter()`` when the reply was written) and passed to ``on_request`` (in the
server's thread) before any reply is sent. ``outcome`` is None while the reply is being written,
then "complete", "fault" (the fault was delivered) or "client_disconnected".

In tests (see the ``fake_server`` fixture in conftest.py):

    with FakeOpenAIServer(reply="Hello world") as srv:
        srv.faults.append("429")
        client = AsyncOpenAI(base_url=srv.base_url, api_key="test")

As a process: ``python -m tests.fake_openai --port 8765 [--fault 429] [--chunk-delay 0.05]``.
"""

from __future__ import annotations

import argparse
import json
import select
import socket
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests import fake_openai_errors as answers
from tests.fake_openai_errors import BAD_GATEWAY_HTML, ERRORS, _asks_for_json, _kind, _text_of, _tokens

MODELS = ["fake-model", "fake-model-large"]
_WHAT_SETTINGS = ("reply", "json_reply", "piece_chars", "reasoning", "reasoning_field")
_WHEN_SETTINGS = ("chunk_delay", "json_delay", "first_piece_delay")
SETTINGS = frozenset(_WHAT_SETTINGS + _WHEN_SETTINGS)
"""What ``POST /_fake/settings`` may change."""
TIMINGS = ("received_at", "finished_at", "outcome")
"""What ``GET /_fake/requests`` reports of each chat request."""

FakeRequest = dict[str, Any]
"""A recorded request: ``path``, ``headers`` (lower-case names), ``body`` (parsed JSON), ``outcome``."""

# Faults that stop a stream half way.
_MID_STREAM = ("cutoff", "truncate", "stream_error", "invalid_json", "malformed_sse")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Without it, Nagle's algorithm and delayed ACKs stall each small SSE write by ~40 ms.
    disable_nagle_algorithm = True
    server: _Server

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError):
            # The client dropped a kept-alive connection (as it does after a broken stream); the
            # base class would print a traceback for it.
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        if self.server.owner.verbose:
            super().log_message(format, *args)

    # ---- low-level helpers ------------------------------------------------------------------

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
        owner = self.server.owner
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and not owner.stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable:
                if self._hung_up():
                    return
                owner.stopping.wait(min(left, 0.05))  # bytes to read, not an end: wait on

    def _hung_up(self) -> bool:
        """Whether the client closed the connection (it reads as at its end)."""
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            return peeked == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    # ---- routing ----------------------------------------------------------------------------

    def do_GET(self) -> None:
        prefix = "/v1/models/"
        secret = self.server.owner.echo_secret
        if self.path.rstrip("/") == "/v1/models":
            names = [*MODELS, f"model-{secret}"] if secret else MODELS
            data: list[dict[str, Any]] = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in names
            ]
            if self.server.owner.model_window is not None:  # vLLM lists the window too
                for entry in data:
                    entry["max_model_len"] = self.server.owner.model_window
            self._send_json(200, {"object": "list", "data": data})
        elif secret and self.path.startswith(prefix):
            self._send_json(500, answers.error_body(answers.echo_message(secret, 0)))
        elif self.path.startswith(prefix) and self.path[len(prefix) :] in MODELS:
            model = self.path[len(prefix) :]
            described: dict[str, Any] = {"id": model, "object": "model", "created": 0, "owned_by": "fake"}
            if self.server.owner.model_window is not None:
                described["max_model_len"] = self.server.owner.model_window
            self._send_json(200, described)
        elif self.path == "/_fake/requests":
            timings = [
                {**{key: r.get(key) for key in TIMINGS}, "kind": _kind(r["body"])}
                for r in self.server.owner.requests
            ]
            self._send_json(200, timings)
        else:
            self._send_json(404, answers.error_body(f"Unknown path {self.path}", "not_found"))

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._send_json(400, answers.error_body("Invalid JSON body"))
            return
        owner = self.server.owner
        if self.path == "/_fake/faults":
            owner.faults.extend(body.get("faults", []))
            self._send_json(200, {"queued": list(owner.faults)})
            return
        if self.path == "/_fake/settings":
            changed = sorted(SETTINGS & body.keys())
            for key in changed:
                setattr(owner, key, body[key])
            self._send_json(200, {"changed": changed})
            return
        if self.path != "/v1/chat/completions":
            self._send_json(404, answers.error_body(f"Unknown path {self.path}", "not_found"))
            return
        request: FakeRequest = {
            "path": self.path,
            "headers": {key.lower(): value for key, value in self.headers.items()},
            "body": body,
            "outcome": None,
        }
        request["received_at"] = time.perf_counter()
        owner.requests.append(request)
        if owner.on_request is not None:
            try:
                owner.on_request(request)
            except Exception as err:
                # Kept for the fixture to re-raise in the test; otherwise the failure would only
                # show up as a puzzling error in the client.
                owner.hook_errors.append(err)
                self._send_json(500, answers.error_body(f"on_request hook failed: {err!r}"))
                request["outcome"] = "fault"
                return
        fault = self.headers.get("X-Fake-Fault") or (owner.faults.pop(0) if owner.faults else "")
        name, _, arg = fault.partition(":")
        try:
            request["outcome"] = self._handle(body, name, arg)
            request["finished_at"] = time.perf_counter()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            request["outcome"] = "client_disconnected"

    def _handle(self, body: dict[str, Any], fault: str, arg: str) -> str:
        owner = self.server.owner
        if owner.api_key and self.headers.get("Authorization") != f"Bearer {owner.api_key}":
            fault = "401"
        echoed, kind = None, _kind(body)
        if owner.echo_secret and not fault:
            owner.echo_counts[kind] = n = owner.echo_counts.get(kind, -1) + 1
            fault, echoed = answers.echo_turn(owner.echo_secret, kind, n)
            if fault == answers.ECHO_FAULT:
                self._send_json(500, answers.error_body(answers.echo_message(owner.echo_secret, n)))
                return "fault"
        window = owner.enforced_window
        if not fault and window is not None:
            used = sum(len(_tokens(_text_of(m.get("content")))) for m in body.get("messages", []))
            if used > window:
                fault, arg = "context_length", str(window)
        if fault == "context_length":
            status, err = ERRORS[fault]
            stated = int(arg or 8192)
            message = (
                f"This model's maximum context length is {stated} tokens. " + err["message"].split(". ", 1)[1]
            )
            self._send_json(status, {"error": {**err, "message": message}})
            return "fault"
        if fault in ERRORS:
            status, err = ERRORS[fault]
            headers = {"retry-after-ms": arg or "10"} if fault == "429" else {}
            self._send_json(status, {"error": err}, headers)
            return "fault"
        if fault == "502":
            self._send_body(502, BAD_GATEWAY_HTML, "text/html", {})
            return "fault"
        if fault == "html_page":
            self._send_body(200, b"<!doctype html><html><body>Welcome</body></html>", "text/html", {})
            return "fault"
        if fault == "slow_headers":
            self._wait(float(arg or 2))
        model = body.get("model", MODELS[0])
        messages = body.get("messages", [])
        prompt = next((_text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
        if echoed is not None:
            reply: str | None = echoed
        elif owner.json_reply is not None and _asks_for_json(body):
            reply = owner.json_reply
        else:
            reply = owner.reply(body) if callable(owner.reply) else owner.reply
        if reply is None:
            reply = f"Echo: {prompt}"
        size = owner.piece_chars
        pieces = [reply[i : i + size] for i in range(0, len(reply), size)] if size else _tokens(reply)
        usage = {
            "prompt_tokens": len(_tokens(prompt)),
            "completion_tokens": len(pieces),
            "total_tokens": len(_tokens(prompt)) + len(pieces),
        }
        if owner.json_delay and _asks_for_json(body):
            self._wait(owner.json_delay)
        if body.get("stream"):
            return self._chat_stream(body, model, pieces, usage, fault, arg)
        if fault == "slow_first_token":
            self._wait(float(arg or 2))
        message = {"role": "assistant", "content": reply, "refusal": None}
        self._send_json(
            200,
            {
                "id": "chatcmpl-" + uuid.uuid4().hex[:24],
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": None,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
                "usage": usage,
            },
        )
        return "complete"

    def _chat_stream(
        self,
        body: dict[str, Any],
        model: str,
        pieces: list[str],
        usage: dict[str, int],
        fault: str,
        arg: str,
    ) -> str:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        base: dict[str, Any] = {
            "id": "chatcmpl-" + uuid.uuid4().hex[:24],
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": None,
        }
        if include_usage:
            base["usage"] = None  # as OpenAI does: null on every chunk but the last

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                **base,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }

        self._start_sse()
        owner = self.server.owner
        if fault == "slow_first_token":
            self._wait(float(arg or 2))
        elif owner.first_piece_delay:
            self._wait(owner.first_piece_delay)
        self._sse(chunk({"role": "assistant", "content": "", "refusal": None}))
        if owner.reasoning:
            # As DeepSeek, vLLM and llama.cpp stream a reasoning model's thinking: a field of its
            # own in each delta, the content null, all before the answer.
            for piece in _tokens(owner.reasoning):
                self._sse(chunk({owner.reasoning_field: piece, "content": None}))
                if owner.chunk_delay:
                    self._wait(owner.chunk_delay)
        cut = len(pieces) // 2 if fault in _MID_STREAM else len(pieces)
        self._pieces(chunk, pieces[:cut])
        if fault == "cutoff":
            self._drop_connection()
            return "fault"
        if fault == "truncate":
            self._end_chunked()
            return "fault"
        if fault == "stream_error":
            message = "The server had an error while processing your request."
            if owner.echo_secret:
                message = answers.echo_message(owner.echo_secret, owner.echo_counts.get("stream", 0) // 3)
            self._sse({"error": {**ERRORS["500"][1], "message": message}})
            self._end_chunked()
            return "fault"
        if fault == "invalid_json":
            self._sse("{not json")
            self._end_chunked()
            return "fault"
        if fault == "malformed_sse":
            self._chunk(b"this line has no data prefix\n\n")
            self._pieces(chunk, pieces[cut:])
        self._sse(chunk({}, "stop"))
        if include_usage:
            self._sse({**base, "choices": [], "usage": usage})
        self._sse("[DONE]")
        self._end_chunked()
        return "complete"

    def _pieces(self, chunk: Callable[[dict[str, Any]], dict[str, Any]], pieces: list[str]) -> None:
        for piece in pieces:
            self._sse(chunk({"content": piece}))
            # Read on every piece, so a test may change it while a reply streams.
            delay = self.server.owner.chunk_delay
            if delay:
                self._wait(delay)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: FakeOpenAIServer


class FakeOpenAIServer:
    """The fake server; ``start()`` (or ``with``) serves it from a daemon thread.

    Attributes (all may be changed while the server runs):
        reply: A fixed reply, a function of the request body returning the reply, or None to echo.
        json_reply: The reply to a request asking for JSON (``response_format``, as a curator or
            summarizer model is asked), or None: those get ``reply`` too. A setting, unlike a
            function as ``reply``, that a client in another process can make.
        json_delay: Seconds a request asking for JSON waits for its answer (a curator thinking).
        first_piece_delay: Seconds a streamed reply waits before its first piece (a model thinking).
        chunk_delay: Seconds between streamed pieces.
        piece_chars: Streams the reply in pieces of this many characters (None: word by word).
        reasoning: Thinking streamed before the reply in each delta's ``reasoning_field``
            ("reasoning_content", as DeepSeek's API and vLLM name it, or "reasoning"), or None.
        api_key: When set, requests must carry ``Authorization: Bearer <api_key>`` or get a 401.
        echo_secret: When set, quoted on every endpoint (see ``echo_turn`` in fake_openai_errors):
            in chat errors (streamed and not), JSON and summary answers, and ``/models``.
        faults: Queued fault names, consumed one per chat request.
        requests: Every chat request received, in order.
        on_request: Called with each recorded request before the reply is sent.
        hook_errors: Exceptions raised by ``on_request`` (the request got a 500).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        reply: str | Callable[[dict[str, Any]], str] | None = None,
        chunk_delay: float = 0.0,
        api_key: str | None = None,
        verbose: bool = False,
        on_request: Callable[[FakeRequest], None] | None = None,
    ) -> None:
        self.reply = reply
        self.json_reply: str | None = None
        self.json_delay = 0.0
        self.chunk_delay = chunk_delay
        self.first_piece_delay = 0.0
        self.piece_chars: int | None = None
        self.reasoning: str | None = None
        self.reasoning_field = "reasoning_content"
        self.api_key = api_key
        self.echo_secret: str | None = None
        self.echo_counts: dict[str, int] = {}
        self.verbose = verbose
        self.on_request = on_request
        self.model_window: int | None = None
        self.enforced_window: int | None = None
        self.faults: list[str] = []
        self.requests: list[FakeRequest] = []
        self.hook_errors: list[Exception] = []
        self.stopping = threading.Event()
        self._httpd = _Server((host, port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return str(self._httpd.server_address[0])

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible server with fault injection.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on stdout)")
    parser.add_argument("--reply", default=None, help="the reply (default: echo the last user message)")
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed tokens")
    parser.add_argument("--api-key", default=None, help="if set, requests must send this bearer token")
    parser.add_argument("--fault", action="append", default=[], help="queue a fault (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    server = FakeOpenAIServer(args.host, args.port, args.reply, args.chunk_delay, args.api_key, args.verbose)
    server.faults.extend(args.fault)
    print(f"listening on {server.base_url}", flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server._httpd.server_close()


if __name__ == "__main__":
    main()
