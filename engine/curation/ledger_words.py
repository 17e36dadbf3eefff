"""Ledger entries in words: what happened to what ("#14 summarized"), and the curator's repeated
fallback told once with a count, so that each row says what happened without being opened."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.operations import OpKind

_OPERATIONS: dict[str, str] = {
    OpKind.PRUNE: "pruned",
    OpKind.TRANSFORM: "summarized",
    OpKind.PRIORITIZE: "kept verbatim",
    OpKind.TAG: "tagged",
    OpKind.RECALL: "recalled for a turn",
    OpKind.RESTORE: "restored",
    OpKind.PIN: "pinned",
    OpKind.UNPIN: "unpinned",
    # Not operations of the engine: what the user's edits and an import write in their place.
    "edit": "replaced by your edit",
    "delete": "deleted",
    "import": "imported",
}
_ENTITY = {"active": "entity active", "retained": "entity kept", "pruned": "entity dropped"}
_CURATOR = {"fallback": "no advice", "structured": "advice", "json": "advice (JSON mode)"}


def about(entry: LedgerEntry) -> str:
    """What the entry is about: ``#14`` for a message, else the entity ref or "session"."""
    return f"#{entry.target}" if entry.target.isdigit() else entry.target


def happened(entry: LedgerEntry) -> str:
    """What happened, in a word or three: "summarized", "your answer: keep", "left out this once"."""
    action = entry.action
    if entry.kind is EntryKind.OPERATION:
        if action == OpKind.TRANSFORM and entry.before == entry.after:
            return "summary rewritten"
        if action == "import" and entry.after:
            return f"imported {entry.after}"
        return _OPERATIONS.get(action, action)
    if entry.kind is EntryKind.CONSENT:
        return f"your answer: {action}" if entry.target.isdigit() else f"for all: {action}"
    if entry.kind is EntryKind.ENTITY:
        return _ENTITY.get(action, f"entity {action}")
    if entry.kind is EntryKind.OVERFLOW:
        return "left out this once" if entry.target.isdigit() else action
    if entry.kind is EntryKind.RULE:
        return action
    return _CURATOR.get(action, action)


def change(entry: LedgerEntry) -> str:
    """The state change, "active → summarized", or "" when nothing changed state."""
    if entry.before and entry.after and entry.before != entry.after:
        return f"{entry.before} → {entry.after}"
    return ""


@dataclass(frozen=True, slots=True)
class Told:
    """An entry as it is told: ``times`` identical entries in a row said once, the first at ``since``."""

    entry: LedgerEntry
    times: int = 1
    since: int = 0

    @property
    def repeats(self) -> str:
        """ "×12 since turn 3" for a repeated entry, else ""."""
        return f"×{self.times} since turn {self.since}" if self.times > 1 else ""


def told_once(entries: Sequence[LedgerEntry]) -> list[Told]:
    """``entries`` (oldest first) with each run of curator fallbacks (no advice, turn after turn)
    said once, at its latest place, with its latest reason and its count: a failure that recurs
    every turn is one fact. A run is broken by advice; other kinds of entries do not break it.
    """
    told: list[Told | None] = []
    run_at: int | None = None
    """Where in ``told`` the current run of fallbacks is."""
    for entry in entries:
        if entry.kind is not EntryKind.CURATOR:
            told.append(Told(entry))
            continue
        last = told[run_at] if run_at is not None else None
        if run_at is not None and last is not None and entry.action == last.entry.action == "fallback":
            told[run_at] = None
            told.append(Told(entry, last.times + 1, last.since))
        else:
            told.append(Told(entry, 1, entry.turn))
        run_at = len(told) - 1
    return [t for t in told if t is not None]
