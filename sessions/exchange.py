"""Sessions in and out of Heedful: transcripts (JSON Lines) and Markdown.

A transcript export is the format ``heedful replay`` reads (:mod:`sessions.transcript`), one message per
line, with optional fields that let an import give the session back exactly::

    {"id": "12", "role": "assistant", "content": "...", "created_at": "2026-01-02T03:04:05.000006+00:00",
     "pinned": false, "status": "complete",
     "state": "summarized", "kept_by_user": false, "forgotten": false, "summary": "...",
     "tokens": 41, "model": "gpt-4o-mini", "error": null,
     "session": {"title": "...", "saved_tokens": 0, "consent_policy": "keep", "keep_rules": [...], ...}}

- ``id`` is the id the message had in the transcript it was imported from, else its id in the store.
- ``state`` and its companions are written when the engine has a curation record for the message,
  ``summary`` when there is one; ``tokens``, ``model`` and ``error`` when known. ``session`` is on the
  first line only: title, consent policy, tokens saved, keep rules (``/keep``), the story lines a
  model wrote (:mod:`sessions.story_exchange`), and the per-session settings.
- Times are UTC with microseconds; a transcript from elsewhere may give a naive time, read as UTC.
  An import refuses a time outside 1970-2099, naming its line.

An import (:mod:`sessions.importing`, streamed from the file) creates a new session with new row
ids and keeps each message's transcript id
(``messages.transcript_id``), so export → import → export writes the same file. A reply that was
still streaming when it was exported is imported as interrupted: nothing is writing it any more.
The entity registry is not exported (the next turn derives it again from the messages), nor is the
ledger: the import writes one ledger entry per message whose curation record it set.

Markdown is for reading: a heading per message with who wrote it and when, pinned, summarized,
pruned and forgotten messages marked, superseded replies left out (the chat does not show them).
Tool output, error texts and Python tracebacks are fenced as code. Both formats are inert to ``cat``:
the transcript writes C1, DEL, bidi and zero-width characters as JSON escapes, and Markdown shows
every control, bidi and zero-width character as a visible symbol (:mod:`engine.text.inert`).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal

from engine.chat import MessageStatus, Role, SessionSettings, counted
from engine.curation.consent import ConsentChoice
from engine.curation.items import ItemState
from engine.text.inert import inert, inert_json, inert_line
from engine.text.moments import local_text, stored_moment
from sessions import markdown_text, story_exchange
from sessions.rows import select, select_one
from sessions.story_exchange import TranscriptStoryLine

ExportFormat = Literal["md", "jsonl"]
FORMATS: tuple[ExportFormat, ...] = ("jsonl", "md")

INTERRUPTED_ON_EXPORT = "This reply was still being written when the session was exported."

_ROLE_NAMES: dict[str, str] = {"user": "You", "assistant": "Assistant", "system": "System", "tool": "Tool"}
_STATE_MARKS = {ItemState.SUMMARIZED: "≈ summarized", ItemState.PRUNED: "✂ pruned"}
"""The heading's mark for a message the engine no longer sends verbatim."""
_STATUS_MARKS = {
    MessageStatus.INTERRUPTED: "⚠ interrupted",
    MessageStatus.FAILED: "✗ failed",
    MessageStatus.STREAMING: "still being written",
}
"""The heading's mark for a reply that did not complete."""


@dataclass(frozen=True, slots=True)
class Curation:
    """The engine's record about one message (see :class:`engine.protocols.store.ItemRecord`)."""

    state: ItemState = ItemState.ACTIVE
    pinned: bool = False
    kept_by_user: bool = False
    summary: str | None = None
    forgotten: bool = False


@dataclass(frozen=True, slots=True)
class ExchangedMessage:
    """One message as it leaves or enters the store."""

    id: str
    """Its transcript id."""
    role: Role
    content: str
    status: MessageStatus
    created_at: datetime
    tokens: int | None = None
    model: str | None = None
    error: str | None = None
    curation: Curation | None = None
    """None: the engine has decided nothing about it (active, unpinned)."""

    @property
    def pinned(self) -> bool:
        return self.curation is not None and self.curation.pinned


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """What a session holds besides its messages."""

    title: str
    consent_policy: ConsentChoice | None = None
    saved_tokens: int = 0
    settings: SessionSettings = field(default_factory=SessionSettings)
    keep_rules: tuple[str, ...] = ()
    """The texts of the session's keep rules (``/keep``), oldest first."""
    story_lines: tuple[TranscriptStoryLine, ...] = ()
    """The story lines a model wrote (:mod:`sessions.story_exchange`), naming transcript ids."""


@dataclass(frozen=True, slots=True)
class SessionDump:
    """A whole session, ready to be written out or stored."""

    header: SessionHeader
    messages: tuple[ExchangedMessage, ...]

    @property
    def shown(self) -> tuple[ExchangedMessage, ...]:
        """The messages the chat shows, and counts (:func:`engine.chat.counted`)."""
        return tuple(m for m in self.messages if counted(m.status))


# --- the store side: functions over an open connection, run by SqliteChatStore in a transaction --


def _utc_text(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def dump(conn: sqlite3.Connection, session_id: int) -> SessionDump | None:
    """Everything about a (not deleted) session, or None when there is no such session."""
    row = select_one(
        conn,
        "SELECT s.title AS title, c.consent_policy AS consent_policy,"
        " COALESCE(c.saved_tokens, 0) AS saved_tokens, s.system_prompt AS system_prompt, s.model AS model,"
        " s.profile AS profile, s.temperature AS temperature"
        " FROM sessions s LEFT JOIN session_curation c ON c.session_id = s.id"
        " WHERE s.id = ? AND s.deleted_at IS NULL",
        (session_id,),
    )
    if row is None:
        return None
    header = SessionHeader(
        title=str(row["title"]),
        consent_policy=ConsentChoice(row["consent_policy"]) if row["consent_policy"] else None,
        saved_tokens=int(row["saved_tokens"]),
        settings=SessionSettings(
            system_prompt=row["system_prompt"],
            model=row["model"],
            profile=row["profile"],
            temperature=None if row["temperature"] is None else float(row["temperature"]),
        ),
        keep_rules=tuple(
            str(rule["text"])
            for rule in select(
                conn, "SELECT text FROM keep_rules WHERE session_id = ? ORDER BY id", (session_id,)
            )
        ),
    )
    rows = select(
        conn,
        "SELECT m.id AS id, m.transcript_id AS transcript_id, m.role AS role, m.content AS content,"
        " m.status AS status, m.created_at AS created_at, m.tokens AS tokens, m.model AS model,"
        " m.error AS error, i.state AS state, i.pinned AS pinned, i.kept_by_user AS kept_by_user,"
        " i.summary AS summary, i.forgotten AS forgotten"
        " FROM messages m LEFT JOIN item_state i ON i.message_id = m.id"
        " WHERE m.session_id = ? ORDER BY m.id",
        (session_id,),
    )
    used: set[str] = set()
    messages = [_exchanged(r, used) for r in rows]
    ids = {int(r["id"]): m.id for r, m in zip(rows, messages, strict=True)}
    header = replace(header, story_lines=story_exchange.dumped(conn, session_id, ids))
    return SessionDump(header, tuple(messages))


def _exchanged(row: sqlite3.Row, used: set[str]) -> ExchangedMessage:
    """A message of :func:`dump`'s query, its transcript id not one of ``used`` (now added to it)."""
    curation = (
        None
        if row["state"] is None
        else Curation(
            state=ItemState(row["state"]),
            pinned=bool(row["pinned"]),
            kept_by_user=bool(row["kept_by_user"]),
            summary=row["summary"],
            forgotten=bool(row["forgotten"]),
        )
    )
    transcript_id = row["transcript_id"]
    return ExchangedMessage(
        id=_unused(str(transcript_id) if transcript_id is not None else str(row["id"]), used),
        role=row["role"],
        content=str(row["content"]),
        status=MessageStatus(row["status"]),
        created_at=stored_moment(str(row["created_at"])),
        tokens=None if row["tokens"] is None else int(row["tokens"]),
        model=row["model"],
        error=row["error"],
        curation=curation,
    )


def _unused(wanted: str, used: set[str]) -> str:
    """``wanted``, or ``wanted-2``, ``wanted-3``...: a message typed after an import may have a row id
    equal to an imported message's transcript id, and a transcript's ids must differ."""
    candidate, n = wanted, 1
    while candidate in used:
        n += 1
        candidate = f"{wanted}-{n}"
    used.add(candidate)
    return candidate


# --- transcripts -------------------------------------------------------------------------------


def to_jsonl(session: SessionDump) -> str:
    """The session as a transcript (see the module docstring); empty for a session with no messages."""
    lines = []
    for number, message in enumerate(session.messages):
        line: dict[str, object] = {
            "id": message.id,
            "role": message.role,
            "content": message.content,
            "created_at": _utc_text(message.created_at),
            "pinned": message.pinned,
            "status": message.status.value,
        }
        record = message.curation
        if record is not None:
            line["state"] = record.state.value
            line["kept_by_user"] = record.kept_by_user
            line["forgotten"] = record.forgotten
            if record.summary is not None:
                line["summary"] = record.summary
        for name in ("tokens", "model", "error"):
            value = getattr(message, name)
            if value is not None:
                line[name] = value
        if number == 0:
            line["session"] = _header_json(session.header)
        # C1, DEL, bidi and zero-width characters are legal raw in JSON strings; written escaped, an
        # export shown in a terminal (cat, less -r) cannot drive it. json.dumps escapes C0 itself.
        lines.append(inert_json(json.dumps(line, ensure_ascii=False)) + "\n")
    return "".join(lines)


def _header_json(header: SessionHeader) -> dict[str, object]:
    data: dict[str, object] = {"title": header.title, "saved_tokens": header.saved_tokens}
    if header.consent_policy is not None:
        data["consent_policy"] = header.consent_policy.value
    data.update({name: value for name, value in asdict(header.settings).items() if value is not None})
    if header.keep_rules:
        data["keep_rules"] = list(header.keep_rules)
    if header.story_lines:
        data["story_lines"] = [line.model_dump() for line in header.story_lines]
    return data


# --- Markdown ----------------------------------------------------------------------------------


def to_markdown(session: SessionDump) -> str:
    """The session for reading: a heading per message (who, when, its marks), then its text."""
    shown = session.shown
    count = f"{len(shown):,} message" + ("" if len(shown) == 1 else "s")
    parts = [f"# {_one_line(session.header.title)}\n\n{count} · exported from Heedful\n"]
    if session.header.keep_rules:
        rules = "\n".join(f"- {_one_line(text)}" for text in session.header.keep_rules)
        parts.append(f"\nKept by your rules (/keep):\n\n{rules}\n")
    parts.append(story_exchange.markdown(session.header.story_lines))
    for message in shown:
        parts.append(
            f"\n## {_heading(message)}\n\n{markdown_text.body(message.content, role=message.role)}\n"
        )
        record = message.curation
        if record is not None and record.state == ItemState.SUMMARIZED and record.summary:
            quoted = "\n".join(f"> {line}" if line else ">" for line in inert(record.summary).split("\n"))
            parts.append(f"\n> **Sent to the model as this summary:**\n>\n{quoted}\n")
        if message.error and message.status in (MessageStatus.FAILED, MessageStatus.INTERRUPTED):
            parts.append(f"\n{markdown_text.error(message.error)}\n")
    return "".join(parts)


def _heading(message: ExchangedMessage) -> str:
    who = _ROLE_NAMES.get(message.role, message.role)
    if message.role == "assistant" and message.model:
        who += f" ({_one_line(message.model)})"
    when = local_text(message.created_at, "%Y-%m-%d %H:%M %Z").strip()
    marks = [who, when, f"#{message.id}"]
    record = message.curation
    if record is not None:
        if record.pinned:
            marks.append("📌 pinned")
        if record.state in _STATE_MARKS:
            marks.append(_STATE_MARKS[record.state])
        if record.forgotten:
            marks.append("forgotten")
        if record.kept_by_user:
            marks.append("kept by you")
    if message.status in _STATUS_MARKS:
        marks.append(_STATUS_MARKS[message.status])
    return " · ".join(marks)


def _one_line(text: str) -> str:
    return inert_line(" ".join(text.split()))
