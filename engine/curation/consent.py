"""Consent: the engine never summarizes or removes the user's own words without asking.

When it wants to, it raises one batched :class:`ConsentRequest` per turn. The user answers per item
(keep / summarize / remove), optionally for the whole session (:attr:`SessionCuration.policy`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ConsentChoice(enum.StrEnum):
    KEEP = "keep"
    SUMMARIZE = "summarize"
    REMOVE = "remove"
    ATTACH = "attach"  # kept aside whole, sent only when a later message refers to it


@dataclass(frozen=True, slots=True)
class ConsentItem:
    item_id: int
    preview: str
    tokens: int
    proposed: ConsentChoice
    # What the dialog offers for this item, in order. KEEP, when present, is the safe choice.
    choices: tuple[ConsentChoice, ...] = (
        ConsentChoice.KEEP,
        ConsentChoice.SUMMARIZE,
        ConsentChoice.REMOVE,
    )
    # True when the message cannot fit the request and is NOT being sent until answered
    # (then choices == (ATTACH, SUMMARIZE, REMOVE); there is no KEEP).
    left_out: bool = False


@dataclass(frozen=True, slots=True)
class ConsentRequest:
    """User items the engine would like to summarize or remove; they stay as they are until answered."""

    turn: int
    items: tuple[ConsentItem, ...]

    @property
    def tokens(self) -> int:
        return sum(i.tokens for i in self.items)
