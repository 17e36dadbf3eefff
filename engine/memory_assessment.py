"""The offline assessment of a stretch of conversation: a deterministic heuristic for when no model is
connected, or the model's answer is unusable (see :mod:`engine.memory`).

Pure and UI-free. The curation engine (entities, roles) is imported inside :func:`assess_offline`,
not with this module: the app imports :class:`OfflineAssessor` at start-up, and the first screen must
not wait for the entity patterns to compile.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from engine.chat import PromptMessage
from engine.memory import MAX_TOPICS, Assessed, AssessedBy, Assessment, clip_text

_ROLE_VALUE = {
    "decision": 1.0,
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


@dataclass(frozen=True, slots=True)
class _Read:
    role: str
    """The message's memory role."""
    author: str
    text: str


def assess_offline(messages: Sequence[PromptMessage]) -> Assessment:
    """A deterministic assessment from the engine's heuristics, for when no model is connected.

    Decisions, preferences, facts and resolutions raise the importance (the user's own count
    double), chit-chat lowers it, and things named (entities) add a little. The summary is the
    opening sentences of the messages that carry decisions, preferences and facts; tags are the
    entities named most often; topics the most frequent content words.

    Args:
        messages: The stretch of conversation to assess (system messages are ignored).
    """
    from engine.entities import extract_entities
    from engine.roles import classify

    read: list[_Read] = []
    entity_counts: Counter[str] = Counter()
    entity_first: dict[str, int] = {}
    for message in messages:
        if message.role == "system" or not message.content.strip():
            continue
        text = message.content[:_READ_CHARS]
        mentions = extract_entities(text)
        read.append(_Read(classify(text, mentions).value, message.role, text))
        for mention in mentions:
            label = " ".join(mention.label.casefold().split())
            entity_counts[label] += 1
            entity_first.setdefault(label, len(entity_first))
    if not read:
        return Assessment(importance=0.0, summary="An empty conversation.", reasoning="Nothing was said.")

    weights = [_USER_WEIGHT if r.author == "user" else 1.0 for r in read]
    mean = sum(_ROLE_VALUE[r.role] * w for r, w in zip(read, weights, strict=True)) / sum(weights)
    user_key = sum(1 for r in read if r.author == "user" and r.role in {"decision", "preference"})
    named = len(entity_counts)
    importance = 0.1 + 0.6 * mean + min(0.2, 0.1 * user_key) + 0.1 * min(1.0, named / 8)

    roles = Counter(r.role for r in read)
    shown = ", ".join(
        f"{count} {role}" for role, count in sorted(roles.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    reasoning = (
        f"Offline estimate from {len(read)} message{'s' if len(read) != 1 else ''} ({shown}) and "
        f"{named} named thing{'s' if named != 1 else ''}: decisions, preferences and facts raise it, "
        "chit-chat lowers it."
    )
    tags = sorted(entity_counts, key=lambda label: (-entity_counts[label], entity_first[label]))
    return Assessment.clamped(
        importance=importance,
        summary=_offline_summary(read),
        tags=tags,
        topics=_topics(read),
        reasoning=reasoning,
    )


def _offline_summary(read: Sequence[_Read]) -> str:
    key = [r for r in read if r.role in _KEY_ROLES]
    # The user's key messages first (their decisions), then the replies', each in order.
    ordered = [r for r in key if r.author == "user"] + [r for r in key if r.author != "user"]
    if not ordered:
        ordered = [r for r in read if r.role != "noise"]
    if not ordered:
        return clip_text(f"Small talk: {_first_sentence(read[0].text)}", _SUMMARY_CHARS)
    parts: list[str] = []
    used = 0
    for r in ordered:
        sentence = _first_sentence(r.text)
        if not sentence or sentence in parts:
            continue
        if parts and used + len(sentence) > _SUMMARY_CHARS:
            break
        parts.append(sentence)
        used += len(sentence) + 1
    return clip_text(" ".join(parts), _SUMMARY_CHARS) or "A conversation."


def _first_sentence(text: str) -> str:
    for sentence in _SENTENCE.split(text[:2_000]):
        sentence = " ".join(sentence.split())
        if sentence:
            return sentence
    return ""


def _topics(read: Sequence[_Read]) -> list[str]:
    """The most frequent content words of the non-chit-chat messages (by stem, shown as written)."""
    from engine.text import STOPWORDS, stem

    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    surfaces: dict[str, Counter[str]] = {}
    for r in read:
        if r.role == "noise":
            continue
        for word in _TOPIC_WORD.findall(r.text.casefold()):
            if word in STOPWORDS:
                continue
            root = stem(word)
            counts[root] += 1
            first.setdefault(root, len(first))
            surfaces.setdefault(root, Counter())[word] += 1
    ranked = sorted(counts, key=lambda root: (-counts[root], first[root]))[:MAX_TOPICS]
    return [min(surfaces[root], key=lambda w: (-surfaces[root][w], w)) for root in ranked]


class OfflineAssessor:
    """:class:`engine.protocols.MemoryAssessor` with :func:`assess_offline`, off the event loop."""

    async def assess(self, messages: Sequence[PromptMessage]) -> Assessed:
        assessment = await asyncio.to_thread(assess_offline, messages)
        return Assessed(assessment, AssessedBy.HEURISTIC)
