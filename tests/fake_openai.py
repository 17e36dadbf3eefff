"""A small loopback fake of an OpenAI-compatible server (stdlib only), with fault injection.

Endpoints:
  GET  /v1/models, GET /v1/models/{id}
  POST /v1/chat/completions   stream false, or true as SSE (with a final usage chunk when
                              ``stream_options.include_usage`` is true)
  POST /v1/embeddings         deterministic vectors (tests/fake_openai_embeddings.py: texts sharing
                              words are close); recorded in ``embedding_requests``, faulted from
                              ``embedding_faults`` (any of the HTTP faults below, ``html_page``,
                              ``slow_headers``, ``quote:TEXT``: a 500 saying TEXT), apart from
                              the chat requests and faults
  POST /_fake/faults          ``{"faults": ["429", "slow_first_token:2", ...]}`` queues faults
  POST /_fake/settings        ``{"reply": ..., "chunk_delay": ...}``: any of the ``SETTINGS`` of
                              tests/fake_openai_handler.py
  GET  /_fake/requests        each chat request's ``received_at``, ``finished_at``, ``outcome`` and
                              ``kind`` ("json": it asked for JSON; "stream"; or "plain")

The answers are made by tests/fake_openai_handler.py over tests/fake_http.py. The two ``/_fake``
controls let a client in another process (a benchmark that must measure only the app's own memory
and CPU) drive the server as tests drive its attributes.

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
import threading
from collections.abc import Callable
from typing import Any

from tests.fake_openai_handler import ChatHandler, ChatServer, FakeRequest


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
        self.embedding_requests: list[dict[str, Any]] = []
        self.embedding_faults: list[str] = []
        self.hook_errors: list[Exception] = []
        self.stopping = threading.Event()
        self._httpd = ChatServer((host, port), ChatHandler)
        self._httpd.owner = self
        self._httpd.stopping = self.stopping
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
