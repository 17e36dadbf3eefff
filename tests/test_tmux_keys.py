"""Inside tmux with a long escape-time, the user is told once that Esc and a letter typed at once
arrive as Alt+letter (an action), and how to keep them apart."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.apphelpers import make_app, toasts, wait_for
from tui.app import HeedfulApp
from tui.tmux_keys import escape_notice, escape_time


@pytest.fixture
def fake_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tmux on PATH answering `show-options -sv escape-time` with the number in the file it
    returns (the app runs "inside" it: TMUX is set)."""
    value = tmp_path / "escape-time"
    value.write_text("500")
    tmux = tmp_path / "bin" / "tmux"
    tmux.parent.mkdir()
    calls = tmp_path / "calls"
    tmux.write_text(
        f'#!/bin/sh\n[ "$*" = "show-options -sv escape-time" ] || exit 1\necho >> "{calls}"\ncat "{value}"\n'
    )
    tmux.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmux.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TMUX", "/tmp/tmux-test/default,1,0")
    return value


def set_escape_time(fake_tmux: Path, value: str) -> None:
    fake_tmux.write_text(value)


def asked(fake_tmux: Path) -> int:
    """How many times the app asked tmux for its escape-time."""
    calls = fake_tmux.parent / "calls"
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def told(app: HeedfulApp) -> bool:
    return any("escape-time" in " ".join(t.split()) for t in toasts(app))


def test_the_notice_names_the_wait_and_the_setting_only_when_keys_can_be_joined() -> None:
    said = escape_notice(500)
    assert said is not None and "500 ms" in said and "set -sg escape-time 10" in said
    assert escape_notice(10) is None and escape_notice(0) is None and escape_notice(None) is None


def test_escape_time_is_read_from_the_tmux_heedful_runs_in(fake_tmux: Path) -> None:
    assert escape_time() == 500
    set_escape_time(fake_tmux, "garbage")
    assert escape_time() is None
    assert escape_time({k: v for k, v in os.environ.items() if k != "TMUX"}) is None  # not in tmux


async def test_the_user_is_told_once_for_each_escape_time(fake_tmux: Path) -> None:
    app = make_app()
    async with app.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: told(app))
    again = make_app()
    async with again.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: asked(fake_tmux) == 2)  # it looked again
        await wait_for(pilot, lambda: not any(w.is_running for w in again.workers))
        await pilot.pause()
        assert not told(again), "told again about the same escape-time"
    set_escape_time(fake_tmux, "300")
    changed = make_app()
    async with changed.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: told(changed))
