"""The model the chat talks to: the session's own (chosen with ``/model``) or the app's default,
named in the header. ``/model`` looks a name up on the current provider first; a switch to another
provider or base URL is said and confirmed first, and an unknown name is refused."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tui.screens.chat_parts import ChatPart

if TYPE_CHECKING:
    from engine.chat import Session
    from engine.protocols.models import ChatModel
    from providers.catalog import Target
    from tui.screens.model_picker import ModelPickerScreen


class ModelSwitch(ChatPart):
    async def use_session_model(self, session: Session | None) -> None:
        """Talk to the model the session chose with /model, or the app's default (not made ready:
        see :meth:`use_model`)."""
        models = self.host.services.models
        model = models.default
        if session is not None:
            settings, _ = await self.host.services.context.settings(session.id)
            if settings.model is not None:
                model, notices = models.get(settings.model)
                for notice in notices:
                    self.host.notify(notice, severity="warning")
        self.use_model(model, ready=False)

    def use_model(self, model: ChatModel, *, ready: bool = True) -> None:
        """Talk to ``model`` from the next request on; with ``ready``, get it ready (import and
        connect) in the background now (a model ready is not made ready again)."""
        self.host.services.turns.model = model
        self.show_model()
        if ready:
            self.background(self.host.services.turns.warm_up())

    def show_model(self) -> None:
        """The header names the model and the provider it talks to."""
        services = self.host.services
        model = services.turns.model
        self.host.header.show_model(model.name, offline=model.is_offline, where=services.models.where(model))

    def _now(self) -> str:
        """The current model and where it talks to, in words."""
        services = self.host.services
        model = services.turns.model
        if model.is_offline:
            return "the offline model"
        where = services.models.where(model)
        return f"{model.name} on {where}" if where else model.name

    def choose(self) -> None:
        """Open the picker at once; its rows come when the providers have answered."""
        from tui.screens.model_picker import ModelPickerScreen  # a dialog: not for the first frame

        picker = ModelPickerScreen(self._now())

        def chosen(name: str | None) -> None:
            if name is not None:
                self.background(self.to(self.host.session.id if self.host.session else None, name))

        self.host.app.push_screen(picker, chosen)
        self.background(self._fill(picker))

    async def _fill(self, picker: ModelPickerScreen) -> None:
        services = self.host.services
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
        host = self.host
        if session_id is None:
            host.notify("Send a first message: settings belong to a session.", severity="warning")
            return
        models = host.services.models
        found = await models.find(name, host.services.turns.model)
        if isinstance(found, str):
            host.notify(f"{found} The model stays {self._now()}.", severity="warning", timeout=20)
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
                host.notify(f"The model stays {self._now()}.")

        from tui.screens.model_picker import SwitchProviderScreen  # a dialog: not for the first frame

        host.app.push_screen(SwitchProviderScreen(question), answered)

    async def _switch(self, session_id: int, target: Target) -> None:
        host = self.host
        context = host.services.context
        settings, _ = await context.settings(session_id)
        for notice in target.notices:
            host.notify(notice, severity="warning", timeout=15)
        self.use_model(host.services.models.use(target.choice))
        view = await context.update_settings(session_id, replace(settings, model=target.stored))
        host.show_context(view)
        said = (
            "the offline model"
            if target.choice.offline
            else f"the model {target.choice.model} on {target.where}"
        )
        host.notify(f"This session now uses {said}, from the next request on.")
