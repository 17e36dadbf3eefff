"""OpenAIChatModel through the real openai client against the loopback fake server."""

from __future__ import annotations

import asyncio
import functools
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import openai
import pytest

from engine.chat import PromptMessage
from engine.errors import ModelError, ModelErrorKind
from engine.protocols.models import ModelEvent, ReplyFinished, TextDelta, UsageReport
from providers.openai_chat import OpenAIChatModel
from providers.openai_errors import _retry_after
from tests.fake_openai import FakeOpenAIServer

PROMPT = "please answer with several words"
ECHO = "Echo: " + PROMPT
KEY_HINT = "$OPENAI_API_KEY"

MakeModel = Callable[..., OpenAIChatModel]


@pytest.fixture
def make_model(chat_model: MakeModel) -> MakeModel:
    """Models on the fake server with short timeouts, and the key hint these tests read."""
    return functools.partial(chat_model, connect_timeout=1.0, read_timeout=2.0, key_hint=KEY_HINT)


async def collect(model: OpenAIChatModel, text: str = PROMPT) -> list[ModelEvent]:
    return [event async for event in model.stream([PromptMessage("user", text)])]


async def fail(model: OpenAIChatModel, text: str = PROMPT) -> tuple[ModelError, str]:
    """Consume a stream that must fail; the error and the text that arrived before it."""
    arrived: list[str] = []
    with pytest.raises(ModelError) as caught:
        async for event in model.stream([PromptMessage("user", text)]):
            assert not isinstance(event, ReplyFinished), "a failed stream must not say it finished"
            if isinstance(event, TextDelta):
                arrived.append(event.text)
    return caught.value, "".join(arrived)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def wait_for_outcome(server: FakeOpenAIServer, seconds: float = 3.0) -> str:
    deadline = time.monotonic() + seconds
    while server.requests[-1]["outcome"] is None:
        assert time.monotonic() < deadline, "the server is still writing the reply"
        await asyncio.sleep(0.01)
    outcome: str = server.requests[-1]["outcome"]
    return outcome


# --- a good reply ----------------------------------------------------------------------------


async def test_reply_streams_as_deltas_then_usage_then_finish(
    fake_server: FakeOpenAIServer, make_model: MakeModel
) -> None:
    fake_server.reply = "The quick brown fox jumps over the lazy dog."
    events = await collect(make_model())
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3
    assert "".join(d.text for d in deltas) == "The quick brown fox jumps over the lazy dog."
    assert events[-2:] == [UsageReport(prompt_tokens=5, completion_tokens=9), ReplyFinished("stop")]
    assert all(isinstance(e, TextDelta) for e in events[:-2])


async def test_request_carries_the_messages_and_asks_for_usage(
    fake_server: FakeOpenAIServer, make_model: MakeModel
) -> None:
    fake_server.reply = lambda body: f"{len(body['messages'])} messages"
    messages = [
        PromptMessage("system", "Be terse."),
        PromptMessage("user", "hi"),
        PromptMessage("assistant", "Hello."),
        PromptMessage("user", "again"),
    ]
    events = [event async for event in make_model().stream(messages)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "4 messages"
    body = fake_server.requests[-1]["body"]
    assert body["model"] == "fake-model"
    assert body["messages"] == [m.as_openai() for m in messages]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


async def test_the_model_describes_itself(make_model: MakeModel) -> None:
    model = make_model(context_window=4096)
    assert (model.name, model.is_offline, model.context_window) == ("fake-model", False, 4096)


async def test_lists_the_servers_models(make_model: MakeModel) -> None:
    assert await make_model().list_models() == ["fake-model", "fake-model-large"]


async def test_a_garbage_line_in_the_stream_is_skipped(
    fake_server: FakeOpenAIServer, make_model: MakeModel
) -> None:
    fake_server.faults.append("malformed_sse")
    events = await collect(make_model())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ECHO
    assert events[-1] == ReplyFinished("stop")


# --- keys ------------------------------------------------------------------------------------


async def test_no_key_works_with_a_server_that_needs_none(
    fake_server: FakeOpenAIServer, make_model: MakeModel
) -> None:
    events = await collect(make_model(api_key=None))
    assert events[-1] == ReplyFinished("stop")
    # openai refuses to send no key at all, so a placeholder goes in its place.
    assert fake_server.requests[-1]["headers"]["authorization"] == "Bearer not-needed"


async def test_a_wrong_key_is_refused(fake_server: FakeOpenAIServer, make_model: MakeModel) -> None:
    fake_server.api_key = "the-right-key"
    error, _ = await fail(make_model(api_key="a-wrong-key"))
    assert error.kind == ModelErrorKind.AUTH
    assert isinstance(error.__cause__, openai.AuthenticationError)
    assert "401" in error.user_message and KEY_HINT in error.user_message
    assert (await collect(make_model(api_key="the-right-key")))[-1] == ReplyFinished("stop")


async def test_a_missing_key_is_explained(fake_server: FakeOpenAIServer, make_model: MakeModel) -> None:
    fake_server.api_key = "the-right-key"
    error, _ = await fail(make_model(api_key=""))
    assert error.kind == ModelErrorKind.AUTH
    assert "needs an API key" in error.user_message


# --- faults before the reply starts ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "kind", "cause", "words"),
    [
        ("401", ModelErrorKind.AUTH, openai.AuthenticationError, ["401", KEY_HINT]),
        ("429", ModelErrorKind.RATE_LIMIT, openai.RateLimitError, ["429", "Rate limit reached"]),
        ("500", ModelErrorKind.SERVER, openai.InternalServerError, ["500", "Try again"]),
        ("502", ModelErrorKind.SERVER, openai.InternalServerError, ["502"]),
        ("503", ModelErrorKind.SERVER, openai.InternalServerError, ["503", "overloaded"]),
        ("context_length", ModelErrorKind.CONTEXT_LENGTH, openai.BadRequestError, ["too long", "8192"]),
        ("html_page", ModelErrorKind.BAD_RESPONSE, None, ["OpenAI-compatible"]),
    ],
)
async def test_a_refused_request_raises_the_matching_error(
    fake_server: FakeOpenAIServer,
    make_model: MakeModel,
    fault: str,
    kind: ModelErrorKind,
    cause: type[Exception] | None,
    words: list[str],
) -> None:
    fake_server.faults.append(fault)
    error, arrived = await fail(make_model())
    assert error.kind == kind
    assert cause is None or isinstance(error.__cause__, cause)
    for word in words:
        assert word in error.user_message
    assert "<" not in error.user_message  # an HTML error page is not quoted to the user
    assert arrived == ""
    assert len(fake_server.requests) == 1


async def test_rate_limit_says_how_long_to_wait(fake_server: FakeOpenAIServer, make_model: MakeModel) -> None:
    fake_server.faults.append("429:5000")
    error, _ = await fail(make_model())
    assert error.kind == ModelErrorKind.RATE_LIMIT
    assert error.retry_after == 5.0
    assert "Wait 5 s" in error.user_message


async def test_the_client_never_retries_by_itself(
    fake_server: FakeOpenAIServer, make_model: MakeModel
) -> None:
    # Retries belong to the engine, which shows a countdown; a hidden one would look like a hang.
    fake_server.faults.extend(["429", "429"])
    error, _ = await fail(make_model())
    assert error.kind == ModelErrorKind.RATE_LIMIT
    assert error.retry_after == pytest.approx(0.01)
    assert len(fake_server.requests) == 1


@pytest.mark.parametrize(
    ("fault", "retryable"),
    [("429", True), ("500", True), ("502", True), ("503", True), ("401", False), ("context_length", False)],
)
async def test_errors_worth_repeating_are_marked_retryable(
    fake_server: FakeOpenAIServer, make_model: MakeModel, fault: str, retryable: bool
) -> None:
    fake_server.faults.append(fault)
    error, _ = await fail(make_model())
    assert error.retryable is retryable


async def test_a_refused_connection_is_retryable_but_a_bad_url_is_not(make_model: MakeModel) -> None:
    refused, _ = await fail(make_model(base_url=f"http://127.0.0.1:{closed_port()}/v1"))
    assert refused.kind == ModelErrorKind.CONNECTION and refused.retryable
    bad, _ = await fail(make_model(base_url="localhost:1/v1"))
    assert not bad.retryable


async def test_context_length_carries_the_servers_window(
    fake_server: FakeOpenAIServer, make_model: MakeModel
) -> None:
    fake_server.faults.append("context_length")
    error, _ = await fail(make_model())
    assert error.kind == ModelErrorKind.CONTEXT_LENGTH
    assert error.window == 8192  # "This model's maximum context length is 8192 tokens..."


async def test_an_unknown_endpoint_is_a_bad_request(
    fake_server: FakeOpenAIServer, make_model: MakeModel
) -> None:
    error, _ = await fail(make_model(base_url=fake_server.base_url + "/nowhere"))
    assert error.kind == ModelErrorKind.BAD_REQUEST
    assert isinstance(error.__cause__, openai.NotFoundError)
    assert "404" in error.user_message and "Unknown path" in error.user_message


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        ("slow_headers:2", openai.APITimeoutError),  # a slow answer: no headers in time
        ("slow_first_token:2", None),  # a stalled stream: headers, then nothing in time
    ],
    ids=["slow_answer", "stalled_stream"],
)
async def test_a_slow_answer_or_a_stalled_stream_times_out(
    fake_server: FakeOpenAIServer, make_model: MakeModel, fault: str, cause: type[Exception] | None
) -> None:
    fake_server.faults.append(fault)
    started = time.monotonic()
    error, _ = await fail(make_model(read_timeout=0.3))
    assert time.monotonic() - started < 1.5
    assert error.kind == ModelErrorKind.TIMEOUT
    assert cause is None or isinstance(error.__cause__, cause)
    assert "0.3 seconds" in error.user_message


async def test_a_closed_port_is_a_connection_error(make_model: MakeModel) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    model = make_model(base_url=base_url)
    error, _ = await fail(model)
    assert error.kind == ModelErrorKind.CONNECTION
    assert isinstance(error.__cause__, openai.APIConnectionError)
    assert base_url in error.user_message
    with pytest.raises(ModelError) as listing:
        await model.list_models()
    assert listing.value.kind == ModelErrorKind.CONNECTION


async def test_a_base_url_without_a_scheme_is_explained(make_model: MakeModel) -> None:
    error, _ = await fail(make_model(base_url="localhost:11434/v1"))
    assert error.kind == ModelErrorKind.CONNECTION
    assert "http://" in error.user_message


# --- faults in the middle of the reply -------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "kind", "cause"),
    [
        ("cutoff", ModelErrorKind.CONNECTION, openai.APIConnectionError),
        ("truncate", ModelErrorKind.CUT, None),
        ("stream_error", ModelErrorKind.SERVER, openai.APIError),
        # openai lets the JSON error of a bad SSE line through unwrapped.
        ("invalid_json", ModelErrorKind.BAD_RESPONSE, ValueError),
    ],
)
async def test_a_broken_stream_yields_what_arrived_then_raises(
    fake_server: FakeOpenAIServer,
    make_model: MakeModel,
    fault: str,
    kind: ModelErrorKind,
    cause: type[Exception] | None,
) -> None:
    fake_server.faults.append(fault)
    error, arrived = await fail(make_model())
    assert error.kind == kind
    assert cause is None or isinstance(error.__cause__, cause)
    assert error.user_message
    assert arrived and arrived != ECHO and ECHO.startswith(arrived)
    assert len(fake_server.requests) == 1  # a stream that has started is never retried


# --- details ---------------------------------------------------------------------------------


def test_retry_after_reads_each_header_form() -> None:
    assert _retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert _retry_after({"retry-after": "3"}) == 3.0
    assert _retry_after({}) is None
    assert _retry_after({"retry-after": "soon"}) is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert _retry_after({"retry-after": later}) == pytest.approx(30, abs=2)
