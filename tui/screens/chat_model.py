"""``/model``: switch this session's model, looked for on its current provider first; a switch to
another provider or base URL is said and confirmed first, and an unknown name is refused."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tui.screens.chat_parts import ChatPart
from tui.screens.model_picker import ModelPickerScreen, SwitchProviderScreen

if TYPE_CHECKING:
    from providers.catalog import Target


class ModelSwitch(ChatPart):
    def _now(self) -> str:
        """The current model and where it talks to, in words."""
        services = self.screen.services
        model = services.turns.model
        if model.is_offline:
            return "the offline model"
        where = services.models.where(model)
        return f"{model.name} on {where}" if where else model.name

    def choose(self) -> None:
        """Open the picker at once; its rows come when the providers have answered."""
        picker = ModelPickerScreen(self._now())

        def chosen(name: str | None) -> None:
            if name is not None:
                self.background(self.to(self.screen.session.id if self.screen.session else None, name))

        self.screen.app.push_screen(picker, chosen)
        self.background(self._fill(picker))

    async def _fill(self, picker: ModelPickerScreen) -> None:
        services = self.screen.services
        current = services.turns.model
        listings = await services.models.listings(current)
        name = None
        if current.is_offline:
            name = "offline"
        else:
            where = services.models.where(current)
            for listing in listings:
                if listing.endpoint.label == where:
                    name = listing.endpoint.name_of(current.name)
                    break
        if picker.is_attached:
            picker.show(listings, name)

    async def to(self, session_id: int | None, name: str) -> None:
        """Switch to the model ``name`` means, asking first when it lives on another provider."""
        screen = self.screen
        if session_id is None:
            screen.notify("Send a first message: settings belong to a session.", severity="warning")
            return
        models = screen.services.models
        found = await models.find(name, screen.services.turns.model)
        if isinstance(found, str):
            screen.notify(f"{found} The model stays {self._now()}.", severity="warning", timeout=20)
            return
        if not found.switches:
            await self._switch(session_id, found)
            return
        question = (
            f"{found.choice.model} is on another provider: {found.where}. Switch this session to it? "
            f"From the next request on, the conversation is sent there instead of {self._now()}."
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self.background(self._switch(session_id, found))
            else:
                screen.notify(f"The model stays {self._now()}.")

        screen.app.push_screen(SwitchProviderScreen(question), answered)

    async def _switch(self, session_id: int, target: Target) -> None:
        screen = self.screen
        context = screen.services.context
        settings, _ = await context.settings(session_id)
        for notice in target.notices:
            screen.notify(notice, severity="warning", timeout=15)
        screen.commands.use_model(screen.services.models.use(target.choice))
        view = await context.update_settings(session_id, replace(settings, model=target.stored))
        screen.show_context(view)
        said = (
            "the offline model"
            if target.choice.offline
            else f"the model {target.choice.model} on {target.where}"
        )
        screen.notify(f"This session now uses {said}, from the next request on.")
