"""Sending a message from the composer: a large one is asked about first (keep it whole, summarize
it when room is short, or send it once), and a question Heedful has about older messages is asked
as it goes (see tui/screens/consent.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.screens.chat_parts import ChatPart
from tui.widgets.composer import describe_size

if TYPE_CHECKING:
    from engine.curation.consent import ConsentChoice
    from tui.screens.chat_context import ContextActions
    from tui.screens.chat_host import ChatHost
    from tui.screens.large_message import LargeChoice

EXACT_COUNT_CHARS = 100_000
CHARS_PER_TOKEN = 4
"""For the "is this message larger than a whole request?" check before sending: messages up to
EXACT_COUNT_CHARS are counted (a few ms), longer ones estimated at CHARS_PER_TOKEN."""


class Sending(ChatPart):
    def __init__(self, host: ChatHost, *, context: ContextActions) -> None:
        super().__init__(host)
        self.context = context

    def submit(self, text: str, draft: str) -> None:
        """Send ``text`` (``draft``: the composer's text it came from), asking first if it is large."""
        host = self.host
        branch = host.editing
        host.edit(None)
        budget = host.context.budget if host.context is not None else None
        # Exact for ordinary messages; rough beyond EXACT_COUNT_CHARS, where counting exactly would
        # hold up the UI for up to a second and the answer is plain anyway. Cancel keeps the text.
        if budget is None:  # nothing counted yet (the engine may still be loading): the turn waits
            self.send(text, draft, branch)
            return
        if len(text.encode("utf-8", "surrogatepass")) <= budget:
            self.send(text, draft, branch)  # a token is a byte or more: it fits, and nothing is counted
            return
        counter = host.services.counter
        estimate = counter.count(text) if len(text) <= EXACT_COUNT_CHARS else len(text) // CHARS_PER_TOKEN
        if estimate <= budget:
            self.send(text, draft, branch)
            return
        from engine.curation.consent import ConsentChoice  # asked about: not for the first frame
        from tui.screens.large_message import LargeMessageScreen, large_question

        def answered(choice: LargeChoice | None) -> None:
            if choice is None:
                host.edit(branch)
                return
            then = {"keep": ConsentChoice.KEEP, "summarize": ConsentChoice.SUMMARIZE}.get(choice)
            self.send(text, draft, branch, answer=then)

        window = host.context.window if host.context is not None else budget
        question = large_question(
            estimate, describe_size(text), budget=budget, window=window, model=host.services.model_name
        )
        host.app.push_screen(LargeMessageScreen(question), answered)

    def send(self, text: str, draft: str, branch: int | None, *, answer: ConsentChoice | None = None) -> None:
        """Send the message, then ask what Heedful needs to know about older ones, if anything."""
        host = self.host
        host.composer.sending = draft
        host.run_turn(text, branch_from=branch, answer=answer)
        self.context.ask_on_send(text)
