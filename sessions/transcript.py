"""Transcripts: conversations as JSON Lines, the format ``heedful replay`` reads (and export writes).

One message per line: ``{"id", "role", "content", "name"?, "created_at"?, "pinned"?}``. Probe files
hold ``{"id", "content"}`` per line; any other field (answers kept for scoring, say) is ignored so
that the engine never sees it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
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


def _lines(path: Path) -> Iterator[_Line]:
    """The non-blank lines of ``path`` as JSON, one at a time: the caller checks each before the next is
    read, so an error names the first bad line of the file, whatever is wrong with it."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise TranscriptError(f"{path}: could not be read ({err.strerror or err}).") from err
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
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise TranscriptError(
                f"{path}, line {number}: invalid JSON ({err.msg} at column {err.colno})."
            ) from err
        except RecursionError as err:  # json recurses once per level of nested arrays and objects
            raise TranscriptError(f"{path}, line {number}: arrays or objects nested too deeply.") from err
        except ValueError as err:  # json lets int()'s limit on digits (4300) escape as a plain ValueError
            raise TranscriptError(f"{path}, line {number}: a number has too many digits to read.") from err
        yield _Line(number, data)


def _not_text(record: BaseModel) -> str | None:
    """What is wrong with a string field holding a lone surrogate (JSON can write one as ``"\\ud800"``).

    Such a string is not text: no file, database or terminal can encode it, so it is refused here, where
    the line is known, instead of failing later in the store or on output.
    """
    for name in type(record).model_fields:
        value = getattr(record, name)
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as err:
                return f"{name} holds a lone surrogate (\\u{ord(value[err.start]):04x}), which is not text"
    return None


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
        if (problem := _not_text(message)) is not None:
            raise TranscriptError(f"{path}, line {line.number}: {problem}.")
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
            probe = Probe.model_validate(line.data)
        except ValidationError as err:
            raise TranscriptError(f"{path}, line {line.number}: {_problem(err)}.") from err
        if (problem := _not_text(probe)) is not None:
            raise TranscriptError(f"{path}, line {line.number}: {problem}.")
        probes.append(probe)
    return probes
