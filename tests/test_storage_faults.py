"""Bad storage as the user meets it: a damaged database, a full disk, a database that cannot be written.

A full disk is a file-size limit (``RLIMIT_FSIZE``) in a child Python started by :func:`run_child`,
which runs one scenario from :data:`SCENARIOS` and prints its findings as JSON; the checks stay here,
in the parent, which reads the database afterwards with a connection of its own.

A database that cannot be written: for an ordinary user, file and directory modes without write
permission. Root writes whatever the modes say (CI runs as root), so there the files stay root's and
are opened under :func:`as_nobody`: the process's effective user becomes ``nobody`` for the
duration, and the kernel checks permissions as it would for an ordinary user.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import pytest

from engine.chat import MessageStatus
from engine.errors import StoreError
from sessions import paths
from sessions.store import SqliteChatStore, open_store

REPO = Path(__file__).resolve().parents[1]
NOBODY = 65534


def _overrides_file_modes() -> bool:
    """Whether this process writes whatever file modes say: root, unless it has given up
    CAP_DAC_OVERRIDE (capability 1 of the effective set)."""
    if os.geteuid() != 0:
        return False
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return True
    effective = [int(line.split()[1], 16) for line in status.splitlines() if line.startswith("CapEff:")]
    return not effective or bool(effective[0] & 1 << 1)


ROOT = _overrides_file_modes()
"""Root's writes are not stopped by modes: its files are opened as ``nobody`` (:func:`as_nobody`)."""


# --- tools ---------------------------------------------------------------------------------------


def run_child(scenario: str, *args: str) -> dict[str, Any]:
    """Run ``SCENARIOS[scenario](*args)`` in a fresh interpreter; its JSON result."""
    code = "import sys; from tests.test_storage_faults import child_main; child_main(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", code, scenario, *args],
        cwd=REPO,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, f"child {scenario} failed:\n{done.stdout}\n{done.stderr}"
    # Whatever went wrong in there, nothing may have reached the terminal as a traceback.
    assert "Traceback" not in done.stderr, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def child_main(argv: list[str]) -> None:
    scenario, *args = argv
    print(json.dumps(SCENARIOS[scenario](*args)))


def limit_file_size(limit: int) -> None:
    """No file may grow past ``limit`` bytes: writes past it fail (EFBIG), as on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the kernel kills the process instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))


def lift_file_size_limit() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


@contextmanager
def as_nobody() -> Iterator[None]:
    """Check file permissions as the user ``nobody`` (no groups) until the block ends."""
    groups = os.getgroups()
    os.setgroups([])
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)


def as_ordinary_user() -> AbstractContextManager[None]:
    """Permissions checked as for an ordinary user: root's own are by :func:`as_nobody`."""
    return as_nobody() if ROOT else nullcontext()


def deny_writes(*paths: Path) -> None:
    """Make ``paths`` (files or directories) unwritable for :func:`as_ordinary_user`: as root they
    stay root's (modes 644 and 755); otherwise their write permission goes."""
    if not ROOT:
        for path in paths:
            path.chmod(path.stat().st_mode & ~0o222)


def allow_writes(path: Path) -> None:
    """Make ``path`` writable for :func:`as_ordinary_user`: given to ``nobody`` as root."""
    if ROOT:
        os.chown(path, NOBODY, NOBODY)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory ``nobody`` can reach (pytest's own tmp_path is private to root)."""
    made = Path(tempfile.mkdtemp(prefix="heedful-faults-"))
    made.chmod(0o755)
    yield made
    writable_again(made)
    shutil.rmtree(made)


def writable_again(directory: Path) -> None:
    """Undo :func:`deny_writes` under ``directory`` (a reader of a WAL database writes beside it)."""
    directory.chmod(0o755)
    for parent, dirs, files in os.walk(directory):
        for name in dirs:
            Path(parent, name).chmod(0o755)
        for name in files:
            Path(parent, name).chmod(0o644)


def read_messages(database: Path) -> dict[int, str]:
    """Every message in ``database`` (log included), read with a connection of our own."""
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return dict(conn.execute("SELECT id, content FROM messages ORDER BY id").fetchall())
    finally:
        conn.close()


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


# --- scenarios run in the child --------------------------------------------------------------------


def fill_the_disk(database: str) -> dict[str, Any]:
    """Write messages until the file-size limit refuses one; then more; then with the limit gone."""
    path = Path(database)
    store = SqliteChatStore(path)
    session = store.create_session("full disk")
    store.close()
    store = SqliteChatStore(path)
    limit_file_size(path.stat().st_size + 16 * 1024)  # just above the database's size
    acknowledged: dict[int, str] = {}
    failed: dict[str, Any] = {}
    text = ""
    for n in range(1000):
        text = f"<message {n}>" + f" word{n}" * 400 + f"</message {n}>"
        try:
            acknowledged[store.add_message(session.id, "user", text).id] = text
        except StoreError as err:
            failed = {"n": n, "error": err.user_message, "cause": type(err.__cause__).__name__}
            break
    later: list[str] = []
    # The same message again while still full, and a pasted file bigger than SQLite's page cache
    # (so the write fails in the middle of the statement, not at COMMIT).
    for again in (text, "<big>" + "z" * 3_000_000):
        try:
            store.add_message(session.id, "user", again)
            later.append("saved")
        except StoreError as err:
            later.append(err.user_message)
    lift_file_size_limit()
    recovered = store.add_message(session.id, "user", "the disk has room again")
    store.close()
    return {"acknowledged": acknowledged, "failed": failed, "later": later, "recovered": recovered.id}


def send_on_a_full_disk() -> dict[str, Any]:
    """The app: a message sent while the disk is full, then again once there is room."""
    from tests.apphelpers import chat, make_app, toasts, views, wait_for

    async def scenario() -> dict[str, Any]:
        app = make_app()
        found: dict[str, Any] = {}
        async with app.run_test(notifications=True) as pilot:
            await wait_for(pilot, lambda: chat(app).settled and chat(app).context is not None)
            # Nothing of the start-up (the theme, say) may still be on its way to the disk.
            await wait_for(pilot, lambda: all(w.is_finished for w in app.workers if w.group == "state"))
            database = paths.database_path()
            # The write-ahead log grows by 4 KiB pages: no room for the next one.
            limit_file_size(max(p.stat().st_size for p in database.parent.glob("heedful.db*")) + 512)
            composer = chat(app).composer
            composer.focus()
            composer.insert("is this saved")
            await pilot.press("enter")
            await wait_for(pilot, lambda: any("Could not save" in t for t in toasts(app)))
            await wait_for(pilot, lambda: chat(app).settled)
            found["toasts"] = toasts(app)
            found["composer"] = composer.text
            found["views"] = len(views(app))
            lift_file_size_limit()
            await pilot.press("enter")  # the text is still in the composer: send it again
            await wait_for(pilot, lambda: len(views(app)) == 2 and chat(app).settled)
            found["reply"] = views(app)[-1].message.content
            found["running"] = app.is_running
        return found

    return asyncio.run(scenario())


SCENARIOS: dict[str, Callable[..., dict[str, Any]]] = {
    "fill_the_disk": fill_the_disk,
    "send_on_a_full_disk": send_on_a_full_disk,
}


# --- a full disk -------------------------------------------------------------------------------


def test_a_full_disk_is_a_clear_error_nothing_is_half_written_and_the_store_recovers(
    tmp_path: Path,
) -> None:
    database = tmp_path / "data" / "heedful.db"
    found = run_child("fill_the_disk", str(database))

    failed = found["failed"]
    assert failed, "the file-size limit never stopped a write"
    assert failed["n"] >= 1, "the limit should leave room for a few messages first"
    assert failed["cause"] == "OperationalError"  # it came from SQLite, and left as a StoreError
    for said in (failed["error"], *found["later"]):
        assert "disk is full" in said and str(database) in said and "was not saved" in said

    stored = read_messages(database)  # integrity_check is ok
    acknowledged = {int(k): v for k, v in found["acknowledged"].items()}
    # Every acknowledged message is there, whole; the refused ones are not there at all, not even
    # a piece; the write after the disk had room again is there.
    assert {k: stored[k] for k in acknowledged} == acknowledged
    assert set(stored) == {*acknowledged, found["recovered"]}
    assert stored[found["recovered"]] == "the disk has room again"
    assert not any(f"<message {failed['n']}>" in text or "<big>" in text for text in stored.values())


def test_the_app_says_the_disk_is_full_keeps_the_text_and_sends_it_once_there_is_room() -> None:
    from tests.apphelpers import stored_messages

    found = run_child("send_on_a_full_disk")

    (toast,) = [t for t in found["toasts"] if "Could not save" in t]
    assert "disk is full" in toast and str(paths.database_path()) in toast
    assert "OperationalError" not in toast and "Something went wrong" not in toast
    assert found["composer"] == "is this saved"  # not lost: the user can send it again
    assert found["views"] == 0  # no message shown as sent when it was not saved
    assert "Offline model" in found["reply"] and "> is this saved" in found["reply"]
    assert found["running"]
    stored = stored_messages()
    assert [(m.role, m.status) for m in stored] == [
        ("user", MessageStatus.COMPLETE),
        ("assistant", MessageStatus.COMPLETE),
    ]
    assert stored[0].content == "is this saved"


# --- a database that cannot be written -----------------------------------------------------------


def _database_written_earlier(directory: Path) -> Path:
    database = directory / "data" / "heedful.db"
    store = SqliteChatStore(database)
    session = store.create_session("written earlier")
    store.add_message(session.id, "user", "an old message")
    store.close()
    database.chmod(0o644)
    database.parent.chmod(0o755)
    return database


def _open_and_write(database: Path) -> str:
    """What the user is told: on open, or on the first write."""
    try:
        opened = open_store(database)
    except StoreError as err:
        return err.user_message
    try:
        opened.store.add_message(opened.store.list_sessions()[0].id, "user", "a new message")
    except StoreError as err:
        return err.user_message
    finally:
        opened.store.close()
    return "written"


@pytest.mark.parametrize("writable", ["nothing", "the directory only", "the file only"])
def test_a_database_that_cannot_be_written_is_refused_in_words_and_left_untouched(
    shared_dir: Path, writable: str
) -> None:
    database = _database_written_earlier(shared_dir)
    if writable == "the directory only":
        deny_writes(database)
        allow_writes(database.parent)
    elif writable == "the file only":
        deny_writes(database.parent)
        allow_writes(database)
    else:
        deny_writes(database, database.parent)
    before = snapshot(database.parent)

    with as_ordinary_user():
        said = _open_and_write(database)

    assert said != "written"
    assert str(database) in said and "read-only" in said
    after = snapshot(database.parent)
    assert after["heedful.db"] == before["heedful.db"]
    assert not [name for name in after if "corrupt" in name]  # not mistaken for damage
    writable_again(shared_dir)
    assert read_messages(database) == {1: "an old message"}


def test_a_data_directory_that_cannot_be_created_is_explained(shared_dir: Path) -> None:
    database = shared_dir / "data" / "heedful.db"
    deny_writes(shared_dir)
    with as_ordinary_user():
        said = _open_and_write(database)
    assert said.startswith(f"Could not open the database at {database}")
    assert f"Permission denied ({database.parent})" in said
    assert not database.parent.exists()


async def test_the_app_starts_on_a_read_only_database_and_says_nothing_will_be_saved(
    shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cli.chat import build_services
    from tests.apphelpers import send, toasts, views, wait_for
    from tui.app import HeedfulApp

    database = _database_written_earlier(shared_dir)
    before = snapshot(database.parent)
    monkeypatch.setenv("HEEDFUL_DATA_DIR", str(database.parent))
    monkeypatch.setenv("HEEDFUL_CONFIG", str(shared_dir / "config" / "config.toml"))
    deny_writes(database, database.parent, shared_dir)
    with as_ordinary_user():
        # Everything on disk is decided here; after this the app holds its store and never
        # opens the database again.
        services, theme = build_services(env={})
    app = HeedfulApp(services, theme=theme)
    async with app.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: any(str(database) in t for t in toasts(app)))
        (said,) = [t for t in toasts(app) if str(database) in t]
        assert "read-only" in said and "Nothing you write now will be saved" in said
        await send(pilot, "hello anyway")
        assert "Offline model" in views(app)[1].message.content
    app.services.store.close()
    assert snapshot(database.parent)["heedful.db"] == before["heedful.db"]
    writable_again(shared_dir)
    assert read_messages(database) == {1: "an old message"}
