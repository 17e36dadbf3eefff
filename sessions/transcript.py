"""Transcripts: conversations as JSON Lines, the format ``heedful replay`` reads (and export writes).

One message per line: ``{"id", "role", "content", "name"?, "created_at"?, "pinned"?}``. Probe files
hold ``{"id", "content"}`` per line; any other field (answers kept for scoring, say) is ignored so
that the engine never sees it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError


class TranscriptError(Exception):
    """A transcript or probe file could not be read; the message names the file and the line."""


class TranscriptMessage(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    id: str
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    name: str | None = None
    created_at: str | None = None
    pinned: bool = False


class Probe(BaseModel):
    # extra="ignore": a probe file may carry answers for scoring; they must not reach the engine.
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    id: str
    content: str


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    data: object


def _lines(path: Path) -> list[_Line]:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise TranscriptError(f"{path}: could not be read ({err.strerror or err}).") from err
    lines: list[_Line] = []
    for number, chunk in enumerate(raw.split(b"\n"), start=1):
        if not chunk.strip():
            continue
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as err:
            raise TranscriptError(
                f"{path}, line {number}: not UTF-8 text (bad byte at column {err.start + 1})."
            ) from err
        try:
            lines.append(_Line(number, json.loads(text)))
        except json.JSONDecodeError as err:
            raise TranscriptError(
                f"{path}, line {number}: invalid JSON ({err.msg} at column {err.colno})."
            ) from err
    return lines


def _problem(err: ValidationError) -> str:
    first = err.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    if first["type"] == "missing":
        return f"the field {where!r} is missing"
    if first["type"] == "literal_error":
        return f"{where} must be one of system, user, assistant, tool (got {first['input']!r})"
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def read_transcript(path: Path) -> list[TranscriptMessage]:
    """The messages of a transcript file, in file order.

    Raises:
        TranscriptError: The file cannot be read, a line is not JSON, a field is missing or wrong, or
            an id repeats; the message names the line.
    """
    messages: list[TranscriptMessage] = []
    seen: set[str] = set()
    for line in _lines(path):
        try:
            message = TranscriptMessage.model_validate(line.data)
        except ValidationError as err:
            raise TranscriptError(f"{path}, line {line.number}: {_problem(err)}.") from err
        if message.id in seen:
            raise TranscriptError(f"{path}, line {line.number}: the id {message.id!r} was used before.")
        seen.add(message.id)
        messages.append(message)
    return messages


def read_probes(path: Path) -> list[Probe]:
    """The probes of a probe file, in file order.

    Raises:
        TranscriptError: As :func:`read_transcript`.
    """
    probes: list[Probe] = []
    for line in _lines(path):
        try:
            probes.append(Probe.model_validate(line.data))
        except ValidationError as err:
            raise TranscriptError(f"{path}, line {line.number}: {_problem(err)}.") from err
    return probes
