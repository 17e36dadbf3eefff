"""Debugging threads and repeated errors, read from a conversation one message at a time.

A thread starts where an error is pasted (or first named by the user or a tool), gathers the
assistant's suggested fixes and the user's "still failing" / "that worked" replies, and ends when
it is resolved, when another error takes over, or when the talk moves on. The same error pasted
again and again forms a :class:`RepeatGroup`: its latest paste stands for the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.debugging.signatures import Sighting, Signature, sight

_FIX = re.compile(
    r"\b(?:try|change|set|add|install|run|use|update|upgrade|make sure|check|ensure|replace|remove|"
    r"restart|start|export|configure|rename|move|pin|downgrade|increase|wrap|call|pass|import|enable|"
    r"disable|delete|clear|reinstall|switch|open|bind|expose)\b",
    re.I,
)
_RESOLVED = re.compile(
    r"\b(?:that (?:worked|works|did it|did the trick|fixed it|solved it)|it works|works now"
    r"|(?:it'?s |is )?working now"
    r"|fixed it|(?:problem|issue|error) (?:is )?(?:solved|resolved|gone)|no more errors?|that solved)\b",
    re.I,
)
_FAILING = re.compile(
    r"\b(?:still (?:failing|fails|getting|get|broken|seeing|the same|not working|crashing)|same error"
    r"|(?:didn'?t|did not|doesn'?t|does not) (?:work|help|fix)|no luck)\b",
    re.I,
)
_EXPLAINS = re.compile(r"\b(?:because|was|were|wasn'?t|needed|turns out|the issue)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKUP = re.compile(r"^[\s>*#\-\d.)]+|[*_]{2}")
MAX_GAP = 6
"""A thread stops gathering fixes this many messages after its error was last seen or reported."""
MAX_SAID = 140
"""A fix or a reply is quoted up to this many characters."""
SHOWN_ATTEMPTS = 3
"""A thread's line quotes its latest this-many fixes (and counts the others)."""


@dataclass(frozen=True, slots=True)
class RepeatGroup:
    """The same error pasted again and again: its messages in order; the latest stands for all."""

    signature: Signature
    ids: tuple[int, ...]
    labels: tuple[str, ...]

    @property
    def representative(self) -> int:
        return self.ids[-1]

    @property
    def count(self) -> int:
        return len(self.ids)

    def reason(self) -> str:
        """Why a message of the group other than the representative stands aside."""
        return f"same error as {self.labels[-1]} (x{self.count})"


@dataclass(slots=True)
class Attempt:
    id: int
    label: str
    fix: str
    """The sentence of the assistant's reply that says what to do, verbatim."""


@dataclass(slots=True)
class DebugThread:
    """One error and what was tried about it, in conversation order."""

    error: Sighting
    first: int
    first_label: str
    last_seen: int
    """The position where the error was last pasted or reported still failing."""
    pastes: list[int] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    failing: list[int] = field(default_factory=list)
    """The user's replies that say it still fails (or paste it again)."""
    failing_label: str = ""
    result: str = ""
    """How it ended, in words ("" while it is open)."""
    result_id: int | None = None
    learning: str = ""
    resolved: bool = False

    @property
    def sources(self) -> tuple[int, ...]:
        """Every message the thread's line draws on (the fixes it quotes), in order."""
        shown = self.attempts[-SHOWN_ATTEMPTS:]
        ids = {self.first, *self.pastes, *(a.id for a in shown), *self.failing}
        if self.result_id is not None:
            ids.add(self.result_id)
        return tuple(sorted(ids))

    def line(self) -> str:
        """cause -> attempted fixes -> result -> learning, error names and files verbatim."""
        error = self.error
        cause = f"{error.line} ({', '.join(error.files[:3])})" if error.files else error.line
        times = len(self.pastes)
        cause += f", pasted x{times}" if times > 1 else ""
        shown = self.attempts[-SHOWN_ATTEMPTS:]
        tried = "; ".join(f'{a.label} "{a.fix}"' for a in shown) or "nothing suggested yet"
        if len(self.attempts) > len(shown):
            tried = f"{len(self.attempts) - len(shown)} earlier, then {tried}"
        if self.result:
            result = self.result
        elif self.failing:
            result = f"still failing (last said at {self.failing_label})"
        else:
            result = "no outcome reported yet"
        learning = self.learning or (
            "unresolved so far" if not self.resolved else "resolved by the last fix tried"
        )
        return f"{self.first_label}: {cause} -> tried: {tried} -> result: {result} -> learning: {learning}"


class DebugTracker:
    """Reads messages in conversation order (each once) and keeps their errors and threads.

    Holds only what a message contributes (its error, a suggested fix, a reply's outcome), not
    its text; :meth:`repeats` and :meth:`threads` are recomputed from that on demand.
    """

    def __init__(self) -> None:
        self.sightings: dict[int, tuple[str, Sighting]] = {}
        """Message id -> (its label, the error it names): only messages that name one."""
        self.order: list[int] = []
        """The ids of :attr:`sightings`, in conversation order."""
        self.kept: set[int] = set()
        """Pastes restored after standing aside as copies: they compete as any message again."""
        self.done: list[DebugThread] = []
        self.open: DebugThread | None = None
        self.position = 0

    def observe(self, item_id: int, role: str, text: str, label: str) -> None:
        """Read the next message of the conversation."""
        self.position += 1
        found = sight(text) if role != "system" else None
        if found is not None:
            self.sightings[item_id] = (label, found)
            self.order.append(item_id)
        thread = self.open
        if thread is not None and self.position - thread.last_seen > MAX_GAP:
            self._close(None, "", "")
            thread = None
        if found is not None and (found.paste or role != "assistant"):
            if thread is not None and found.signature.error == thread.error.signature.error:
                thread.pastes.append(item_id)
                thread.last_seen = self.position
                if role == "user":
                    thread.failing.append(item_id)
                    thread.failing_label = label
                return
            if thread is not None:
                self._close(item_id, f"moved on to {found.signature.name} ({label})", "")
            self.open = DebugThread(found, item_id, label, self.position, pastes=[item_id])
            return
        if thread is None:
            return
        if role == "assistant":
            fix = _fix_of(text)
            if fix:
                thread.attempts.append(Attempt(item_id, label, fix))
        elif role == "user":
            said = _first_sentence(text)
            if _RESOLVED.search(text) and not _FAILING.search(text):
                thread.resolved = True
                learning = _learning(thread, text)
                self._close(item_id, f'resolved at {label} ("{said}")', learning)
            elif _FAILING.search(text):
                thread.failing.append(item_id)
                thread.failing_label = label
                thread.last_seen = self.position

    def _close(self, result_id: int | None, result: str, learning: str) -> None:
        thread = self.open
        if thread is None:
            return
        thread.result_id, thread.result, thread.learning = result_id, result, learning
        self.done.append(thread)
        self.open = None

    def threads(self) -> list[DebugThread]:
        """The conversation's debugging threads so far (the open one last)."""
        return [*self.done, self.open] if self.open is not None else list(self.done)

    def repeats(self) -> list[RepeatGroup]:
        """Errors pasted more than once, each group its messages in order (a message is in one
        group at most)."""
        groups: dict[Signature, list[int]] = {}
        for item_id in self.order:
            found = self.sightings[item_id][1]
            if found.paste:
                groups.setdefault(found.signature, []).append(item_id)
        return [
            RepeatGroup(signature, tuple(ids), tuple(self.sightings[i][0] for i in ids))
            for signature, ids in groups.items()
            if len(ids) > 1
        ]


def _clean(sentence: str) -> str:
    sentence = _MARKUP.sub("", sentence).strip()
    return sentence if len(sentence) <= MAX_SAID else sentence[: MAX_SAID - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    for sentence in _SENTENCE.split(text):
        if sentence.strip():
            return _clean(sentence)
    return ""


def _fix_of(text: str) -> str:
    """The first sentence of an assistant reply that says what to do (outside code blocks)."""
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for sentence in _SENTENCE.split(line):
            if _FIX.search(sentence) and len(sentence.strip()) > 12:
                return _clean(sentence)
    return ""


def _learning(thread: DebugThread, reply: str) -> str:
    """What the thread teaches: the user's own explanation after "that worked", else which fix did."""
    sentences = [s for s in _SENTENCE.split(reply) if s.strip()]
    for sentence in sentences:
        rest = _RESOLVED.sub("", sentence).strip(" ,;:!-—")
        if len(rest) > 15 and re.search(
            r"\b(?:because|was|were|wasn'?t|needed|turns out|the issue)\b", rest, re.I
        ):
            return _clean(rest)
    if thread.attempts:
        last = thread.attempts[-1]
        return f'what fixed {thread.error.signature.name}: {last.label} "{last.fix}"'
    return f"{thread.error.signature.name} resolved"


def thread_label(thread: DebugThread) -> str:
    """How a thread is named in a list: its error's name and where it began."""
    return f"{thread.error.signature.name} ({thread.first_label})"
