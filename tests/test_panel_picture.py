"""The context panel at a glance, driven with Pilot: one budget and one percentage in the header,
the panel and F5; the user's messages not sent first, with their reason; words that mean one
thing; the why dialog's one story; and layouts that keep the list and F1 at every size."""

from __future__ import annotations

import pytest
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from engine.curation.session_curation import SessionCuration
from engine.text.tokens import CharEstimateCounter
from tests.apphelpers import chat, fake_provider, make_app, say, wait_for, write_config
from tests.fake_openai import FakeOpenAIServer
from tests.panel_session import seed_panel_session
from tui.app import HeedfulApp
from tui.filtering import counted
from tui.messages import ContextAction, ItemVerb
from tui.widgets.context_panel import compact

QUIET = "[memory]\nenabled = false\n"


def text_of(app: HeedfulApp, selector: str) -> str:
    """What a widget says, less the "~" of approximate counts (the fake model has no tokenizer)."""
    return str(app.screen.query_one(selector, Static).render()).replace("~", "")


async def settled_panel(pilot: Pilot[None], app: HeedfulApp) -> None:
    await wait_for(
        pilot, lambda: chat(app).context is not None and chat(app).context_panel.rows.option_count > 0
    )
    await pilot.pause()


def panel_app() -> tuple[HeedfulApp, dict[str, int]]:
    """The app, offline and with no memory, on the seeded panel session; the seeded messages' ids."""
    write_config(QUIET)
    ids = seed_panel_session()
    return make_app(), ids


async def test_header_panel_and_preview_say_the_same_budget_and_percentage(
    fake_server: FakeOpenAIServer,
) -> None:
    fake_provider(fake_server, 2500, tables=QUIET)
    fake_server.reply = "Noted, the deploy step is fine as it is. " * 12
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        for n in range(5):
            await say(pilot, app, f"Turn {n}: the billing deploy fails again at step {n}.", keep=True)
        view = chat(app).context
        assert view is not None and view.budget == 1_750  # budget = 0.7 x the 2,500 window
        percent = f"{view.tokens / view.budget:.0%}"
        header = text_of(app, "#header-gauge")
        assert header == f"context {compact(view.tokens)} of {compact(view.budget)} ({percent})"
        assert f"{view.tokens:,} of 1,750 budget" in text_of(app, "#context-total")
        assert text_of(app, "#context-bar").endswith(f" {percent}")
        assert "budget = 70% of the 2,500-token window" in text_of(app, "#context-budget")
        await pilot.press("f5")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "PreviewScreen")
        said = " ".join(str(s.render()) for s in app.screen.query(Static)).replace("~", "")
        assert f"{view.tokens:,} of 1,750 budget · {percent}" in said
        # /tokens marks the estimate as everything else does: "≈" means a summary, never this.
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is chat(app))
        chat(app).composer.insert("/tokens")
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TokensScreen")
        said = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert f"~{view.tokens:,} tokens of a 1,750 budget" in said and "≈" not in said


async def test_at_80x24_the_list_keeps_eight_rows_and_your_message_not_sent_comes_first() -> None:
    app, ids = panel_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settled_panel(pilot, app)
        await pilot.press("f2")  # at 80 columns the panel is shown on demand
        await wait_for(
            pilot, lambda: chat(app).context_panel.display and chat(app).context_panel.size.height > 0
        )
        await pilot.pause()
        panel = chat(app).context_panel
        assert panel.has_class("-short")
        assert panel.rows.size.height >= 8, panel.rows.size
        first = [str(panel.rows.get_option_at_index(n).prompt) for n in range(3)]
        assert first[0] == "Your messages not sent (1 message)"
        assert f"you #{ids['document']}" in first[1] and "does not fit" in first[1]


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (200, 50)])
async def test_the_footer_keeps_f1_and_the_legend_fits_at_every_size(size: tuple[int, int]) -> None:
    app, _ = panel_app()
    async with app.run_test(size=size) as pilot:
        await settled_panel(pilot, app)
        (help_key,) = [k for k in app.screen.query(FooterKey) if k.key == "f1"]
        assert help_key.region.right <= size[0] and help_key.region.width > 0
        panel = chat(app).context_panel
        if not panel.display:
            await pilot.press("f2")
            await wait_for(pilot, lambda: panel.size.width > 0)
            await pilot.pause()
        legend = panel.query_one("#context-legend", Static)
        lines = str(legend.render()).splitlines()
        assert len(lines) == legend.size.height  # one line each: nothing wrapped, nothing cut
        assert all(Content(line).cell_length <= legend.size.width for line in lines)
        assert "room left" in lines[-1]


async def test_the_panel_does_not_call_leaving_out_your_document_a_saving() -> None:
    app, _ = panel_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await settled_panel(pilot, app)
        saved = text_of(app, "#context-saved")
        assert saved.startswith("next request leaves out ") and "of it yours" in saved, saved
        assert "saved" not in saved.splitlines()[0]


async def test_the_why_dialog_tells_one_story() -> None:
    app, ids = panel_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settled_panel(pilot, app)
        screen = chat(app)
        for name in ("document", "a5"):
            screen.context_panel.post_message(ContextAction(ItemVerb.INSPECT, ids[name]))
            await wait_for(
                pilot, lambda: type(app.screen).__name__ == "InspectScreen" and app.screen.is_mounted
            )  # composed
            facts = text_of(app, "#inspect-facts")
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)
            assert "(pruned)" not in facts and "always sent" not in facts, facts
            if name == "document":  # the user's own document: not sent, scored like any older message
                assert "state active (whole, not summarized)" in facts
                assert "In the next request: not sent: your message does not fit" in facts
                assert "Score: relevance" in facts
                assert "Ranked by 0." in facts  # how it competes for the room
            else:  # the last reply: one of the recent turns, sent in full without a score
                assert "In the next request: sent in full: in the last 2 turns" in facts
                assert "Score: none: one of the last 2 turns" in facts


def test_a_count_of_one_says_one_message() -> None:
    assert counted(1, "later message") == "1 later message"
    assert counted(2, "later message") == "2 later messages"


def test_the_over_budget_note_counts_against_the_same_budget_as_the_panel() -> None:
    curation = SessionCuration(window=1_000, counter=CharEstimateCounter())
    text = "A pinned checklist line about the deploy. " * 80
    curation.add_message(1, "user", text, len(text) // 4)
    curation.pin(1)
    curation.add_message(2, "user", "And now?", 3)
    result = curation.plan(curation.by_id[2])
    (note,) = [n for n in result.notes if "over the budget" in n]
    assert f"over the budget of {curation.budget.tokens:,}:" in note  # 700, as the panel says
    assert f"take {result.tokens:,} tokens" in note  # the request's own count
