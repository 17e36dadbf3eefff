"""Slash commands typed in the composer: what exists, how a line is read, what completes it.

Kept free of widgets so parsing and completion are plain functions. A line that starts with one
slash is a command; two slashes send the rest as an ordinary message ("//etc/hosts" sends
"/etc/hosts").
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    """Without the slash."""
    args: str
    """How its argument is written in help ("" when it takes none)."""
    help: str


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("pin", "[#N]", "pin a message (the last one if no number): always sent verbatim"),
    SlashCommand("unpin", "[#N]", "unpin a message"),
    SlashCommand("forget", "[#N]", "forget a message now (it stays in the store; /restore brings it back)"),
    SlashCommand("restore", "[#N]", "send a summarized, pruned or forgotten message verbatim again"),
    SlashCommand(
        "keep",
        "[TEXT]",
        "keep messages about TEXT verbatim while they fit (/keep the database schema); alone: list them",
    ),
    SlashCommand(
        "standing",
        "[TEXT]",
        "standing instructions, preferences and decisions: list, edit or remove them; with TEXT, add one",
    ),
    SlashCommand("compact", "", "summarize older turns now (your own messages only if you agree)"),
    SlashCommand("tokens", "", "what each part of the next request costs, in tokens"),
    SlashCommand(
        "attach", "FILE", "add a text file to the conversation (it expires once nobody refers to it)"
    ),
    SlashCommand("remember", "", "write what matters in this session to memory, for later sessions"),
    SlashCommand("memory", "", "list, edit, pin or delete what Heedful remembers across sessions"),
    SlashCommand(
        "system",
        "[TEXT | default]",
        "this session's system prompt: show it, set it, or go back to the config's",
    ),
    SlashCommand(
        "profile", "[quality | balanced | cost]", "this session's curation profile: show it or set it"
    ),
    SlashCommand(
        "model",
        "[NAME | default]",
        "this session's model: pick one from each provider's list, switch by name, or back to the default",
    ),
    SlashCommand("temperature", "[0-2 | default]", "this session's sampling temperature: show it or set it"),
    SlashCommand("new", "", "start a new session"),
    SlashCommand("help", "", "list the slash commands and keys"),
)
BY_NAME = {command.name: command for command in COMMANDS}


@dataclass(frozen=True, slots=True)
class Invocation:
    command: SlashCommand
    argument: str


@dataclass(frozen=True, slots=True)
class UnknownCommand:
    name: str


def read(text: str) -> Invocation | UnknownCommand | str:
    """What a submitted line asks for: a command, an unknown command, or a message to send.

    Returns:
        An :class:`Invocation`, an :class:`UnknownCommand` (never sent: a typo must not reach the
        model), or the text to send as a message.
    """
    stripped = text.strip()
    if not stripped.startswith("/"):
        return text
    if stripped.startswith("//"):
        return stripped[1:]
    name, _, argument = stripped[1:].partition(" ")
    command = BY_NAME.get(name.lower())
    if command is None:
        return UnknownCommand(name)
    return Invocation(command, argument.strip())


def completions(text: str) -> list[SlashCommand]:
    """The commands a composer line could be the start of (none once an argument is being typed)."""
    if not text.startswith("/") or text.startswith("//") or " " in text or "\n" in text:
        return []
    typed = text[1:].lower()
    return [command for command in COMMANDS if command.name.startswith(typed)]


MENU_NAME_COLUMN = 14
"""Width of the menu's command column; a usage longer than it is shown whole only once the menu
is down to one command (the rest of the time the bare name stands for it)."""


def menu_lines(commands: list[SlashCommand], width: int) -> list[str]:
    """The slash menu: one line per command, its usage then its description, cut to ``width``."""
    lines = []
    for command in commands:
        usage = f"/{command.name} {command.args}".strip()
        if len(usage) > MENU_NAME_COLUMN and len(commands) > 1:
            usage = f"/{command.name}"
        line = f"{usage.ljust(MENU_NAME_COLUMN)}  {command.help}"
        lines.append(line if len(line) <= width else line[: max(1, width - 1)] + "…")
    return lines


def attach_argument(text: str) -> str | None:
    """The path typed after ``/attach`` (None: the line is not an /attach command being typed)."""
    if "\n" in text or not text.startswith("/"):
        return None
    name, space, argument = text[1:].partition(" ")
    return argument.lstrip() if space and name.lower() == "attach" else None


def path_completions(typed: str) -> list[str]:
    """The paths ``typed`` could be the start of, as typed (``~`` kept), directories ending in "/".

    Hidden files are offered only when the name being typed starts with a dot, as shells do.
    """
    folder, _, start = typed.rpartition("/")
    folder = f"{folder}/" if "/" in typed else ""
    try:
        with os.scandir(os.path.expanduser(folder) or ".") as entries:
            found = []
            for entry in entries:
                if not entry.name.startswith(start) or (
                    entry.name.startswith(".") and not start.startswith(".")
                ):
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                found.append(f"{folder}{entry.name}{'/' if is_dir else ''}")
    except OSError:
        return []
    return sorted(found)


def message_number(argument: str) -> int | None:
    """``"#12"`` or ``"12"`` → 12; anything else → None."""
    digits = argument.strip().removeprefix("#")
    return int(digits) if digits.isdigit() else None


def common_start(names: list[str]) -> str:
    """The longest start all of ``names`` share (for Tab completion)."""
    if not names:
        return ""
    first, last = min(names), max(names)
    length = next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first))
    return first[:length]
