"""The ledger in words: every operation the engine logs reads as what happened to the message, never
as the engine's own name for it."""

from __future__ import annotations

import pytest

from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.ledger_words import happened
from engine.curation.operations import OpKind


def entry(action: str, before: str | None = "active", after: str | None = "pruned") -> LedgerEntry:
    return LedgerEntry(
        EntryKind.OPERATION, turn=3, target="14", action=action, reason="why", before=before, after=after
    )


@pytest.mark.parametrize("op", list(OpKind))
def test_every_operation_reads_in_words(op: OpKind) -> None:
    words = happened(entry(op.value))
    assert words and words != op.value


def test_a_summary_made_again_reads_as_rewritten_not_as_summarized() -> None:
    assert (
        happened(entry(OpKind.TRANSFORM.value, before="summarized", after="summarized"))
        == "summary rewritten"
    )
    assert happened(entry(OpKind.TRANSFORM.value, before="active", after="summarized")) == "summarized"


@pytest.mark.parametrize(
    ("action", "after", "words"),
    [
        ("edit", "superseded", "replaced by your edit"),
        ("delete", "superseded", "deleted"),
        ("import", "pruned", "imported pruned"),
    ],
)
def test_the_users_edits_and_imports_read_in_words(action: str, after: str, words: str) -> None:
    assert happened(entry(action, after=after)) == words
