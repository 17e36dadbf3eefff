"""What the fake OpenAI server answers when it fails: OpenAI's own error bodies for each HTTP
fault, and the HTML page a reverse proxy sends when the server behind it is down."""

from __future__ import annotations

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
