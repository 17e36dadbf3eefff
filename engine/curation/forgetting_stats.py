"""Forgetting statistics of a session, from its ledger: how much forgetting saved, how many messages
it summarized, pruned or recalled, and how often a pruned message was needed again (forgetting was
wrong). One pure function, so the app's view and ``heedful ledger --stats`` say the same numbers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from engine.curation.items import ItemState
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.operations import OpKind


@dataclass(frozen=True, slots=True)
class ForgettingStats:
    """Counts of distinct messages, except ``tokens_saved``."""

    tokens_saved: int
    """Tokens the session's requests saved against sending every message verbatim."""
    summarized: int
    """Messages replaced by their summary at least once."""
    pruned: int
    """Messages left out of the requests until further notice at least once (by the curation, by
    you, or as imported)."""
    recalled: int
    """Messages brought back verbatim, for a turn, while summarized or pruned."""
    pruned_then_recalled: int
    """Messages recalled while pruned: forgetting them was wrong."""
    restored: int
    """Messages made active again (by you, or by your pin) after they were summarized or pruned."""

    @property
    def wrong_share(self) -> float | None:
        """Of the pruned messages, the share that was needed again (None: nothing was pruned)."""
        return self.pruned_then_recalled / self.pruned if self.pruned else None

    def as_json(self) -> dict[str, object]:
        return {
            "tokens_saved": self.tokens_saved,
            "summarized": self.summarized,
            "pruned": self.pruned,
            "recalled": self.recalled,
            "pruned_then_recalled": self.pruned_then_recalled,
            "restored": self.restored,
            "pruned_then_recalled_share": None if self.wrong_share is None else round(self.wrong_share, 4),
        }

    def lines(self) -> list[str]:
        """The statistics in words, one a line, as the app and the shell show them."""
        share = self.wrong_share
        wrong = "nothing was pruned" if share is None else f"forgetting was wrong: {share:.0%} of pruned"
        rows = [
            ("tokens saved", self.tokens_saved, "against sending every message verbatim"),
            ("messages summarized", self.summarized, ""),
            ("messages pruned", self.pruned, ""),
            ("messages recalled", self.recalled, "sent verbatim again for a turn"),
            ("pruned, then recalled", self.pruned_then_recalled, wrong),
            ("restored", self.restored, "active again after being forgotten"),
        ]
        return [f"{label:<21} {count:>6,}  {about}".rstrip() for label, count, about in rows]


def forgetting_stats(entries: Iterable[LedgerEntry], tokens_saved: int = 0) -> ForgettingStats:
    """The statistics of a session's ledger ``entries``, oldest first.

    A message's state follows the operations that change it (prune, transform, restore, import);
    a recall counts as pruned-then-recalled when the message was pruned at that point of the
    ledger. Entities, consent answers, curator notes and requests that only left a message out are
    not counted. ``tokens_saved`` is the session's stored total (the ledger holds no token counts).
    """
    state: dict[str, str] = {}
    summarized: set[str] = set()
    pruned: set[str] = set()
    recalled: set[str] = set()
    wrong: set[str] = set()
    restored: set[str] = set()
    for entry in entries:
        if entry.kind is not EntryKind.OPERATION or not entry.target.isdigit():
            continue
        target = entry.target
        if entry.action == OpKind.RECALL:
            recalled.add(target)
            if state.get(target) == ItemState.PRUNED:
                wrong.add(target)
            continue
        if entry.after is None or entry.after == entry.before:
            continue
        if entry.after == ItemState.PRUNED:
            pruned.add(target)
        elif entry.after == ItemState.SUMMARIZED:
            summarized.add(target)
        elif entry.action == OpKind.RESTORE and entry.before in (ItemState.PRUNED, ItemState.SUMMARIZED):
            restored.add(target)
        state[target] = entry.after
    return ForgettingStats(
        tokens_saved=max(0, tokens_saved),
        summarized=len(summarized),
        pruned=len(pruned),
        recalled=len(recalled),
        pruned_then_recalled=len(wrong),
        restored=len(restored),
    )
