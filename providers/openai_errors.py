"""What an error of the ``openai`` package (or of a broken server) means, in the user's words:
the :class:`engine.errors.ModelError` that :class:`providers.openai_chat.OpenAIChatModel` raises."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING, Any, Literal

from engine.errors import ModelError, ModelErrorKind
from providers.failures import server_detail, shorten

if TYPE_CHECKING:
    import openai

Phase = Literal["request", "stream", "models", "embeddings"]
"""Where an error happened: before the reply started, while it streamed, or listing models."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """What an error message names: the model, where it is served, and how its key is set."""

    model: str
    base_url: str | None
    has_key: bool
    key_hint: str | None
    connect_timeout: float
    read_timeout: float

    @property
    def where(self) -> str:
        return self.base_url or "the default OpenAI endpoint"


def translate(err: Exception, phase: Phase, endpoint: Endpoint) -> ModelError:
    """The :class:`ModelError` that tells the user what ``err`` means, without the API key.

    Some servers quote the key they refused; the message is stored with the reply and shown,
    so :class:`ModelError` passes it through the redaction gate (:mod:`engine.text.redaction`), and
    every quote of the server was redacted before it was cut (:func:`shorten`).
    """
    import openai

    kind = ModelErrorKind
    if isinstance(err, openai.AuthenticationError):
        return ModelError(kind.AUTH, _auth_message(endpoint))
    if isinstance(err, openai.PermissionDeniedError):
        hint = f" Check that the key in {endpoint.key_hint} may use it." if endpoint.key_hint else ""
        return ModelError(
            kind.AUTH, f"The server refused access to {endpoint.model} (403): {server_detail(err)}.{hint}"
        )
    if isinstance(err, openai.RateLimitError):
        return _rate_limit(err)
    if isinstance(err, openai.BadRequestError) and _is_context_length(err):
        return ModelError(
            kind.CONTEXT_LENGTH,
            f"The conversation is too long for {endpoint.model} ({server_detail(err)}). "
            "Start a new session, or retry with a model that has a larger context window.",
            window=_window_from_error(err),
        )
    if isinstance(err, openai.InternalServerError):
        return ModelError(
            kind.SERVER,
            f"The server failed ({err.status_code}{_colon_detail(err)}). Try again in a moment.",
            retryable=phase == "request",
        )
    if isinstance(err, openai.NotFoundError):
        if phase == "models":
            message = f"The server at {endpoint.where} does not list its models (404)."
        elif phase == "embeddings":
            message = (
                f"The server at {endpoint.where} has no embeddings endpoint or no embedding model named "
                f"{endpoint.model} (404{_colon_detail(err)}). Check embedding_model in your config."
            )
        else:
            message = (
                f"The server at {endpoint.where} has no chat endpoint or no model named {endpoint.model} "
                f"(404{_colon_detail(err)}). Check the base URL and the model name."
            )
        return ModelError(kind.BAD_REQUEST, message)
    if isinstance(err, openai.APIStatusError):
        return ModelError(
            kind.BAD_REQUEST, f"The server refused the request ({err.status_code}{_colon_detail(err)})."
        )
    if isinstance(err, openai.APITimeoutError):
        # A connection that never opened may open next time; a server that took the request
        # and then said nothing for read_timeout seconds is not asked again unbidden.
        connect = type(err.__cause__).__name__ == "ConnectTimeout"
        return ModelError(kind.TIMEOUT, _timeout_message(err, phase, endpoint), retryable=connect)
    if isinstance(err, openai.APIConnectionError):
        return ModelError(
            kind.CONNECTION,
            _connection_message(err, phase, endpoint),
            retryable=phase == "request" and type(err.__cause__).__name__ != "UnsupportedProtocol",
        )
    if isinstance(err, openai.APIResponseValidationError):
        return ModelError(kind.BAD_RESPONSE, _bad_response_message(str(err)))
    if isinstance(err, openai.APIError):
        # A plain APIError is an error the server sent inside an otherwise good stream.
        return ModelError(
            kind.SERVER,
            f"The server reported an error{' during the reply' if phase == 'stream' else ''}: "
            f"{server_detail(err)}. Try again in a moment.",
        )
    return ModelError(kind.BAD_RESPONSE, _bad_response_message(f"{type(err).__name__}: {err}"))


def _auth_message(endpoint: Endpoint) -> str:
    if not endpoint.has_key:
        return (
            f"The server at {endpoint.where} needs an API key (401). "
            "Set api_key_env for the provider in your config to the variable that holds it."
        )
    if endpoint.key_hint:
        return (
            f"The server refused the API key (401). "
            f"Check the key in {endpoint.key_hint} or the provider's api_key_env in your config."
        )
    return "The server refused the API key (401). Check the provider's api_key_env in your config."


def _rate_limit(err: openai.RateLimitError) -> ModelError:
    retry_after = _retry_after(err.response.headers)
    if _code(err) == "insufficient_quota":
        return ModelError(
            ModelErrorKind.RATE_LIMIT,
            "The provider says your account has run out of quota (429). "
            "Check your plan and billing with the provider.",
        )
    seconds = f"{retry_after:.0f} s" if retry_after is not None and retry_after >= 1 else "a moment"
    return ModelError(
        ModelErrorKind.RATE_LIMIT,
        f"The server is limiting requests (429{_colon_detail(err)}). Wait {seconds}, then retry.",
        retry_after=retry_after,
        retryable=True,
    )


def _timeout_message(err: Exception, phase: Phase, endpoint: Endpoint) -> str:
    # openai wraps every httpx2 timeout in the same APITimeoutError; the cause tells connect
    # from read. The name is compared so as not to import httpx2, openai's private dependency.
    if type(err.__cause__).__name__ == "ConnectTimeout":
        return (
            f"Could not connect to {endpoint.where} within {endpoint.connect_timeout:g} seconds. "
            "Check that the server is running and reachable."
        )
    if phase == "stream":
        return (
            f"Nothing more of the reply arrived for {endpoint.read_timeout:g} seconds, so it was "
            "abandoned. Retry, or raise the read timeout in your config."
        )
    return (
        f"The server did not answer within {endpoint.read_timeout:g} seconds. It may be busy or still "
        "loading the model: retry, or raise the read timeout in your config."
    )


def _connection_message(err: Exception, phase: Phase, endpoint: Endpoint) -> str:
    if phase == "stream":
        return "The connection to the server dropped in the middle of the reply. Retry to ask again."
    if type(err.__cause__).__name__ == "UnsupportedProtocol":
        return f"The base URL {endpoint.where} is not valid: it must start with http:// or https://."
    return (
        f"Could not connect to the server at {endpoint.where}. "
        "Check that it is running and that the base URL is right."
    )


def _bad_response_message(what: str) -> str:
    return (
        f"The server's answer could not be understood ({shorten(what)}). "
        "Check that the base URL points at an OpenAI-compatible API."
    )


# "maximum context length is 8192 tokens" (OpenAI, vLLM), "context size (4096 tokens)",
# "context window of 4,096 tokens". Bounded gaps: no backtracking blow-up on long messages.
_WINDOW_IN_WORDS = re.compile(
    r"(?:maximum context length|context (?:length|size|window))[^0-9.]{0,24}([0-9][0-9,]{0,12})\s*tokens",
    re.IGNORECASE,
)


def _is_context_length(err: openai.APIStatusError) -> bool:
    if _code(err) == "context_length_exceeded":
        return True
    body = err.body if isinstance(err.body, dict) else {}
    if body.get("type") == "exceed_context_size_error":  # llama.cpp's server
        return True
    detail = server_detail(err).lower()
    # vLLM says "This model's maximum context length is 2048 tokens. However, ..." with no code.
    return "maximum context length" in detail or (
        "exceed" in detail and _WINDOW_IN_WORDS.search(detail) is not None
    )


def _window_from_error(err: openai.APIStatusError) -> int | None:
    body = err.body if isinstance(err.body, dict) else {}
    n_ctx = body.get("n_ctx")  # llama.cpp says it as a number
    if isinstance(n_ctx, int) and n_ctx > 0:
        return n_ctx
    found = _WINDOW_IN_WORDS.search(server_detail(err))
    return int(found.group(1).replace(",", "")) if found else None


def _code(err: openai.APIStatusError) -> str | None:
    code = err.code or (err.body.get("code") if isinstance(err.body, dict) else None)
    return code if isinstance(code, str) else None


def _colon_detail(err: openai.APIError) -> str:
    detail = server_detail(err)
    return "" if detail == "no details given" else f": {detail}"


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait: ``retry-after-ms``, or ``retry-after`` (seconds or a date)."""
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(0.0, float(millis) / 1000)
    except ValueError:
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime  # rarely needed, and slow-ish to import

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000" in the date means UTC, with no zone said
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - time.time())
