"""``/system``, ``/profile`` and ``/temperature``: show or change one of the session's own settings.
What each command makes of its argument is a plain function; the part asks the engine and says what
happened."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tui.screens.chat_parts import ChatPart

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from engine.chat import SessionSettings


@dataclass(frozen=True, slots=True)
class Shown:
    """The setting as it is (no argument), or why the argument was refused."""

    text: str
    severity: SeverityLevel = "information"
    timeout: float | None = None


@dataclass(frozen=True, slots=True)
class Changed:
    settings: SessionSettings
    said: str
    """What the session now uses, in words."""


def temperature(settings: SessionSettings, _: str, argument: str) -> Shown | Changed:
    if not argument:
        shown = "the server's default" if settings.temperature is None else f"{settings.temperature:g}"
        return Shown(f"Temperature: {shown}.")
    understood, degrees = _temperature(argument)
    if not understood:
        return Shown("The temperature is a number from 0 to 2, or default.", "warning")
    said = "the server's default temperature" if degrees is None else f"temperature {degrees:g}"
    return Changed(replace(settings, temperature=degrees), said)


def system(settings: SessionSettings, system_prompt: str, argument: str) -> Shown | Changed:
    if not argument:
        own = "this session's own" if settings.system_prompt is not None else "the config's"
        return Shown(f"System prompt ({own}): {system_prompt or '(none)'}", timeout=15)
    value = None if argument.lower() == "default" else argument
    said = "the config's system prompt again" if value is None else "its own system prompt"
    return Changed(replace(settings, system_prompt=value), said)


def profile(settings: SessionSettings, _: str, argument: str) -> Shown | Changed:
    from engine.curation.budget import ProfileName  # after the first frame

    if not argument:
        return Shown(f"Curation profile: {settings.profile or 'as the config says'}.")
    if argument.lower() not in set(ProfileName):
        names = ", ".join(p.value for p in ProfileName)
        return Shown(f"There is no profile {argument!r}: choose one of {names}.", "warning")
    return Changed(replace(settings, profile=argument.lower()), f"the {argument.lower()} profile")


SETTINGS: dict[str, Callable[[SessionSettings, str, str], Shown | Changed]] = {
    "temperature": temperature,
    "system": system,
    "profile": profile,
}
"""Each setting's command: from the session's settings, the system prompt it uses and the argument."""


class SettingCommands(ChatPart):
    def run(self, name: str, argument: str) -> bool:
        """Show or change the setting ``name``; False (the user told why) for a new chat."""
        if self.host.session is None:
            self.host.notify("Send a first message: settings belong to a session.", severity="warning")
            return False
        self.background(self._run(self.host.session.id, SETTINGS[name], argument))
        return True

    async def _run(
        self, session_id: int, setting: Callable[[SessionSettings, str, str], Shown | Changed], argument: str
    ) -> None:
        context = self.host.services.context
        settings, system_prompt = await context.settings(session_id)
        answer = setting(settings, system_prompt, argument)
        if isinstance(answer, Shown):
            self.host.notify(answer.text, severity=answer.severity, timeout=answer.timeout)
            return
        view = await context.update_settings(session_id, answer.settings)
        self.host.show_context(view)
        self.host.notify(f"This session now uses {answer.said}, from the next request on.")


def _temperature(argument: str) -> tuple[bool, float | None]:
    """Whether ``argument`` is a temperature, and which: ``default`` (None) or a number from 0 to 2."""
    if argument.lower() == "default":
        return True, None
    try:
        value = float(argument)
    except ValueError:
        return False, None
    return (True, value) if 0 <= value <= 2 else (False, None)
