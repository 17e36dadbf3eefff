"""What the fake OpenAI server answers when it fails: OpenAI's own error bodies for each HTTP
fault, the HTML page a reverse proxy sends when the server behind it is down, and what a server
that quotes a secret on every endpoint answers (``echo_secret``)."""

from __future__ import annotations

import json
import re
from typing import Any

ERRORS: dict[str, tuple[int, dict[str, Any]]] = {
    "429": (
        429,
        {
            "message": "Rate limit reached for fake-model on requests per min (RPM): "
            "Limit 3, Used 3, Requested 1.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        },
    ),
    "500": (
        500,
        {
            "message": "The server had an error while processing your request. Sorry about that!",
            "type": "server_error",
            "param": None,
            "code": None,
        },
    ),
    "503": (
        503,
        {
            "message": "The engine is currently overloaded, please try again later.",
            "type": "server_error",
            "param": None,
            "code": None,
        },
    ),
    "401": (
        401,
        {
            "message": "Incorrect API key provided: sk-wrong. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        },
    ),
    "context_length": (
        400,
        {
            "message": "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9000 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        },
    ),
}

BAD_GATEWAY_HTML = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)


def error_body(message: str, code: str | None = None) -> dict[str, Any]:
    """OpenAI's error body for a request it refuses."""
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}


# --- echo_secret: a server that quotes a secret (the client's key, say) on every endpoint -------

ECHO_FAULT = "echo_error"
"""The fault name under which an echoing server answers 500 with the secret in the message."""


def echo_message(secret: str, n: int) -> str:
    """An error message quoting ``secret``: short, or 283 characters of words and then the secret
    (so a quote cut at 300 characters before it is redacted keeps most of the secret)."""
    if n % 2 == 0:
        return f"Upstream failure for credential {secret} (request refused)."
    lead = "Upstream failure while forwarding the request to the provider; the gateway said "
    return (lead + "retry later " * 30)[:283] + secret


def echo_json(secret: str) -> str:
    """An answer to a request for JSON with ``secret`` in every string: it fits the curator's form
    and the memory assessor's both (each ignores the other's keys)."""
    return json.dumps(
        {
            "retain": [{"ref": f"#1 {secret}", "reason": f"it quotes {secret}"}],
            "demote": [secret],
            "drop": [f"#2 {secret}"],
            "clear_all": False,
            "resolved": [{"phrase": f"that {secret}", "ref": secret}],
            "roles": [{"ref": secret, "role": "fact"}],
            "summary": f"Kept what quotes {secret}.",
            "importance": 0.9,
            "tags": [secret],
            "topics": [f"the key {secret}"],
            "reasoning": f"It holds {secret}.",
        }
    )


def echo_reply(secret: str) -> str:
    """A chat reply long enough to be summarized later, with ``secret`` in the middle."""
    return (
        "Here is the plan for the migration of the billing tables to the new cluster, step by step. "
        f"First the schema is copied with the credential {secret}, then the rows in batches of ten "
        "thousand, then the indexes are rebuilt, and the old tables are kept read-only for a week."
    )


def echo_turn(secret: str, kind: str, n: int) -> tuple[str, str | None]:
    """What an echoing server does with the ``n``-th chat request of its ``kind`` ("stream",
    "json" or "plain"): a fault to deliver (or "") and the reply to give otherwise.

    A streamed reply is whole (quoting the secret: set ``piece_chars`` to split it over pieces),
    refused with the secret (500), then cut by an error event quoting it, in turn; a request for
    JSON or for plain text (a summary) is refused with the secret, then answered with it.
    """
    if kind == "stream":
        return ("", ECHO_FAULT, "stream_error")[n % 3], echo_reply(secret)
    fault = ECHO_FAULT if n % 2 == 0 else ""
    if kind == "json":
        return fault, echo_json(secret)
    return fault, f"The message was about the credential {secret} and the retry that followed it."


# --- reading requests (shared with fake_openai.py) ----------------------------------------------


def _tokens(text: str) -> list[str]:
    """Split text into word-ish pieces that concatenate back to the original."""
    return re.findall(r"\s*\S+\s*|\s+", text) or [""]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _kind(body: dict[str, Any]) -> str:
    """A request as ``/_fake/requests`` tells them apart: a curator's, a reply's, or another."""
    return "json" if _asks_for_json(body) else "stream" if body.get("stream") else "plain"


def _asks_for_json(body: dict[str, Any]) -> bool:
    response_format = body.get("response_format")
    return isinstance(response_format, dict) and response_format.get("type") in ("json_schema", "json_object")
