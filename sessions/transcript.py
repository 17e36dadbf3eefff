"""Transcripts: conversations as JSON Lines, the format ``heedful replay`` reads (and export writes).

One message per line: ``{"id", "role", "content", "name"?, "created_at"?, "pinned"?, "status"?}``.
Replay leaves out a message whose ``status`` says it is not part of the conversation (superseded by a
retry, failed, still streaming), as the app does. Any other field is ignored by replay.

A session exported from Heedful (:mod:`sessions.exchange`) adds optional fields that make an import
give back the session exactly; :class:`SessionLine` reads them: the curation record (``state``,
``kept_by_user``, ``forgotten``, ``summary``), ``tokens``, ``model``, ``error``, and on the first
line ``session`` (title, consent policy, saved tokens, per-session settings).

Probe files hold ``{"id", "content"}`` per line; any other field (answers kept for scoring, say) is
ignored so that the engine never sees it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from engine.curation.keep_rules import MAX_RULE_CHARS
from engine.text.inert import quoted
from sessions.story_exchange import TranscriptStoryLine

Status = Literal["complete", "streaming", "interrupted", "failed", "superseded"]
"""The values of ``status``: :class:`engine.chat.MessageStatus`."""

OUT_OF_CONVERSATION: frozenset[str] = frozenset({"superseded", "failed", "streaming"})
"""Statuses of messages that are not part of the conversation (see
:func:`engine.curation.prompt.in_conversation`)."""


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
    status: Status | None = None
    """As the store had it; None (a transcript written by hand) means complete."""

    @property
    def in_conversation(self) -> bool:
        """False for a superseded, failed or unfinished reply: replay leaves it out, as the app does."""
        return self.status not in OUT_OF_CONVERSATION


class TranscriptSession(BaseModel):
    """The session a transcript was exported from: on the first line of an export, as ``session``."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    title: str
    consent_policy: Literal["keep", "summarize", "remove"] | None = None
    saved_tokens: int = Field(default=0, ge=0)
    system_prompt: str | None = None
    model: str | None = None
    profile: str | None = None
    temperature: float | None = None
    keep_rules: list[Annotated[str, StringConstraints(min_length=1, max_length=MAX_RULE_CHARS)]] = []
    """The session's keep rules (``/keep``), oldest first."""
    story_lines: list[TranscriptStoryLine] = []
    """The story lines a model wrote (:mod:`sessions.story_exchange`)."""


class SessionLine(TranscriptMessage):
    """A line of a transcript exported from Heedful: a message with everything the store keeps about it.

    Every added field is optional, so a plain transcript imports too. A message has a curation record
    when ``state`` is given, or any of ``pinned``, ``kept_by_user``, ``forgotten``, ``summary``.
    """

    state: Literal["active", "summarized", "pruned"] | None = None
    kept_by_user: bool | None = None
    forgotten: bool | None = None
    summary: str | None = None
    tokens: int | None = Field(default=None, ge=0)
    model: str | None = None
    error: str | None = None
    session: TranscriptSession | None = None


_Message = TypeVar("_Message", bound=TranscriptMessage)
_Model = TypeVar("_Model", bound=BaseModel)


class Probe(BaseModel):
    # extra="ignore": a probe file may carry answers for scoring; they must not reach the engine.
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    id: str
    content: str


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    data: object
    escapes: bool
    """The line holds a ``\\u`` escape: only then can a string in it be a lone surrogate."""


def _lines(path: Path) -> Iterator[_Line]:
    """The non-blank lines of ``path`` as JSON, read one at a time (a file of any size takes the
    memory of one line): the caller checks each before the next is read, so an error names the
    first bad line of the file, whatever is wrong with it."""
    try:
        handle = path.open("rb")
    except OSError as err:
        raise TranscriptError(f"{quoted(str(path))}: could not be read ({err.strerror or err}).") from err
    with handle:
        number = 0
        while True:
            try:
                chunk = handle.readline()
            except OSError as err:
                raise TranscriptError(
                    f"{quoted(str(path))}, line {number + 1}: could not be read ({err.strerror or err})."
                ) from err
            if not chunk:
                return
            number += 1
            chunk = chunk.removesuffix(b"\n")
            if not chunk.strip():
                continue
            yield _Line(number, _decoded(path, number, chunk), b"\\u" in chunk)


def _decoded(path: Path, number: int, chunk: bytes) -> object:
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TranscriptError(
            f"{quoted(str(path))}, line {number}: not UTF-8 text (bad byte at column {err.start + 1})."
        ) from err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise TranscriptError(
            f"{quoted(str(path))}, line {number}: invalid JSON ({err.msg} at column {err.colno})."
        ) from err
    except RecursionError as err:  # json recurses once per level of nested arrays and objects
        raise TranscriptError(
            f"{quoted(str(path))}, line {number}: arrays or objects nested too deeply."
        ) from err
    except ValueError as err:  # json lets int()'s limit on digits (4300) escape as a plain ValueError
        raise TranscriptError(
            f"{quoted(str(path))}, line {number}: a number has too many digits to read."
        ) from err


def _not_text(record: BaseModel) -> str | None:
    """What is wrong with a string field holding a lone surrogate (JSON can write one as ``"\\ud800"``).

    Such a string is not text: no file, database or terminal can encode it, so it is refused here, where
    the line is known, instead of failing later in the store or on output.
    """
    for name in type(record).model_fields:
        value = getattr(record, name)
        if isinstance(value, BaseModel):
            if (problem := _not_text(value)) is not None:
                return f"{name}.{problem}"
        elif isinstance(value, str):
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
        expected = str(first.get("ctx", {}).get("expected", "")).replace("'", "")
        return f"{where} must be one of {expected.replace(' or ', ', ')} (got {first['input']!r})"
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def read_transcript(path: Path) -> list[TranscriptMessage]:
    """The messages of a transcript file, in file order.

    Raises:
        TranscriptError: The file cannot be read, a line is not JSON, a field is missing or wrong, or
            an id repeats; the message names the line.
    """
    return [message for _, message in _read_messages(path, TranscriptMessage)]


def session_lines(path: Path) -> Iterator[tuple[int, SessionLine]]:
    """The messages of a transcript with the fields an export adds, each with its line number, read
    one at a time. Unlike :func:`read_transcript`, repeated ids are left to the caller (which can
    look them up without holding every id of a huge file).

    Raises:
        TranscriptError: As :func:`read_transcript`, and for a bad value in an added field.
    """
    for line in _lines(path):
        yield line.number, _checked(path, line, SessionLine)


def _checked(path: Path, line: _Line, kind: type[_Model]) -> _Model:
    try:
        message = kind.model_validate(line.data)
    except ValidationError as err:
        raise TranscriptError(f"{quoted(str(path))}, line {line.number}: {_problem(err)}.") from err
    if line.escapes and (problem := _not_text(message)) is not None:
        raise TranscriptError(f"{quoted(str(path))}, line {line.number}: {problem}.")
    return message


def _read_messages(path: Path, kind: type[_Message]) -> list[tuple[int, _Message]]:
    messages: list[tuple[int, _Message]] = []
    seen: set[str] = set()
    for line in _lines(path):
        message = _checked(path, line, kind)
        if message.id in seen:
            raise TranscriptError(
                f"{quoted(str(path))}, line {line.number}: the id {message.id!r} was used before."
            )
        seen.add(message.id)
        messages.append((line.number, message))
    return messages


def read_probes(path: Path) -> list[Probe]:
    """The probes of a probe file, in file order.

    Raises:
        TranscriptError: As :func:`read_transcript`.
    """
    return [_checked(path, line, Probe) for line in _lines(path)]
