"""Slash commands typed in the composer, carried out on the chat screen (see tui/slash.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tui import slash
from tui.filtering import counted
from tui.messages import ContextAction, ItemVerb
from tui.screens.chat_parts import ChatPart
from tui.screens.chat_settings import SETTINGS, SettingCommands

if TYPE_CHECKING:
    from engine.curation.keep_rules import KeepRule
    from engine.standing.book import Standing
    from tui.screens.chat_context import ContextActions
    from tui.screens.chat_host import ChatHost
    from tui.screens.chat_memory import MemoryActions
    from tui.screens.chat_model import ModelSwitch
    from tui.screens.consent import ConsentAnswer

ITEM_COMMANDS = {
    "pin": ItemVerb.PIN,
    "unpin": ItemVerb.PIN,
    "forget": ItemVerb.FORGET,
    "restore": ItemVerb.RESTORE,
}
"""The commands that act on one message of the context, and what they ask of it."""


class SlashCommands(ChatPart):
    """Carries out commands; what belongs to another part (a message's context, memory, the
    model) is handed to that part."""

    def __init__(
        self, host: ChatHost, *, context: ContextActions, memory: MemoryActions, models: ModelSwitch
    ) -> None:
        super().__init__(host)
        self.context = context
        self.memory = memory
        self.models = models
        self.settings = SettingCommands(host)
        self._handlers: dict[str, Callable[[str], bool]] = {
            "keep": self._on_keep,
            "standing": self._on_standing,
            "compact": self._on_compact,
            "tokens": self._on_tokens,
            "attach": self._on_attach,
            "remember": self._on_remember,
            "memory": self._on_memory,
            "model": self._on_model,
            "new": self._on_new,
            "help": self._on_help,
        }
        """The other commands: each says whether it was accepted (a refused one leaves the
        composer as it is)."""

    @property
    def names(self) -> frozenset[str]:
        """The commands this part carries out."""
        return frozenset(ITEM_COMMANDS) | frozenset(SETTINGS) | frozenset(self._handlers)

    def run(self, invocation: slash.Invocation) -> None:
        """Carry out a slash command; the composer is cleared once it is accepted."""
        name, argument = invocation.command.name, invocation.argument
        if name in ITEM_COMMANDS:
            accepted = self._on_item(name, argument)
        elif name in SETTINGS:
            accepted = self.settings.run(name, argument)
        else:
            accepted = self._handlers[name](argument)
        if accepted:
            self.host.composer.clear()

    def _on_item(self, name: str, argument: str) -> bool:
        target = self._command_target(argument)
        if target is None:
            return False
        current = self.host.context.item(target) if self.host.context is not None else None
        pinned = current is not None and current.pinned
        if (name == "pin" and pinned) or (name == "unpin" and not pinned):
            self.host.notify(f"#{target} is {'already' if pinned else 'not'} pinned.")
        else:
            self.host.post_message(ContextAction(ITEM_COMMANDS[name], target))
        return True

    def _on_compact(self, _: str) -> bool:
        if self.host.session is None:
            self.host.notify("There is nothing to compact yet.")
            return False
        self.background(self._compact(self.host.session.id))
        return True

    def _on_keep(self, argument: str) -> bool:
        session = self.host.session
        if session is None:
            self.host.notify("There is nothing to keep yet: start the conversation first.")
            return False
        if argument:
            from engine.curation.keep_rules import MAX_RULE_CHARS, rule

            if len(argument) > MAX_RULE_CHARS:
                self.host.notify(f"A keep rule is a few words (up to {MAX_RULE_CHARS} characters).")
                return False
            if not rule(0, argument).terms:
                self.host.notify("Say what to keep in words that name it: /keep the database schema.")
                return False
            self.background(self._add_keep_rule(session.id, argument))
        else:
            self.background(self._list_keep_rules(session.id))
        return True

    async def _add_keep_rule(self, session_id: int, text: str) -> None:
        rule, matching, view = await self.host.services.context.add_keep_rule(session_id, text)
        self.host.show_context(view)
        now = "1 message" if matching == 1 else f"{matching:,} messages"
        self.host.notify(f"Keeping what matches “{rule.text}”: {now} now. /keep lists the rules.")

    async def _list_keep_rules(self, session_id: int) -> None:
        from tui.screens.keep_rules import KeepRulesScreen

        context = self.host.services.context

        async def remove(rule_id: int) -> Sequence[KeepRule]:
            self.host.show_context(await context.remove_keep_rule(session_id, rule_id))
            return await context.keep_rules(session_id)

        self.host.app.push_screen(KeepRulesScreen(await context.keep_rules(session_id), remove))

    def _on_standing(self, argument: str) -> bool:
        session = self.host.session
        if session is None:
            self.host.notify("No standing instructions yet: start the conversation first.")
            return False
        self.background(self._standing(session.id, argument))
        return True

    async def _standing(self, session_id: int, text: str) -> None:
        from tui.sanitize import inert
        from tui.screens.standing import MAX_CHARS, StandingScreen

        context = self.host.services.context

        async def change(key: str | None, words: str | None) -> Sequence[Standing]:
            entries, view = await context.change_standing(session_id, key, words)
            self.host.show_context(view)
            return entries

        if text:
            if len(text) > MAX_CHARS:
                self.host.notify(f"A standing instruction is up to {MAX_CHARS} characters.")
                return
            await change(None, text)
            self.host.notify(f"Standing instruction added: “{inert(text)}”. /standing lists them.")
            return
        self.host.app.push_screen(StandingScreen(await context.standing(session_id), change))

    def _on_tokens(self, _: str) -> bool:
        from tui.screens.tokens import TokensScreen

        if self.host.context is None:
            self.host.notify("Still counting; try again in a moment.")
            return False
        self.host.app.push_screen(TokensScreen(self.host.context, exact=self.host.services.counter.exact))
        return True

    def _on_attach(self, argument: str) -> bool:
        if not argument:
            self.host.notify("Say which file: /attach path/to/file.txt", severity="warning")
            return False
        self.attach_file(argument)
        return True

    def _on_remember(self, _: str) -> bool:
        if self.host.session is None:
            self.host.notify("There is nothing to remember yet.")
            return False
        self.memory.remember(self.host.session.id, asked=True)
        return True

    def _on_memory(self, _: str) -> bool:
        self.memory.open_screen()
        return True

    def _on_new(self, _: str) -> bool:
        self.host.action_new_session()
        return True

    def _on_help(self, _: str) -> bool:
        self.host.action_help()
        return True

    def _on_model(self, argument: str) -> bool:
        if not argument:
            self.choose_model()
        else:
            session = self.host.session
            self.background(self.models.to(session.id if session is not None else None, argument))
        return True

    def attach_file(self, argument: str) -> None:
        self.background(self._attach_file(argument))

    async def _attach_file(self, argument: str) -> None:
        """Read a text file (off the event loop) and add it to the conversation as a tool item."""
        from pathlib import Path

        from engine.turn.attachments import MAX_ATTACHMENT_BYTES, AttachmentRefused, attachment_text

        path = Path(argument)

        def read() -> tuple[bytes, int]:
            where = path.expanduser()
            with where.open("rb") as file:
                return file.read(MAX_ATTACHMENT_BYTES + 1), where.stat().st_size

        try:
            data, size = await asyncio.to_thread(read)
            text = attachment_text(path.name, data, size=size)
        except AttachmentRefused as refused:
            self.host.notify(refused.user_message, severity="warning", timeout=10)
            return
        except OSError as err:
            self.host.notify(f"Could not read {path}: {err.strerror or err}.", severity="warning", timeout=10)
            return
        session, view = await self.host.services.context.attach(
            self.host.session.id if self.host.session else None, path.name, text
        )
        self.host.adopt_session(session)
        latest = await asyncio.to_thread(self.host.services.store.message_page, session.id, limit=1)
        await self.host.message_list.add(latest.messages[-1])
        self.host.show_context(view)
        self.host.notify(f"Attached {path.name}: it is sent while the conversation refers to it.")

    async def _compact(self, session_id: int) -> None:
        from tui.screens.consent import ConsentScreen

        host = self.host
        before = host.context.tokens if host.context is not None else 0
        view, summarized, request = await host.services.context.compact(session_id)
        host.show_context(view)
        saved = max(0, before - view.tokens)
        asked = f" Heedful asks before summarizing {len(request.items)} of your messages." if request else ""
        if summarized:
            smaller = f"{saved:,} tokens smaller" if saved else "no smaller (short, or not sent)"
            done = f"Summarized {counted(summarized, 'older message')}: the next request is {smaller}."
        elif request is not None:
            done = "Nothing older could be compacted without your answer."
        else:
            done = "Nothing older to compact."
        host.notify(done + asked)
        if request is not None:

            def answered(answer: ConsentAnswer | None) -> None:
                if answer is None:
                    host.notify("Your messages stay as they are.")
                else:
                    self.context.record_consent(session_id, answer)

            host.app.push_screen(ConsentScreen(request), answered)

    def choose_model(self) -> None:
        """Open the model picker (``/model`` alone, or the command palette)."""
        self.models.choose()

    def _command_target(self, argument: str) -> int | None:
        """The message a command names (#N), or the session's last message when it names none."""
        if self.host.context is None or not self.host.context.items:
            self.host.notify("There is no message to act on yet.", severity="warning")
            return None
        if not argument:
            return max(item.id for item in self.host.context.items)
        number = slash.message_number(argument)
        if number is None or self.host.context.item(number) is None:
            self.host.notify(
                f"No message {argument} in this session: write its number, like #12.", severity="warning"
            )
            return None
        return number
