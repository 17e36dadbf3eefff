"""The footer at the widths people use: a key that does not fit is left out whole, never cut
mid-word under the palette key, and comes back when the terminal grows."""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from tests.apphelpers import chat, make_app, refreshed, wait_for
from tui.app import HeedfulApp
from tui.widgets.help_footer import HelpFooter


def footer_keys(app: HeedfulApp) -> tuple[list[FooterKey], FooterKey]:
    """The footer's keys in order, and its palette key (docked at the right)."""
    keys = list(chat(app).query_one(HelpFooter).query(FooterKey))
    (palette,) = [k for k in keys if k.has_class("-command-palette")]
    return [k for k in keys if k is not palette], palette


def assert_whole(app: HeedfulApp, width: int) -> list[str]:
    """Every key shown ends before the palette key, which ends within ``width``; the keys shown
    come first, in order. The keys shown."""
    keys, palette = footer_keys(app)
    assert palette.region.right <= width and palette.region.width > 0
    shown = [k for k in keys if k.display]
    assert shown == keys[: len(shown)], "a key is left out only with every key after it"
    for key in shown:
        assert key.region.width > 0 and key.region.right <= palette.region.x, (key.key, key.region)
    return [k.key for k in shown]


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_a_key_that_does_not_fit_is_left_out_whole_and_comes_back_with_room(
    size: tuple[int, int],
) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.services.ready and chat(app).settled)
        await refreshed(pilot)
        shown = assert_whole(app, size[0])
        assert shown[0] == "f1" and len(shown) < len(footer_keys(app)[0])  # some keys left out
        await pilot.resize_terminal(200, 50)
        await wait_for(pilot, lambda: all(k.display for k in footer_keys(app)[0]))
        await refreshed(pilot)
        assert len(assert_whole(app, 200)) == len(footer_keys(app)[0])
