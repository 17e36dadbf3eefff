"""The offline assessment of a stretch of conversation: a deterministic heuristic for when no model is
connected, or the model's answer is unusable (see :mod:`engine.memory.memories`).

Pure and UI-free. The curation engine (entities, roles) is imported inside :func:`assess_offline`,
not with this module: the app imports :class:`OfflineAssessor` at start-up, and the first screen must
not wait for the entity patterns to compile.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.chat import PromptMessage
from engine.entities.mentions import EntityKind
from engine.memory.assessed import Assessed, AssessedBy, Assessment
from engine.memory.memories import MAX_TOPICS
from engine.text.clipping import clip_text
from engine.turn.attachments import split_attachment

if TYPE_CHECKING:
    from engine.curation.items import MemoryRole
    from engine.entities.mentions import Mention

_ROLE_VALUE = {
    "decision": 1.0,
    "attempt": 0.4,
    "preference": 1.0,
    "resolution": 0.8,
    "fact": 0.7,
    "cause": 0.6,
    "error": 0.5,
    "context": 0.3,
    "noise": 0.0,
}
"""How much a message of each memory role says about what is worth keeping."""
_KEY_ROLES = frozenset({"decision", "preference", "fact", "resolution"})
"""Roles whose sentences make the summary, and whose presence in the user's words raises importance."""
_USER_WEIGHT = 2.0
"""The user's own messages count double: they say what was decided and what they like."""
_READ_CHARS = 20_000
"""Only the opening of a giant message is read."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_TOPIC_WORD = re.compile(r"[^\W\d_]{3,}")
_SUMMARY_CHARS = 300
_SENTENCE_CHARS = 4_000
"""Sentences are read from each message's opening this long."""
_MESSAGE_SENTENCES = 40
_DIGITS = re.compile(r"\d+")
_GREETING = re.compile(r"^\W*(hi|hey|hello|thanks|thank you|good (?:morning|evening)|sure|ok(?:ay)?)\b", re.I)
_SIGNAL_WORDS = frozenset(
    [
        "decided",
        "decide",
        "decision",
        "prefer",
        "use",
        "using",
        "let",
        "going",
        "want",
        "need",
        "like",
        "agreed",
        "noted",
        "sure",
    ]
)
"""Words that tell a sentence's role, not what it is about: never topics."""
_TIER = {"decision": 0, "preference": 0, "resolution": 1, "fact": 1, "cause": 1, "error": 2, "attempt": 2}
"""Which sentences a summary takes first (lower first); the rest (context) come last."""


@dataclass(frozen=True, slots=True)
class _Read:
    role: str
    """The message's memory role."""
    author: str
    text: str


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    role: str
    """The sentence's own memory role."""
    by_user: bool
    position: int
    """Its order in the conversation, for ties."""
    labels: tuple[str, ...]
    """The entities it names (case-folded), sentence-initial common words left out."""


def assess_offline(messages: Sequence[PromptMessage]) -> Assessment:
    """A deterministic assessment from the engine's heuristics, for when no model is connected.

    Decisions, preferences, facts and resolutions raise the importance (the user's own count
    double), chit-chat lowers it, and things named (entities) add a little. The summary is
    extractive: the conversation's most informative sentences, decisions and preferences first,
    then facts, the user's before the replies'. Tags are the entities named most often and topics
    the most frequent content words, both read from those sentences only: a reply that echoes the
    user's words, and a reply's boilerplate repeated turn after turn, are left out.

    Args:
        messages: The stretch of conversation to assess (system messages are ignored).
    """
    from engine.entities.extractor import extract_entities
    from engine.text.roles import classify

    read: list[_Read] = []
    named: list[tuple[str, str, list[Mention]]] = []
    for message in messages:
        if message.role == "system" or not message.content.strip():
            continue
        attached = split_attachment(message.content)  # the file's text, not "Attached file x (669 bytes)"
        text = (attached[1] if attached else message.content)[:_READ_CHARS]
        mentions = extract_entities(text)
        read.append(_Read(classify(text, mentions).value, message.role, text))
        named.append((message.role, text, mentions))
    if not read:
        return Assessment(importance=0.0, summary="An empty conversation.", reasoning="Nothing was said.")
    sentences = _sentences(named, classify)
    labels = Counter(label for s in sentences for label in set(s.labels))

    weights = [_USER_WEIGHT if r.author == "user" else 1.0 for r in read]
    mean = sum(_ROLE_VALUE[r.role] * w for r, w in zip(read, weights, strict=True)) / sum(weights)
    user_key = sum(1 for r in read if r.author == "user" and r.role in {"decision", "preference"})
    importance = 0.1 + 0.6 * mean + min(0.2, 0.1 * user_key) + 0.1 * min(1.0, len(labels) / 8)

    roles = Counter(r.role for r in read)
    shown = ", ".join(
        f"{count} {role}" for role, count in sorted(roles.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    reasoning = (
        f"Offline estimate from {len(read)} message{'s' if len(read) != 1 else ''} ({shown}) and "
        f"{len(labels)} named thing{'s' if len(labels) != 1 else ''}: decisions, preferences and facts "
        "raise it, chit-chat lowers it."
    )
    first = {label: n for n, label in reversed(list(enumerate(lb for s in sentences for lb in s.labels)))}
    tags = sorted(labels, key=lambda label: (-labels[label], first[label]))
    return Assessment.clamped(
        importance=importance,
        summary=_offline_summary(sentences, read),
        tags=tags,
        topics=_topics([s for s in sentences if s.role != "noise"]),
        reasoning=reasoning,
    )


def _sentences(
    named: Sequence[tuple[str, str, list[Mention]]], classify: Callable[[str, Sequence[Mention]], MemoryRole]
) -> list[_Sentence]:
    """Every sentence worth reading, with its role and entities; echoes and boilerplate left out.

    A reply sentence holding one of the user's sentences whole is an echo of it, and a reply
    sentence that recurs (numbers aside) in two replies or more is the model's boilerplate.
    """
    split = [
        (role, mentions, [_clean(p) for p in _SENTENCE.split(text[:_SENTENCE_CHARS])][:_MESSAGE_SENTENCES])
        for role, text, mentions in named
    ]
    in_replies: Counter[str] = Counter()
    for role, _, parts in split:
        if role != "user":
            in_replies.update({_DIGITS.sub("#", p) for p in parts})
    elsewhere: set[str] = set()
    """Labels seen other than as a sentence's capitalised first word: names, whatever opens a sentence."""
    kept: list[tuple[str, str, list[Mention]]] = []
    said: list[str] = []
    """The sentences of the user's last message: what an echoing reply repeats."""
    for role, mentions, parts in split:
        if role == "user":
            said = [p for p in parts if len(p.split()) >= 3]
        for part in parts:
            if len(part.split()) < 2 or (role != "user" and in_replies[_DIGITS.sub("#", part)] >= 2):
                continue
            if role != "user" and any(user in part for user in said):
                continue
            found = [m for m in mentions if m.label in part]
            if len(part.split()) < 4 and not found:  # "How are you?", "Sounds good to me"
                continue
            elsewhere.update(
                " ".join(m.label.casefold().split()) for m in found if not _is_initial_word(m, part)
            )
            kept.append((role, part, found))
    sentences: list[_Sentence] = []
    for n, (role, part, found) in enumerate(kept):
        real = [
            m
            for m in found
            if not _is_initial_word(m, part) or " ".join(m.label.casefold().split()) in elsewhere
        ]
        sentence_role = classify(part, real).value
        if _GREETING.match(part) and sentence_role in ("fact", "context"):
            sentence_role = "noise"
        labels = tuple(dict.fromkeys(" ".join(m.label.casefold().split()) for m in real))
        sentences.append(_Sentence(part, sentence_role, role == "user", n, labels))
    return sentences


def _tier(role: str) -> int:
    return _TIER.get(role, 3)


def _is_initial_word(mention: Mention, sentence: str) -> bool:
    """A capitalised common word that opens a sentence ("Echo", "Startup"), not a name."""
    label = mention.label
    return (
        mention.kind is EntityKind.NAME
        and " " not in label
        and sentence.startswith(label)
        and label[1:].islower()
    )


def _clean(sentence: str) -> str:
    """One line, without quote marks or emphasis that opened it."""
    return " ".join(sentence.split()).lstrip("> ").replace("**", "").strip()


def _offline_summary(sentences: Sequence[_Sentence], read: Sequence[_Read]) -> str:
    """The most informative sentences, decisions and preferences first, then facts, then the rest
    only if there is nothing better; the user's own before the replies', questions last."""
    ranked = sorted(
        (s for s in sentences if s.role != "noise"),
        key=lambda s: (
            _tier(s.role),
            s.text.endswith("?"),
            not s.by_user,
            -min(3, len(s.labels)),
            s.position,
        ),
    )
    if not ranked:
        opening = next((_clean(p) for r in read for p in _SENTENCE.split(r.text[:2_000]) if p.strip()), "")
        return clip_text(f"Small talk: {opening}", _SUMMARY_CHARS)
    best = _tier(ranked[0].role)
    parts: list[str] = []
    used = 0
    for sentence in ranked:
        if parts and (_tier(sentence.role) > max(best, 1) or used + len(sentence.text) > _SUMMARY_CHARS):
            continue  # a less telling sentence only when nothing better was said; room permitting
        if sentence.text in parts or f"{sentence.text}." in parts:
            continue
        parts.append(sentence.text if sentence.text[-1] in ".!?:;…" else f"{sentence.text}.")
        used += len(sentence.text) + 1
    return clip_text(" ".join(parts), _SUMMARY_CHARS) or "A conversation."


def _topics(read: Sequence[_Sentence]) -> list[str]:
    """The most frequent content words of the sentences read (by stem, shown as written)."""
    from engine.text.terms import STOPWORDS, stem

    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    surfaces: dict[str, Counter[str]] = {}
    for r in read:
        for word in _TOPIC_WORD.findall(r.text.casefold()):
            if word in STOPWORDS or word in _SIGNAL_WORDS:
                continue
            root = stem(word)
            counts[root] += 1
            first.setdefault(root, len(first))
            surfaces.setdefault(root, Counter())[word] += 1
    ranked = sorted(counts, key=lambda root: (-counts[root], first[root]))[:MAX_TOPICS]
    return [min(surfaces[root], key=lambda w: (-surfaces[root][w], w)) for root in ranked]


class OfflineAssessor:
    """:class:`engine.protocols.memory.MemoryAssessor` with :func:`assess_offline`, off the event loop."""

    async def assess(self, messages: Sequence[PromptMessage]) -> Assessed:
        assessment = await asyncio.to_thread(assess_offline, messages)
        return Assessed(assessment, AssessedBy.HEURISTIC)
