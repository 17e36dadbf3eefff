"""The ledger dialog's rows in words, the curator's repeated fallback told once with its count, and
the forgetting statistics view (F7 in the ledger, or the command palette)."""

from __future__ import annotations

import re

from textual.widgets import DataTable, Static

from engine.curation.forgetting_stats import forgetting_stats
from engine.curation.ledger import EntryKind, LedgerEntry
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import chat, fake_provider, make_app, run_from_palette, wait_for
from tests.fake_openai import FakeOpenAIServer
from tests.test_forgetting_stats import SESSION
from tests.test_ledger_screen import detail, ledger_open, table
from tui.app import HeedfulApp
from tui.screens.forgetting_stats import StatsScreen
from tui.screens.ledger import LedgerScreen

FALLBACK = (
    "no advice (structured output failed (the answer was not JSON); JSON mode failed); "
    "the heuristic decided alone"
)


def cells(rows: DataTable[str], index: int) -> list[str]:
    return [str(cell) for cell in rows.get_row_at(index)]


def note(app: HeedfulApp) -> str:
    """The context panel's notes under its list, as drawn."""
    return str(chat(app).query_one("#context-note", Static).render())


def stats_text(app: HeedfulApp) -> str:
    return str(app.screen.query_one("#stats-lines", Static).render())


async def test_each_ledger_row_says_what_happened_in_words() -> None:
    transform = LedgerEntry(
        EntryKind.OPERATION,
        7,
        "14",
        "transform",
        "older than the recent turns, low relevance",
        before="active",
        after="summarized",
    )
    entity = LedgerEntry(
        EntryKind.ENTITY,
        8,
        "symbol:load_invoices",
        "pruned",
        "not mentioned since turn 2",
        before="active",
        after="pruned",
    )
    left_out = LedgerEntry(EntryKind.OVERFLOW, 9, "3", "left out of this request", "did not fit the budget")
    recall = LedgerEntry(EntryKind.OPERATION, 10, "14", "recall", "referred to again")
    async with ledger_open([transform, entity, left_out, recall]) as (app, _, _):
        rows = table(app)
        assert [cells(rows, i) for i in range(rows.row_count)] == [
            ["10", "#14", "recalled for a turn", "—", "referred to again"],
            ["9", "#3", "left out this once", "—", "did not fit the budget"],
            ["8", "symbol:load_invoices", "entity dropped", "active → pruned", "not mentioned since turn 2"],
            ["7", "#14", "summarized", "active → summarized", "older than the recent turns, low relevance"],
        ]


async def test_a_curator_fallback_repeated_every_turn_is_one_row_with_its_count() -> None:
    entries: list[LedgerEntry] = []
    for turn in range(3, 9):  # no advice on turns 3 to 8, each turn pruning something too
        entries.append(LedgerEntry(EntryKind.CURATOR, turn, "curator", "fallback", FALLBACK))
        entries.append(
            LedgerEntry(
                EntryKind.OPERATION, turn, str(turn), "prune", "scores low", before="active", after="pruned"
            )
        )
    entries.append(LedgerEntry(EntryKind.CURATOR, 9, "curator", "structured", "kept #4 for the deploy"))
    entries.append(LedgerEntry(EntryKind.CURATOR, 10, "curator", "fallback", FALLBACK))
    async with ledger_open(entries) as (app, pilot, _):
        rows = table(app)
        curator = [cells(rows, i) for i in range(rows.row_count) if cells(rows, i)[1] == "curator"]
        assert curator == [
            ["10", "curator", "no advice", "—", FALLBACK],
            ["9", "curator", "advice", "—", "kept #4 for the deploy"],
            ["8", "curator", "no advice", "×6 since turn 3", FALLBACK],
        ]
        assert rows.row_count == 6 + 3  # the prunes stay, one row each
        await pilot.press("down", "down", "down")  # past turn 8's prune, logged after its note
        await wait_for(pilot, lambda: detail(app).startswith("turn 8 · curator"))
        assert detail(app) == f"turn 8 · curator · no advice · ×6 since turn 3\n{FALLBACK}"


async def test_f7_in_the_ledger_shows_the_statistics_and_esc_goes_back_to_the_ledger() -> None:
    async with ledger_open(SESSION) as (app, pilot, restored):
        await pilot.press("f7")
        await wait_for(pilot, lambda: isinstance(app.screen, StatsScreen))
        shown = stats_text(app)
        assert shown == "\n".join(forgetting_stats(SESSION).lines())
        assert "messages pruned            2" in shown
        assert "pruned, then recalled      1  forgetting was wrong: 50% of pruned" in shown
        await pilot.press("r")  # a plain letter changes nothing here
        assert isinstance(app.screen, StatsScreen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerScreen))
        assert restored == []


async def test_the_command_palette_opens_the_statistics_of_the_open_session() -> None:
    store = open_store(paths.database_path()).store
    try:
        session = store.create_session("forgetful")
        store.add_message(session.id, "user", "hello")
        store.save_curation(session.id, items=[], entities=[], ledger=SESSION, saved_tokens=2_900)
    finally:
        store.close()
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: chat(app).context is not None)
        await run_from_palette(pilot, app, "Forgetting statistics")
        await wait_for(pilot, lambda: isinstance(app.screen, StatsScreen))
        shown = stats_text(app)
        assert "tokens saved           2,900" in shown
        assert "messages recalled          3" in shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, StatsScreen))
        chat(app)


async def test_a_reason_that_looks_like_markup_is_shown_as_written() -> None:
    # A curator note quotes the model: "[/b]" read as markup stopped the app when the row was drawn.
    said = "kept [bold]#4[/bold] and dropped [/b] the rest"
    note = LedgerEntry(EntryKind.CURATOR, 4, "curator", "structured", said)
    async with ledger_open([note]) as (app, pilot, _):
        await wait_for(pilot, lambda: detail(app) == f"turn 4 · curator · advice · —\n{said}")
        assert app.is_running
        drawn = app.export_screenshot()
        assert "[bold]#4[/bold]" in drawn.replace("&#160;", " ")


async def test_the_panel_tells_a_curator_failing_every_turn_once_with_its_count(
    fake_server: FakeOpenAIServer,
) -> None:
    from tests.apphelpers import say
    from tests.test_curation_models import is_curator

    fake_server.reply = lambda body: "{not json" if is_curator(body) else "Noted. " * 40
    fake_provider(fake_server, 700, max_retries=None, tables="[memory]\nenabled = false\n")
    app = make_app(curation_models=True)
    async with app.run_test(size=(120, 40)) as pilot:

        def asked() -> int:
            return len([r for r in fake_server.requests if is_curator(r["body"])])

        for number in range(12):
            await say(pilot, app, f"Question {number}: where does deploy.sh write its logs?", keep=True)
            if asked() >= 3:
                break
        assert asked() >= 3, "the budget is tight enough that the curator is asked"
        await wait_for(pilot, lambda: "in a row" in note(app))
        shown = note(app)
        assert shown.count("the heuristic decided alone") == 1
        assert re.search(r"the heuristic decided alone \(×[23] in a row\)\.", shown), shown
