"""Notifications as the user sees them: at the screen's edge, and the same words shown once while
they show (every one plain and redacted: tests/test_hostile_imports.py, tests/test_secrets.py)."""

from __future__ import annotations

from tests.apphelpers import make_app, toasts, wait_for


async def test_a_toast_reaches_the_screen_s_edge_leaving_nothing_of_the_panel_beside_it() -> None:
    # Textual's toast rack keeps a scrollbar's gutter: the panel's last column showed beside each
    # toast, a stray letter at its right edge.
    app = make_app()
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        app.notify("Heedful has nothing to ask about your messages right now.")
        await wait_for(pilot, lambda: app.screen.query("Toast"))
        (toast,) = app.screen.query("Toast")
        assert toast.region.right == app.size.width


async def test_the_same_words_twice_make_one_toast_while_it_shows() -> None:
    # A connection that drops on each retry said the same thing in a stack of toasts.
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        dropped = "The connection to the server dropped in the middle of the reply."
        app.notify(dropped, severity="error")
        app.notify(dropped, severity="error")
        app.notify("Recorded your answer (1 keep).")
        await wait_for(pilot, lambda: len(toasts(app)) == 2)
        assert sorted(toasts(app)) == sorted([dropped, "Recorded your answer (1 keep)."])
        # Once it has gone, the same words make a toast again.
        app.notify("Gone soon.", timeout=0.2)
        await wait_for(pilot, lambda: "Gone soon." in toasts(app))
        await wait_for(pilot, lambda: "Gone soon." not in toasts(app))
        app.notify("Gone soon.", timeout=0.2)
        await wait_for(pilot, lambda: "Gone soon." in toasts(app))
