"""The multi-line message composer."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.timer import Timer
from textual.widgets import TextArea
from textual.widgets.text_area import EditResult

from tui.sanitize import inert_controls, replaced_controls
from tui.slash import attach_argument, common_start, completions, path_completions

NEWLINE_KEYS = frozenset({"ctrl+j", "alt+enter", "shift+enter", "newline"})
"""Keys that insert a line break; Enter itself sends. Terminals report ctrl+j as a newline."""

TYPED_PASTE_GAP = 0.025
"""Keys read within this many seconds of each other may be a paste typed as keys (see
:class:`Composer`): a terminal delivers those microseconds apart, and a person's keys come tens of
milliseconds apart at the least."""

PASTE_INLINE_CHARS = 20_000
PASTE_INLINE_LINES = 500
"""A paste larger than this is held aside and shown as one placeholder line: TextArea lays out
every line it holds, and a 10 MB paste froze the app for seconds."""


def describe_size(text: str) -> str:
    """ "1,204 lines, 56.3 kB" for a paste's placeholder."""
    lines = text.count("\n") + 1
    size = len(text.encode("utf-8", "surrogatepass"))
    amount = f"{size / 1_000_000:.1f} MB" if size >= 1_000_000 else f"{size / 1000:.1f} kB"
    return f"{lines:,} line{'s' if lines != 1 else ''}, {amount}"


class Composer(TextArea):
    """Where the user writes. Enter sends; ctrl+j or alt+enter inserts a newline; pastes keep theirs.

    A large paste is not put into the text area: a placeholder such as ``[Pasted text #1: 170,000
    lines, 10.0 MB]`` stands for it, and :attr:`message` puts the pasted text back in its place.
    Deleting the placeholder drops the paste.

    A terminal that does not bracket pastes (tmux's ``paste-buffer`` without ``-p``, GNU screen,
    some Windows consoles) types a paste as keys. One at a time, each key lays out its whole line
    again: a 27 kB line of text froze the app for minutes, and each line break, taken for Enter,
    sent the lines so far as a message of their own. So printable keys are gathered and inserted
    together once the keys already queued are handled, and an Enter hard on the heels of another
    key waits :data:`TYPED_PASTE_GAP` before it sends: if more keys come meanwhile, it was a line
    of the paste. The wait, not the gap before the Enter, decides: the keys a person types while
    the app is too busy to read them come in one read too, their Enter last.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # Shown in the footer; the key itself is handled in _on_key before bindings are consulted.
        Binding("enter", "submit", "Send", key_display="⏎", tooltip="Send the message", id="send"),
        Binding("ctrl+j", "newline", "New line", show=False, tooltip="Insert a line break", id="newline"),
    ]

    DEFAULT_CSS = """
    Composer {
        height: auto;
        min-height: 3;
        max-height: 12;
    }
    """

    @dataclass
    class Submitted(Message):
        """The user pressed Enter with some text in the composer."""

        composer: Composer
        text: str
        draft: str = ""
        """The composer's text when Enter was pressed (with large pastes as placeholders)."""

        @property
        def control(self) -> Composer:
            return self.composer

    @dataclass
    class HistoryPaged(Message):
        """PageUp or PageDown with a draft the composer shows whole: the conversation is paged
        instead, as there is no page of the draft to move to."""

        up: bool

    def action_cursor_page_up(self) -> None:
        if self.max_scroll_y > 0:
            super().action_cursor_page_up()
        else:
            self.post_message(self.HistoryPaged(up=True))

    def action_cursor_page_down(self) -> None:
        if self.max_scroll_y > 0:
            super().action_cursor_page_down()
        else:
            self.post_message(self.HistoryPaged(up=False))

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(
            "",
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder="Message  (Enter sends · Ctrl+J new line)",
            id=id,
            classes=classes,
        )
        self._pastes: dict[str, str] = {}
        """Placeholder → the large paste it stands for."""
        self._typed: list[str] = []
        """Printable keys (and a paste's line breaks and tabs) not inserted yet: see the class's
        docstring."""
        self._typed_at = 0.0
        """When the last of them, or a held Enter, was read."""
        self.sending = ""
        """The draft of the message being sent: it leaves the composer once it is stored."""
        self._held_enter: Timer | None = None
        """An Enter that came hard on the heels of other keys: it sends when this timer fires,
        unless more keys come first (it was then a line break in a paste)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # TextArea binds F6 to "select line"; declining it lets F6 reach the screen (the ledger).
        if action == "select_line":
            return False
        return super().check_action(action, parameters)

    async def _on_key(self, event: events.Key) -> None:
        # Textual runs _on_key of every class in the MRO unless the default is prevented, so
        # handling Enter here is what stops TextArea from inserting a newline for it.
        in_burst = event.time - self._typed_at < TYPED_PASTE_GAP
        if self._held_enter is not None:
            self._release_enter(send=not in_burst)
        # A terminal reports Alt+c as "alt+c" with the character "c": a shortcut, not typing.
        chord = any(modifier in event.key for modifier in ("alt+", "ctrl+", "super+", "meta+"))
        if (event.is_printable and not chord) or (in_burst and event.key in ("enter", "tab")):
            event.stop()
            event.prevent_default()
            self._typed_at = event.time
            if event.key == "enter":
                self._held_enter = self.set_timer(TYPED_PASTE_GAP, lambda: self._release_enter(send=True))
            else:
                self._gather("\t" if event.key == "tab" else event.character or "")
            return
        self.insert_typed()  # before any other key acts: it may move the cursor, or send
        if event.key == "tab" and completions(self.text):
            event.stop()
            event.prevent_default()
            self.complete_command()
        elif event.key == "tab" and attach_argument(self.text) is not None:
            event.stop()
            event.prevent_default()
            await self.complete_path()
        elif event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.action_newline()
        elif event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()

    def take(self, character: str) -> None:
        """A character typed somewhere it meant nothing (a dialog, the panel): the user's words."""
        self._gather(character)

    def _gather(self, text: str) -> None:
        if not self._typed:
            self.call_later(self.insert_typed)
        self._typed.append(text)

    def _release_enter(self, *, send: bool) -> None:
        """Settle the held Enter: send, or a line break when more keys of the paste came after it."""
        if self._held_enter is None:
            return
        self._held_enter.stop()
        self._held_enter = None
        if send:
            self.insert_typed()
            self.action_submit()
        else:
            self._gather("\n")

    def insert_typed(self) -> None:
        """Insert the keys gathered so far, as typing them one by one would have."""
        if self._typed:
            typed, self._typed = "".join(self._typed), []
            start, end = self.selection
            self.replace(typed, start, end, maintain_selection_offset=False)

    async def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()
        self._release_enter(send=False)  # an Enter just before a paste: input goes on
        self.insert_typed()
        text = event.text
        start, end = self.selection
        if len(text) <= PASTE_INLINE_CHARS and text.count("\n") < PASTE_INLINE_LINES:
            # TextArea draws control characters as they are: a pasted C1 CSI would reach the
            # terminal. What is shown is what is sent, so the paste is made inert first.
            safe = inert_controls(text)  # not bidi markers: what is shown here is sent
            changed = replaced_controls(text)
            if changed:
                self.notify(
                    f"The paste held {changed:,} control character{'s' if changed != 1 else ''}: "
                    "shown (and sent) as ␛ or �.",
                    severity="warning",
                )
            self.replace(safe, start, end, maintain_selection_offset=False)
            return
        # Held aside whole, bytes and all: it is never drawn, and the message view shows it inertly.
        placeholder = f"[Pasted text #{len(self._pastes) + 1}: {describe_size(text)}]"
        self._pastes[placeholder] = text
        self.replace(placeholder, start, end, maintain_selection_offset=False)

    @property
    def message(self) -> str:
        """What sending would send: the text typed, with each large paste in its placeholder's place."""
        if not self._pastes:
            return self.text
        # One pass over what was typed: a paste that itself contains a placeholder's words stays as it is.
        placeholders = re.compile("|".join(re.escape(p) for p in self._pastes))
        return placeholders.sub(lambda found: self._pastes[found.group()], self.text)

    def unsent(self) -> tuple[str, dict[str, str]]:
        """What is typed and not being sent (the draft being sent is stored already), and the large
        pastes its placeholders stand for."""
        self.insert_typed()
        text = self.text
        if self.sending and text.startswith(self.sending):
            text = text[len(self.sending) :]
        return text, {held: paste for held, paste in self._pastes.items() if held in text}

    def put_back(self, text: str, pastes: dict[str, str]) -> None:
        """Show ``text`` again before what is typed, its placeholders standing for ``pastes``."""
        self._pastes.update(pastes)
        self.insert(text, (0, 0))

    def sent(self) -> None:
        """The message being sent is stored: take its draft out, and keep what was typed after it
        (the user typing straight on after Enter). A draft changed meanwhile stays for the user."""
        draft, self.sending = self.sending, ""
        self.insert_typed()
        text = self.text
        if not draft or not text.startswith(draft):
            return
        rest = text[len(draft) :]
        self.clear()
        if rest:
            self.insert(rest)

    def clear(self) -> EditResult:
        self._pastes.clear()
        return super().clear()

    def complete_command(self) -> None:
        """Complete a slash command being typed: to the one match, or as far as all matches agree."""
        matches = [f"/{command.name}" for command in completions(self.text)]
        if not matches:
            return
        common = common_start(matches)
        self.text = f"{common} " if len(matches) == 1 else common
        self.move_cursor(self.document.end)

    async def complete_path(self) -> None:
        """Complete the file path after ``/attach``: to the one match, or as far as all matches
        agree; when they agree no further, a note lists them."""
        line = self.text
        typed = attach_argument(line)
        if typed is None:
            return
        # Read off the event loop: a slow or network file system must not freeze the app.
        matches = await asyncio.to_thread(path_completions, typed)
        if self.text != line:
            return  # typed on meanwhile
        if not matches:
            self.notify(f"No file or folder starts with {typed or 'nothing'!r}.", timeout=3)
            return
        common = common_start(matches)
        if len(common) > len(typed):
            self.text = f"/attach {common}"
            self.move_cursor(self.document.end)
        elif len(matches) > 1:
            names = [m.rstrip("/").rpartition("/")[2] + ("/" if m.endswith("/") else "") for m in matches]
            more = f" and {len(names) - 8:,} more" if len(names) > 8 else ""
            self.notify(f"{len(names):,} match: {'  '.join(names[:8])}{more}", timeout=5)

    def action_newline(self) -> None:
        start, end = self.selection
        self.replace("\n", start, end, maintain_selection_offset=False)

    def action_submit(self) -> None:
        if self.text.strip():
            self.post_message(self.Submitted(self, self.message, self.text))
