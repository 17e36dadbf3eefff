"""How the fake OpenAI server answers: its routes (models, chat completions, the ``/_fake``
controls), the fault a request gets, and a chat reply, whole or streamed (see tests/fake_openai.py)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tests import fake_openai_embeddings as embeddings
from tests import fake_openai_errors as answers
from tests.fake_http import WireHandler, WireServer
from tests.fake_openai_errors import BAD_GATEWAY_HTML, ERRORS, _asks_for_json, _kind, _text_of, _tokens

if TYPE_CHECKING:
    from tests.fake_openai import FakeOpenAIServer

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


class ChatServer(WireServer):
    """The HTTP server of one :class:`FakeOpenAIServer` (its ``owner``)."""

    owner: FakeOpenAIServer


class ChatHandler(WireHandler):
    """Routes requests, applies the queued fault, and answers a chat request as its settings say."""

    server: ChatServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        if self.server.owner.verbose:
            super().log_message(format, *args)

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
        if self.path == "/v1/embeddings":
            self._embeddings(body)
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

    def _embeddings(self, body: dict[str, Any]) -> None:
        """An embeddings request: recorded apart from chat requests, with its own queue of faults
        (``echo_secret`` makes it a 500 quoting the secret)."""
        owner = self.server.owner
        owner.embedding_requests.append(body)
        fault = owner.embedding_faults.pop(0) if owner.embedding_faults else ""
        name, _, arg = fault.partition(":")
        if owner.echo_secret:
            self._send_json(500, answers.error_body(answers.echo_message(owner.echo_secret, 0)))
        elif name in ERRORS:
            status, err = ERRORS[name]
            self._send_json(status, {"error": err})
        elif name == "html_page":
            self._send_body(200, b"<!doctype html><html><body>Welcome</body></html>", "text/html", {})
        elif name == "quote":  # a 500 whose message is ARG (a server quoting what it was sent)
            self._send_json(500, answers.error_body(arg))
        else:
            if name == "slow_headers":
                self._wait(float(arg or 2))
            self._send_json(*embeddings.answer(body))

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
