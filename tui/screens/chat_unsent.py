"""The message being typed when the app closes: kept in the store and put back in the composer
when the app opens again, so quitting with a half-written message never loses it."""

from __future__ import annotations

import asyncio
import json

from engine.errors import StoreError
from tui.log_gate import gated
from tui.screens.chat_parts import ChatPart

UNSENT_STATE = "unsent"
"""The app-state key of the composer's text at exit and its large pastes (JSON; "" when empty)."""


class UnsentText(ChatPart):
    def keep(self) -> None:
        """Store what the composer holds, or forget an older text if it is empty. Blocking, as the
        app closes."""
        text, pastes = self.host.composer.unsent()
        kept = json.dumps({"text": text, "pastes": pastes}) if text else ""
        try:
            self.host.services.store.set_state(UNSENT_STATE, kept)
        except StoreError as error:  # a read-only or broken database: said when it was opened
            self.host.app.log.error("the unsent message was not kept", gated(error))

    async def restore(self) -> None:
        """Put the text kept at the last exit back in the composer (once) and say so."""
        store = self.host.services.store
        kept = await asyncio.to_thread(store.get_state, UNSENT_STATE)
        if not kept:
            return
        try:
            found = json.loads(kept)
            text, pastes = str(found["text"]), {str(k): str(v) for k, v in dict(found["pastes"]).items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            return  # not ours to read: left as it is
        self.host.composer.put_back(text, pastes)
        await asyncio.to_thread(store.set_state, UNSENT_STATE, "")
        self.host.notify("The message you were writing when Heedful closed is back in the composer.")
