"""The fake server's own controls, as a benchmark in another process drives them."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

import openai

from tests.fake_openai import FakeOpenAIServer


def control(server: FakeOpenAIServer, path: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.base_url.removesuffix("/v1") + path, data=data)
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.load(answer)


def ask(server: FakeOpenAIServer, **extra: Any) -> str:
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    try:
        stream = client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "hi"}], stream=True, **extra
        )
        return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    finally:
        client.close()


def test_settings_change_the_reply_and_how_it_streams() -> None:
    with FakeOpenAIServer() as server:
        assert ask(server) == "Echo: hi"
        answer = control(server, "/_fake/settings", {"reply": "abcdef", "piece_chars": 2, "unknown": 1})
        assert answer == {"changed": ["piece_chars", "reply"]}
        assert ask(server) == "abcdef"
        assert (server.reply, server.piece_chars) == ("abcdef", 2)


def test_requests_report_when_each_reply_was_received_and_finished() -> None:
    with FakeOpenAIServer(reply="one two") as server:
        ask(server)
        ask(server)
        # The server notes a reply finished just after writing it: the client may have read it first.
        deadline = time.monotonic() + 5
        while (timings := control(server, "/_fake/requests"))[-1]["finished_at"] is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    assert [t["outcome"] for t in timings] == ["complete", "complete"]
    first, second = timings
    assert first["received_at"] <= first["finished_at"] <= second["received_at"] <= second["finished_at"]


def test_a_request_for_json_gets_the_json_reply_when_one_is_set() -> None:
    # A curator model is asked for JSON; the chat's own request, beside it, is not.
    with FakeOpenAIServer(reply="plain words") as server:
        changed = control(server, "/_fake/settings", {"json_reply": '{"drop": []}'})
        assert changed == {"changed": ["json_reply"]}
        assert ask(server, response_format={"type": "json_object"}) == '{"drop": []}'
        assert ask(server) == "plain words"
        control(server, "/_fake/settings", {"json_reply": None})
        assert ask(server, response_format={"type": "json_object"}) == "plain words"


def test_a_curators_and_a_replys_request_each_wait_their_own_delay_and_are_told_apart() -> None:
    with FakeOpenAIServer(reply="plain words") as server:
        control(server, "/_fake/settings", {"json_delay": 1.0})
        started = time.monotonic()
        ask(server, response_format={"type": "json_object"})
        assert time.monotonic() - started >= 1.0
        started = time.monotonic()
        ask(server)
        assert time.monotonic() - started < 1.0, "a reply does not wait the curator's delay"
        control(server, "/_fake/settings", {"json_delay": 0, "first_piece_delay": 1.0})
        started = time.monotonic()
        assert ask(server) == "plain words"
        assert time.monotonic() - started >= 1.0
        deadline = time.monotonic() + 5
        while (timings := control(server, "/_fake/requests"))[-1]["finished_at"] is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    assert [t["kind"] for t in timings] == ["json", "stream", "stream"]
