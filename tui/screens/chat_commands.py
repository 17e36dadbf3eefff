"""Slash commands typed in the composer, carried out on the chat screen (see tui/slash.py)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tui import slash
from tui.messages import ItemVerb
from tui.screens.chat_parts import ChatPart

if TYPE_CHECKING:
    from engine.chat import Session
    from engine.protocols.models import ChatModel
    from tui.screens.chat_model import ModelSwitch
    from tui.screens.consent import ConsentAnswer


class SlashCommands(ChatPart):
    def run(self, invocation: slash.Invocation) -> None:
        """Carry out a slash command; the composer is cleared once it is accepted."""
        name, argument = invocation.command.name, invocation.argument
        if name in ("pin", "unpin", "forget", "restore"):
            target = self._command_target(argument)
            if target is None:
                return
            current = self.screen.context.item(target) if self.screen.context is not None else None
            pinned = current is not None and current.pinned
            if (name == "pin" and pinned) or (name == "unpin" and not pinned):
                self.screen.notify(f"#{target} is {'already' if pinned else 'not'} pinned.")
            else:
                verb = ItemVerb.PIN if name in ("pin", "unpin") else ItemVerb(name)
                self.screen.run_context_action(verb, target)
        elif name == "compact":
            if self.screen.session is None:
                self.screen.notify("There is nothing to compact yet.")
                return
            self.background(self._compact(self.screen.session.id))
        elif name == "tokens":
            from tui.screens.tokens import TokensScreen

            if self.screen.context is None:
                self.screen.notify("Still counting; try again in a moment.")
                return
            self.screen.app.push_screen(
                TokensScreen(self.screen.context, exact=self.screen.services.counter.exact)
            )
        elif name == "attach":
            if not argument:
                self.screen.notify("Say which file: /attach path/to/file.txt", severity="warning")
                return
            self.attach_file(argument)
        elif name == "remember":
            if self.screen.session is None:
                self.screen.notify("There is nothing to remember yet.")
                return
            self.screen.memory_actions.remember(self.screen.session.id, asked=True)
        elif name == "memory":
            self.screen.memory_actions.open_screen()
        elif name == "model" and not argument:
            self.choose_model()
        elif name == "model":
            session = self.screen.session
            self.background(self.model_switch.to(session.id if session is not None else None, argument))
        elif name in ("system", "profile", "temperature"):
            if self.screen.session is None:
                self.screen.notify("Send a first message: settings belong to a session.", severity="warning")
                return
            self.background(self._setting(self.screen.session.id, name, argument))
        elif name == "new":
            self.screen.action_new_session()
        elif name == "help":
            self.screen.action_help()
        self.screen.composer.clear()

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
            self.screen.notify(refused.user_message, severity="warning", timeout=10)
            return
        except OSError as err:
            self.screen.notify(
                f"Could not read {path}: {err.strerror or err}.", severity="warning", timeout=10
            )
            return
        session, view = await self.screen.services.context.attach(
            self.screen.session.id if self.screen.session else None, path.name, text
        )
        self.screen.adopt_session(session)
        latest = await asyncio.to_thread(self.screen.services.store.message_page, session.id, limit=1)
        await self.screen.message_list.add(latest.messages[-1])
        self.screen.show_context(view)
        self.screen.notify(f"Attached {path.name}: it is sent while the conversation refers to it.")

    async def _compact(self, session_id: int) -> None:
        from tui.screens.consent import ConsentScreen

        screen = self.screen
        before = screen.context.tokens if screen.context is not None else 0
        view, request = await screen.services.context.compact(session_id)
        screen.show_context(view)
        saved = max(0, before - view.tokens)
        asked = f" Heedful asks before summarizing {len(request.items)} of your messages." if request else ""
        screen.notify(f"Compacted the older turns: the next request is {saved:,} tokens smaller.{asked}")
        if request is not None:

            def answered(answer: ConsentAnswer | None) -> None:
                if answer is None:
                    screen.notify("Your messages stay as they are.")
                else:
                    screen.context_actions.record_consent(session_id, answer)

            screen.app.push_screen(ConsentScreen(request), answered)

    async def _setting(self, session_id: int, name: str, argument: str) -> None:
        """Show or change one of the session's own settings (/system, /profile)."""
        from dataclasses import replace

        from engine.curation.budget import ProfileName

        screen = self.screen
        context = screen.services.context
        settings, system_prompt = await context.settings(session_id)
        if name == "temperature":
            if not argument:
                shown = (
                    "the server's default" if settings.temperature is None else f"{settings.temperature:g}"
                )
                screen.notify(f"Temperature: {shown}.")
                return
            understood, degrees = _temperature(argument)
            if not understood:
                screen.notify("The temperature is a number from 0 to 2, or default.", severity="warning")
                return
            changed = replace(settings, temperature=degrees)
            said = "the server's default temperature" if degrees is None else f"temperature {degrees:g}"
        elif name == "system":
            if not argument:
                own = "this session's own" if settings.system_prompt is not None else "the config's"
                screen.notify(f"System prompt ({own}): {system_prompt or '(none)'}", timeout=15)
                return
            value = None if argument.lower() == "default" else argument
            changed = replace(settings, system_prompt=value)
            said = "the config's system prompt again" if value is None else "its own system prompt"
        else:
            if not argument:
                screen.notify(f"Curation profile: {settings.profile or 'as the config says'}.")
                return
            if argument.lower() not in set(ProfileName):
                names = ", ".join(p.value for p in ProfileName)
                screen.notify(f"There is no profile {argument!r}: choose one of {names}.", severity="warning")
                return
            changed = replace(settings, profile=argument.lower())
            said = f"the {argument.lower()} profile"
        view = await context.update_settings(session_id, changed)
        screen.show_context(view)
        screen.notify(f"This session now uses {said}, from the next request on.")

    async def use_session_model(self, session: Session | None) -> None:
        """Talk to the model the session chose with /model, or the app's default (not made ready:
        see :meth:`use_model`)."""
        models = self.screen.services.models
        model = models.default
        if session is not None:
            settings, _ = await self.screen.services.context.settings(session.id)
            if settings.model is not None:
                model, notices = models.get(settings.model)
                for notice in notices:
                    self.screen.notify(notice, severity="warning")
        self.use_model(model, ready=False)

    def use_model(self, model: ChatModel, *, ready: bool = True) -> None:
        """Talk to ``model`` from the next request on; with ``ready``, get it ready (import and
        connect) in the background now (a model ready is not made ready again)."""
        self.screen.services.turns.model = model
        self.show_model()
        if ready:
            self.background(self.screen.services.turns.warm_up())

    def show_model(self) -> None:
        """The header names the model and the provider it talks to."""
        services = self.screen.services
        model = services.turns.model
        self.screen.header.show_model(
            model.name, offline=model.is_offline, where=services.models.where(model)
        )

    @property
    def model_switch(self) -> ModelSwitch:
        from tui.screens.chat_model import ModelSwitch

        return ModelSwitch(self.screen)

    def choose_model(self) -> None:
        """Open the model picker (``/model`` alone, or the command palette)."""
        self.model_switch.choose()

    def _command_target(self, argument: str) -> int | None:
        """The message a command names (#N), or the session's last message when it names none."""
        if self.screen.context is None or not self.screen.context.items:
            self.screen.notify("There is no message to act on yet.", severity="warning")
            return None
        if not argument:
            return max(item.id for item in self.screen.context.items)
        number = slash.message_number(argument)
        if number is None or self.screen.context.item(number) is None:
            self.screen.notify(
                f"No message {argument} in this session: write its number, like #12.", severity="warning"
            )
            return None
        return number


def _temperature(argument: str) -> tuple[bool, float | None]:
    """Whether ``argument`` is a temperature, and which: ``default`` (None) or a number from 0 to 2."""
    if argument.lower() == "default":
        return True, None
    try:
        value = float(argument)
    except ValueError:
        return False, None
    return (True, value) if 0 <= value <= 2 else (False, None)
