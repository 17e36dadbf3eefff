"""The chat screen's focus model: the composer is home, and typing always lands there.

Tab cycles composer → context panel → conversation → composer (Shift+Tab the other way), Esc in
the panel or on a message comes home, and a printable key pressed where it means nothing (a panel
row, a focused message) is the user writing: the composer takes it and the focus.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget

from tui.screens.chat_parts import ChatPart
from tui.typing import pass_to_composer, paste_to_composer


class FocusModel(ChatPart):
    def regions(self) -> list[Widget]:
        """Where Tab goes, in order: the composer, the panel when shown, the conversation when it
        has messages."""
        host = self.host
        regions: list[Widget] = [host.composer]
        if host.context_panel.display:
            regions.append(host.context_panel)
        if host.message_list.mounted:
            regions.append(host.message_list)
        return regions

    def cycle(self, step: int) -> None:
        regions = self.regions()
        focused = self.host.focused
        here = 0
        if focused is not None:
            for index, region in enumerate(regions):
                if region in focused.ancestors_with_self:
                    here = index
        self.enter(regions[(here + step) % len(regions)])

    def enter(self, region: Widget) -> None:
        host = self.host
        if region is host.context_panel:
            self.focus_panel()
        elif region is host.message_list:
            self.focus_message()
        else:
            host.composer.focus()

    def toggle_panel(self) -> None:
        """F2: show the context panel and go to it, or hide it and go home."""
        panel = self.host.context_panel
        panel.display = not panel.display
        if panel.display:
            self.focus_panel()
        else:
            self.host.composer.focus()

    def focus_panel(self) -> None:
        """Focus the context panel's rows: at once, or once mounted (asked for before the parts
        the first frame does without were)."""
        if self.host.context_panel.rows.is_mounted:
            self.host.context_panel.rows.focus()
        else:
            self.host.run_worker(self._focus_panel(), exit_on_error=False)

    async def _focus_panel(self) -> None:
        await self.host.context_panel.fill()
        if self.host.context_panel.display:
            self.host.context_panel.rows.focus()

    def focus_message(self) -> None:
        """Focus the latest message in view (the latest mounted if none is)."""
        listed = self.host.message_list
        mounted = listed.mounted
        seen = listed.region
        in_view = [v for v in mounted if v.region.y < seen.bottom and v.region.bottom > seen.y]
        (in_view or mounted)[-1].focus(scroll_visible=not in_view)

    def home(self) -> None:
        self.host.composer.focus()

    def typed(self, event: events.Key) -> None:
        """A printable key where it means nothing: the composer takes it, and the focus."""
        host = self.host
        if host.focused is not host.composer and pass_to_composer(host.app, event, host.focused):
            host.composer.focus()

    def pasted(self, event: events.Paste) -> None:
        """A paste where it means nothing (a panel row, a focused message): into the composer."""
        host = self.host
        if host.focused is not host.composer and paste_to_composer(host.app, event, host.focused):
            host.composer.focus()
