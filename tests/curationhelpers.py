"""Helpers for tests of one session's curation without the store: a session played as the app
plays it, and long filler answers about the garden that push older messages out of the budget."""

from __future__ import annotations

from engine.curation.consent import ConsentChoice
from engine.curation.items import Item
from engine.curation.result import CurationResult
from engine.curation.session_curation import SessionCuration
from engine.text.tokens import load_counter

COUNTER = load_counter("gpt-4o-mini")


def garden(turn: int) -> str:
    """About a hundred tokens about the garden, different for each ``turn``."""
    return " ".join(f"The garden note {turn}.{k} is about garden weather and travel plans." for k in range(8))


class Chat:
    """A session played as the app plays it: a user message is planned and applied."""

    def __init__(self, window: int = 1500, policy: ConsentChoice | None = None) -> None:
        self.curation = SessionCuration(window=window, counter=COUNTER, policy=policy)
        self.next_id = 1

    def say(self, role: str, text: str, *, apply: bool = True) -> Item:
        item = self.curation.add_message(self.next_id, role, text, COUNTER.count(text))  # type: ignore[arg-type]
        self.next_id += 1
        if role == "user" and apply:
            self.curation.apply(self.curation.plan(item))
        return item

    def ask(self, text: str = "And what flowers grow in the garden?") -> tuple[Item, CurationResult]:
        """Adds the user's ``text`` and plans the request for it, without applying the plan."""
        new = self.say("user", text, apply=False)
        return new, self.curation.plan(new)


def sent(result: CurationResult) -> set[int]:
    """The ids of the messages ``result`` sends whole."""
    return {source for message in result.messages for source in message.sources if message.form == "verbatim"}
