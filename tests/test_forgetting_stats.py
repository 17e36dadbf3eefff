"""Forgetting statistics (SF-V2): tokens saved, messages summarized, pruned, recalled, and pruned
then recalled (forgetting was wrong), counted from the ledger; and ``heedful ledger --stats``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli.main import main
from engine.curation.forgetting_stats import ForgettingStats, forgetting_stats
from engine.curation.ledger import EntryKind, LedgerEntry
from sessions import paths
from sessions.store import open_store


def op(
    turn: int, target: int, action: str, before: str | None = None, after: str | None = None
) -> LedgerEntry:
    return LedgerEntry(EntryKind.OPERATION, turn, str(target), action, "why", before=before, after=after)


SESSION = [
    op(3, 2, "prune", "active", "pruned"),
    op(3, 4, "transform", "active", "summarized"),
    LedgerEntry(EntryKind.OVERFLOW, 3, "1", "left out of this request", "did not fit"),
    LedgerEntry(EntryKind.ENTITY, 3, "symbol:load_invoices", "pruned", "not mentioned since turn 1"),
    op(4, 4, "transform", "summarized", "summarized"),  # its summary rewritten: nothing new forgotten
    op(5, 2, "recall"),  # pruned, then needed: forgetting #2 was wrong
    op(6, 4, "recall"),  # summarized, not pruned
    op(6, 6, "prune", "active", "pruned"),
    op(7, 6, "restore", "pruned", "active"),
    op(8, 6, "recall"),  # recalled after it was restored: not counted as wrong
    op(9, 2, "recall"),  # #2 again: still one message
    LedgerEntry(
        EntryKind.CURATOR, 9, "curator", "fallback", "no advice (timeout); the heuristic decided alone"
    ),
]


def test_a_session_s_ledger_gives_each_count_once_per_message() -> None:
    stats = forgetting_stats(SESSION, 2_900)
    assert stats == ForgettingStats(
        tokens_saved=2_900, summarized=1, pruned=2, recalled=3, pruned_then_recalled=1, restored=1
    )
    assert stats.wrong_share == 0.5
    assert stats.lines()[4] == "pruned, then recalled      1  forgetting was wrong: 50% of pruned"


def test_an_empty_ledger_says_nothing_was_pruned() -> None:
    stats = forgetting_stats([])
    assert stats == ForgettingStats(0, 0, 0, 0, 0, 0) and stats.wrong_share is None
    assert "nothing was pruned" in stats.lines()[4]


STATES = st.sampled_from([None, "active", "summarized", "pruned"])
TARGETS = st.sampled_from(["1", "2", "3", "4", "session", "curator"])


@st.composite
def entries(draw: st.DrawFn) -> LedgerEntry:
    kind = draw(st.sampled_from(list(EntryKind)))
    action = draw(
        st.sampled_from(["prune", "transform", "recall", "restore", "pin", "import", "pruned", "fallback"])
    )
    return LedgerEntry(
        kind, draw(st.integers(0, 20)), draw(TARGETS), action, "why", before=draw(STATES), after=draw(STATES)
    )


LEDGERS = st.lists(entries(), max_size=40)


@given(LEDGERS, st.integers(-10, 10_000))
def test_the_counts_are_consistent(ledger: list[LedgerEntry], saved: int) -> None:
    stats = forgetting_stats(ledger, saved)
    assert stats.pruned_then_recalled <= min(stats.pruned, stats.recalled)
    messages = {e.target for e in ledger if e.kind is EntryKind.OPERATION and e.target.isdigit()}
    assert max(stats.summarized, stats.pruned, stats.recalled, stats.restored) <= len(messages)
    recalls = {e.target for e in ledger if e.kind is EntryKind.OPERATION and e.action == "recall"}
    assert stats.recalled == len(recalls & messages)
    assert stats.tokens_saved == max(0, saved)
    assert stats.wrong_share is None or 0 <= stats.wrong_share <= 1
    # Entity changes, consent answers, curator notes and one-off left-outs are not forgetting.
    operations = [e for e in ledger if e.kind is EntryKind.OPERATION]
    assert forgetting_stats(operations, saved) == stats


@given(LEDGERS)
def test_a_pruned_message_recalled_counts_as_wrong_and_a_restored_one_does_not(
    ledger: list[LedgerEntry],
) -> None:
    before = forgetting_stats(ledger)
    wrong = forgetting_stats([*ledger, op(30, 99, "prune", "active", "pruned"), op(31, 99, "recall")])
    assert (wrong.pruned, wrong.recalled, wrong.pruned_then_recalled) == (
        before.pruned + 1,
        before.recalled + 1,
        before.pruned_then_recalled + 1,
    )
    restored = forgetting_stats(
        [
            *ledger,
            op(30, 99, "prune", "active", "pruned"),
            op(31, 99, "restore", "pruned", "active"),
            op(32, 99, "recall"),
        ]
    )
    assert restored.pruned_then_recalled == before.pruned_then_recalled
    assert restored.restored == before.restored + 1


def _session_with(ledger: list[LedgerEntry], saved: int) -> int:
    store = open_store(paths.database_path()).store
    try:
        session = store.create_session("forgetful")
        store.save_curation(session.id, items=[], entities=[], ledger=ledger, saved_tokens=saved)
        return session.id
    finally:
        store.close()


def test_heedful_ledger_stats_prints_the_statistics_as_text_or_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    session = _session_with(SESSION, 2_900)

    assert main(["ledger", str(session), "--stats"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"Forgetting statistics of session {session}:",
        "tokens saved           2,900  against sending every message verbatim",
        "messages summarized        1",
        "messages pruned            2",
        "messages recalled          3  sent verbatim again for a turn",
        "pruned, then recalled      1  forgetting was wrong: 50% of pruned",
        "restored                   1  active again after being forgotten",
    ]

    assert main(["ledger", str(session), "--stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "session": session,
        "tokens_saved": 2_900,
        "summarized": 1,
        "pruned": 2,
        "recalled": 3,
        "pruned_then_recalled": 1,
        "restored": 1,
        "pruned_then_recalled_share": 0.5,
    }

    quiet = _session_with([], 0)
    assert main(["ledger", str(quiet), "--stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pruned_then_recalled_share"] is None
    assert main(["ledger", "999", "--stats"]) == 2
    assert "no session 999" in capsys.readouterr().err
