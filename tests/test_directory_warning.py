"""A data or config directory others can write to (or that another user owns) is named, once, when
Heedful starts: in the app as a toast, on stderr for a shell command."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli.main import main
from sessions import paths
from tests.apphelpers import make_app, toasts, wait_for


@pytest.fixture
def shared_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HEEDFUL_DATA_DIR a symlink to a directory anyone can write to (the symlink's own mode is 777
    whatever it points to: only the directory it leads to tells)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    link = tmp_path / "data-link"
    link.symlink_to(shared)
    monkeypatch.setenv("HEEDFUL_DATA_DIR", str(link))
    return shared


def test_a_private_directory_gets_no_warning(tmp_path: Path) -> None:
    paths.ensure_private_dir(paths.data_dir())
    paths.ensure_private_dir(paths.config_path().parent)
    assert paths.directory_warnings() == []


def test_a_world_writable_data_dir_behind_a_symlink_is_named(shared_data_dir: Path) -> None:
    [warning] = paths.directory_warnings()
    assert "data directory" in warning and repr(str(shared_data_dir)) in warning and "anyone" in warning


def test_a_group_writable_config_dir_is_named(tmp_path: Path) -> None:
    config_dir = paths.ensure_private_dir(paths.config_path().parent)
    config_dir.chmod(0o770)
    [warning] = paths.directory_warnings()
    assert "config directory" in warning and "its group" in warning


@pytest.mark.skipif(getattr(os, "geteuid", lambda: 1)() != 0, reason="needs root to give a directory away")
def test_a_data_dir_owned_by_another_user_is_named(tmp_path: Path) -> None:
    data = paths.ensure_private_dir(paths.data_dir())
    os.chown(data, 65534, 65534)
    [warning] = paths.directory_warnings()
    assert "owned by another user" in warning


def test_a_shell_command_warns_once_on_stderr(
    shared_data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sessions", "list"]) == 0
    err = capsys.readouterr().err
    assert err.count(str(shared_data_dir)) == 1 and "heedful: warning: The data directory" in err


async def test_the_app_warns_once_with_a_toast(shared_data_dir: Path) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30), notifications=True) as pilot:

        def warned() -> list[str]:
            return [t for t in toasts(app) if "The data directory" in t]

        await wait_for(pilot, warned)
        [warning] = warned()
        assert str(shared_data_dir) in "".join(warning.split())
