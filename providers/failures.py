"""Failures of a model call in a few plain words, for the panel, the ledger and the toasts.

The exceptions themselves are written for developers: pydantic's validation errors run to several
lines with the model's whole answer and a documentation URL in them, and openai's status errors
begin "Error code: 500 - {'error': {...}}". The helper calls (curator, summaries, memory) show a
failure's reason to the user, who needs what went wrong, not the dump.

``openai`` is imported only when an error may be one of its own: by then a client exists.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from pydantic import ValidationError

from engine.text.redaction import clip, redact

if TYPE_CHECKING:
    import openai

DETAIL_CHARS = 300
"""The longest a server's own words about an error are quoted."""

_PROBLEMS_NAMED = 2
"""A validation failure names this many of the answer's problems, then counts the rest."""


def shorten(text: str, limit: int = DETAIL_CHARS) -> str:
    """``text`` without keys (:mod:`engine.text.redaction`), on one line, cut to ``limit`` characters
    with an ellipsis: redacted first, so a cut never leaves part of a key."""
    return clip(text, limit)


def server_detail(err: openai.APIError) -> str:
    """The server's own words about an error, on one line, without the "Error code: N - " prefix."""
    body = err.body
    message: object = None
    if isinstance(body, dict):
        message = body.get("message")
        if message is None and isinstance(body.get("error"), dict):
            message = body["error"].get("message")
        if message is None and isinstance(body.get("error"), str):
            message = body["error"]  # Ollama and llama.cpp send {"error": "..."}
    elif isinstance(body, str) and not body.lstrip().startswith("<"):
        message = body  # a plain-text body; an HTML error page says nothing useful
    if not isinstance(message, str) or not message.strip():
        return "no details given"
    return shorten(message).rstrip(".")


def describe(err: BaseException) -> str:
    """What went wrong in a helper call, in one short line, without keys."""
    return redact(_described(err))


def _described(err: BaseException) -> str:
    if isinstance(err, ValidationError):
        return _invalid_answer(err)
    if isinstance(err, json.JSONDecodeError):
        if err.pos == 0:
            return "the answer was not JSON"
        return f"the answer was not valid JSON, at line {err.lineno} column {err.colno}"
    if "openai" in sys.modules:
        found = _openai_failure(err)
        if found is not None:
            return found
    text = shorten(str(err), 160)
    name = type(err).__name__
    return f"{name}: {text}" if text else name


def _invalid_answer(err: ValidationError) -> str:
    problems = err.errors(include_url=False, include_input=False, include_context=False)
    if any(problem["type"] == "json_invalid" for problem in problems):
        return "the answer was not JSON"
    named = [_field_problem(problem["type"], problem["loc"], problem["msg"]) for problem in problems]
    more = len(named) - _PROBLEMS_NAMED
    rest = f" and {more} more" if more > 0 else ""
    return f"the answer did not fit the expected form: {', '.join(named[:_PROBLEMS_NAMED])}{rest}"


def _field_problem(kind: str, loc: tuple[int | str, ...], message: str) -> str:
    """One problem of an answer as a phrase: "retain should be a valid array"."""
    field = ".".join(str(part) for part in loc) or "the answer"
    if kind == "missing":
        return f"{field} is missing"
    if message.startswith("Input should"):
        return f"{field} {message.removeprefix('Input ')}"
    return f"{field}: {message[:1].lower()}{message[1:]}"


def _openai_failure(err: BaseException) -> str | None:
    import openai

    if isinstance(err, openai.LengthFinishReasonError):
        return "the answer was cut off at the model's output limit"
    if isinstance(err, openai.ContentFilterFinishReasonError):
        return "the model's content filter stopped the answer"
    if isinstance(err, openai.APITimeoutError):  # before APIConnectionError: it is one
        return "the request timed out"
    if isinstance(err, openai.APIConnectionError):
        return "the server could not be reached"
    if isinstance(err, openai.APIStatusError):
        return f"the server answered {err.status_code}: {server_detail(err)}"
    return None
