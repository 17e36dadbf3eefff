"""Where Heedful keeps its files: one helper per location, all resolved on demand.

Nothing here touches the disk at import time; callers create directories with
:func:`ensure_private_dir` when they are about to write.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "heedful"
DATABASE_NAME = "heedful.db"


def _env_path(name: str) -> Path | None:
    # An empty variable means "unset", as the XDG spec asks; "~" is expanded because shells don't
    # expand it inside quotes and users write HEEDFUL_DATA_DIR="~/x".
    value = os.environ.get(name, "")
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    """The directory that holds the database.

    Returns:
        ``$HEEDFUL_DATA_DIR`` if set, else ``$XDG_DATA_HOME/heedful``, else
        ``~/.local/share/heedful``.
    """
    override = _env_path("HEEDFUL_DATA_DIR")
    if override is not None:
        return override
    xdg = _env_path("XDG_DATA_HOME")
    base = xdg if xdg is not None else Path.home() / ".local" / "share"
    return base / APP_NAME


def config_path() -> Path:
    """The config file.

    Returns:
        ``$HEEDFUL_CONFIG`` (a file path) if set, else ``$XDG_CONFIG_HOME/heedful/config.toml``,
        else ``~/.config/heedful/config.toml``.
    """
    override = _env_path("HEEDFUL_CONFIG")
    if override is not None:
        return override
    xdg = _env_path("XDG_CONFIG_HOME")
    base = xdg if xdg is not None else Path.home() / ".config"
    return base / APP_NAME / "config.toml"


def database_path() -> Path:
    """The SQLite database: ``data_dir() / "heedful.db"``."""
    return data_dir() / DATABASE_NAME


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and its missing parents) if missing, readable by the current user only.

    A directory that already exists keeps its mode: it may be shared on purpose (``~/.config``).
    Every directory created here, parents included (as the XDG spec asks), is set to 0700 whatever
    the umask.

    Args:
        path: The directory to create.

    Returns:
        ``path``, for chaining.

    Raises:
        OSError: The directory could not be created (permissions, a file in the way, disk full).
    """
    missing: list[Path] = []
    current = path
    while not current.is_dir() and current.parent != current:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue  # another process made it just now: it is theirs to set
        # mkdir's mode is filtered through the umask; chmod is not.
        directory.chmod(0o700)
    return path


def exposure(directory: Path) -> str | None:
    """Why others could read or change what Heedful keeps in ``directory`` (symlinks resolved), or
    None: writable by its group or by anyone, or owned by another user. None if it does not exist yet
    (:func:`ensure_private_dir` will make it private)."""
    try:
        resolved = directory.resolve()
        info = resolved.stat()
    except (OSError, RuntimeError):  # missing, unreadable, or a symlink loop
        return None
    shown = repr(str(resolved))  # quoted, with any control or invisible character escaped
    if info.st_mode & 0o022:
        who = "anyone" if info.st_mode & 0o002 else "its group"
        return f"{shown} can be written by {who} (mode {info.st_mode & 0o777:o})"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return f"{shown} is owned by another user (uid {info.st_uid})"
    return None


def directory_warnings() -> list[str]:
    """One warning for each of the data and config directories that others could write to or own:
    they could read the conversations and the config, or change them under Heedful."""
    warnings: list[str] = []
    seen: set[str] = set()  # the data directory may be the config's too
    for what, directory in (("data", data_dir()), ("config", config_path().parent)):
        reason = exposure(directory)
        if reason is not None and reason not in seen:
            seen.add(reason)
            warnings.append(
                f"The {what} directory {reason}: others could read or change what Heedful keeps there. "
                f"Make it yours alone (chmod 700)."
            )
    return warnings
