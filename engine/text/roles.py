"""A heuristic memory-role classifier: what part a message plays (decision, error, chit-chat, ...).

Cheap regular expressions over the text and its entities. It only nudges scores, so a wrong guess
costs little; the LLM curator may refine it later behind the same function signature.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.curation.items import MemoryRole
from engine.entities.mentions import EntityKind, Mention

_PATTERNS: tuple[tuple[MemoryRole, re.Pattern[str]], ...] = (
    (
        MemoryRole.RESOLUTION,
        re.compile(r"\b(fixed|solved|resolved|works now|working now|that did it|that worked)\b", re.I),
    ),
    (
        # Before errors: "I tried X and it still fails" tells of an attempt, not a new error.
        MemoryRole.ATTEMPT,
        re.compile(
            r"\b(i tried|i've tried|we tried|tried (?:to|running|setting|adding|removing|changing|using)"
            r"|let me try|let'?s try|(?:maybe|you could|could you|please) try|try (?:running|setting|adding"
            r"|removing|changing|using|to)|attempted|as a workaround|workaround"
            r"|still (?:fails|failing|broken|crashes|doesn'?t work|does not work)"
            r"|(?:didn'?t|did not|doesn'?t|does not) (?:help|fix it|work either))\b",
            re.I,
        ),
    ),
    (
        MemoryRole.ERROR,
        re.compile(r"\b(error|exception|traceback|crash(?:es|ed)?|fails?|failed|failing|bug|broken)\b", re.I),
    ),
    (
        MemoryRole.CAUSE,
        re.compile(r"\b(because|caused by|the cause|the reason|due to|turned out|root cause)\b", re.I),
    ),
    (
        MemoryRole.DECISION,
        re.compile(
            r"\b(let'?s|we'?ll|we will|i'?ll|i will|decided|decision|going to|plan is|we should|agreed)\b",
            re.I,
        ),
    ),
    (
        MemoryRole.PREFERENCE,
        re.compile(
            r"\b(i (?:really )?(?:prefer|like|love|hate|enjoy|want|need)|i don'?t (?:like|want)|my favou?rite"
            r"|always|never)\b",
            re.I,
        ),
    ),
)
_NOISE = re.compile(
    r"^\W*(hi|hey|hello|thanks?|thank you|thx|ok(?:ay)?|sure|cool|great|nice|wow|yes|no|yep|nope|bye"
    r"|good (?:morning|night|luck)|sounds good|got it)\b",
    re.I,
)
_FACT_KINDS = frozenset({EntityKind.QUANTITY, EntityKind.DATE, EntityKind.NAME, EntityKind.TITLE})


def classify(text: str, mentions: Sequence[Mention]) -> MemoryRole:
    """The memory role of a message: the first matching pattern, then facts, noise, or context."""
    sample = text[:4000]  # the opening carries the role; a 10 MB paste must not cost more
    for role, pattern in _PATTERNS:
        if pattern.search(sample):
            return role
    if any(m.kind is EntityKind.ERROR for m in mentions):
        return MemoryRole.ERROR
    if any(m.kind in _FACT_KINDS for m in mentions):
        return MemoryRole.FACT
    if len(sample.split()) <= 8 and _NOISE.match(sample):
        return MemoryRole.NOISE
    return MemoryRole.CONTEXT


ROLE_WEIGHT: dict[MemoryRole, float] = {
    MemoryRole.DECISION: 1.0,
    MemoryRole.ERROR: 1.0,
    MemoryRole.CAUSE: 1.0,
    MemoryRole.ATTEMPT: 0.8,
    MemoryRole.RESOLUTION: 1.0,
    MemoryRole.PREFERENCE: 0.9,
    MemoryRole.FACT: 0.7,
    MemoryRole.CONTEXT: 0.4,
    MemoryRole.NOISE: 0.0,
}
