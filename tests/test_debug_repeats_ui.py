"""The same traceback pasted three times, with Pilot: the latest paste's row in the context panel
shows x3, and its why line and the inspect dialog name every paste (each restorable)."""

from __future__ import annotations

from textual.widgets import Static

from engine.curation.context_view import ContextView
from sessions import paths
from tests.apphelpers import chat, fake_provider, make_app, say, wait_for
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp
from tui.screens.inspect import InspectScreen


def trace(run: int) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/home/ana/shop/app/db.py", line {12 + run}, in connect\n'
        "    conn = pool.get(dsn)\n"
        f"ConnectionRefusedError: [Errno 111] Connection refused: 127.0.0.1:5432 (run {run})"
    )


FIXES = iter(
    [
        "Try `sudo service postgresql start` and run the shop again.",
        "Check that DATABASE_URL in .env uses host 127.0.0.1 and port 5432.",
        "Run `docker compose up -d db` to start the database container first.",
    ]
)


def context(app: HeedfulApp) -> ContextView:
    view = chat(app).context
    assert view is not None
    return view


async def test_the_latest_paste_s_row_shows_the_count_and_the_why_names_every_paste(
    fake_server: FakeOpenAIServer,
) -> None:
    fake_provider(fake_server, 4000)
    fake_server.reply = lambda _: next(FIXES, "Glad it works.")
    app = make_app()
    async with app.run_test(size=(130, 40)) as pilot:
        for run in range(3):
            await say(pilot, app, "still failing:\n" + trace(run), keep=True)
        await say(pilot, app, "That worked, thanks!", keep=True)
        pastes = [i.id for i in context(app).items if i.role == "user" and "Traceback" in i.preview]
        assert len(pastes) == 3
        panel = chat(app).context_panel
        await wait_for(pilot, lambda: "x3" in str(panel.rows.get_option(f"item-{pastes[-1]}").prompt))
        for earlier in pastes[:-1]:  # an earlier paste's row has no count (no longer "x2" either)
            assert " x" not in str(panel.rows.get_option(f"item-{earlier}").prompt)

        panel.rows.focus()
        panel.rows.highlighted = panel.rows.get_option_index(f"item-{pastes[-1]}")
        named = ", ".join(f"#{p}" for p in pastes)
        await wait_for(pilot, lambda: named in str(panel.query_one("#context-why", Static).render()))
        app.save_screenshot(str(paths.data_dir() / "repeats.svg"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectScreen) and app.screen.is_mounted)
        facts = str(app.screen.query_one("#inspect-facts", Static).render())
        assert f"Repeated error: the same error was pasted 3 times ({named})" in facts
