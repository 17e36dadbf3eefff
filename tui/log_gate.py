"""Textual's log file (``TEXTUAL_LOG``) gets what passed the redaction gate, made inert.

Textual writes what the app and Textual itself log to that file as ``str()`` of each argument:
the repr of a failed worker's exception among them, which may quote a server's error and the API
key in it. Installed once, the gate turns every argument into its redacted, inert text while a
log file is being written; otherwise (no file) logging is left exactly as it was.
"""

from __future__ import annotations

from typing import Any

import textual
from textual import constants

from engine.text.inert import inert
from engine.text.redaction import redact

_call = textual.Logger.__call__


def gated(value: object) -> str:
    """What the log file may hold of ``value``: its text, without keys, without control codes."""
    return inert(redact(value if isinstance(value, str) else str(value)))


def _gated_call(self: textual.Logger, *args: object, **kwargs: Any) -> None:
    if constants.LOG_FILE:
        args = tuple(gated(arg) for arg in args)
        kwargs = {key: gated(value) for key, value in kwargs.items()}
    _call(self, *args, **kwargs)


def install() -> None:
    """Gate Textual's logger (idempotent)."""
    textual.Logger.__call__ = _gated_call  # type: ignore[method-assign]
