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
        screen = self.screen
        regions: list[Widget] = [screen.composer]
        if screen.context_panel.display:
            regions.append(screen.context_panel)
        if screen.message_list.mounted:
            regions.append(screen.message_list)
        return regions

    def cycle(self, step: int) -> None:
        regions = self.regions()
        focused = self.screen.focused
        here = 0
        if focused is not None:
            for index, region in enumerate(regions):
                if region in focused.ancestors_with_self:
                    here = index
        self.enter(regions[(here + step) % len(regions)])

    def enter(self, region: Widget) -> None:
        screen = self.screen
        if region is screen.context_panel:
            screen.focus_panel()
        elif region is screen.message_list:
            self.focus_message()
        else:
            screen.composer.focus()

    def focus_message(self) -> None:
        """Focus the latest message in view (the latest mounted if none is)."""
        listed = self.screen.message_list
        mounted = listed.mounted
        seen = listed.region
        in_view = [v for v in mounted if v.region.y < seen.bottom and v.region.bottom > seen.y]
        (in_view or mounted)[-1].focus(scroll_visible=not in_view)

    def home(self) -> None:
        self.screen.composer.focus()

    def typed(self, event: events.Key) -> None:
        """A printable key where it means nothing: the composer takes it, and the focus."""
        screen = self.screen
        if screen.focused is not screen.composer and pass_to_composer(screen.app, event, screen.focused):
            screen.composer.focus()

    def pasted(self, event: events.Paste) -> None:
        """A paste where it means nothing (a panel row, a focused message): into the composer."""
        screen = self.screen
        if screen.focused is not screen.composer and paste_to_composer(screen.app, event, screen.focused):
            screen.composer.focus()
