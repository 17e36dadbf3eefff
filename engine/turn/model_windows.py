"""The context window each model is budgeted for: the configured one, or less once its server says so.

A server may say its limit up front (``ChatModel.window_limit``, asked once per model before its
first turn) or only by refusing a request as too long; either way the budget shrinks for the rest
of the run and the user is told what that left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.turn.events import TurnNotice

if TYPE_CHECKING:
    from engine.curation.context_view import ContextView
    from engine.errors import ModelError
    from engine.protocols.models import ChatModel

SMALLEST_WINDOW = 512
"""A server that keeps saying "too long" never shrinks the budget below this many tokens."""
TIGHTEN_FACTOR = 0.75
"""When the server says the request is too long but not what its limit is: budget this much less."""


class ModelWindows:
    """Per model: a smaller window than configured, learned from the server this run."""

    def __init__(self) -> None:
        self._caps: dict[str, int] = {}
        self._asked: set[str] = set()

    def window(self, model: ChatModel) -> int:
        """The window curation budgets for with ``model``."""
        configured = model.context_window
        return min(configured, self._caps.get(model.name, configured))

    def asked(self, model: ChatModel) -> bool:
        """Whether the server was already asked the model's window."""
        return model.name in self._asked

    async def learn(self, model: ChatModel) -> TurnNotice | None:
        """Before the model's first turn: ask the server its window, and budget for it if smaller."""
        if self.asked(model):
            return None
        self._asked.add(model.name)
        limit = await model.window_limit()
        configured = self.window(model)
        if limit is None or limit >= configured:
            return None
        self._caps[model.name] = limit
        return TurnNotice(
            f"The server says {model.name} takes at most {limit:,} tokens, fewer than the "
            f"{configured:,} configured: Heedful budgets for {limit:,}."
        )

    def narrow(self, model: ChatModel, err: ModelError) -> None:
        """The server said a request was too long: budget for its limit, or for less than before."""
        before = self.window(model)
        reported = err.window if err.window is not None and err.window < before else None
        after = reported if reported is not None else int(before * TIGHTEN_FACTOR)
        self._caps[model.name] = max(SMALLEST_WINDOW, after)


def tightened_notice(
    model: str, err: ModelError, before: int, first: ContextView | None, tighter: ContextView | None
) -> str:
    """What the user is told after a "too long" answer made the engine send less (``first`` and
    ``tighter``: the views of the two plans, None where one failed to build)."""
    said = f" (its limit is {err.window:,} tokens)" if err.window is not None else ""
    if first is None or tighter is None:
        return f"The server said the request was too long for {model}{said}. Heedful sent less, again."
    left = [item for item in tighter.items if not item.in_prompt and _was_sent(first, item.id)]
    head = (
        f"The server said the request was too long for {model}{said}. Heedful now budgets for "
        f"{tighter.window:,} tokens instead of {before:,} and sent it again"
    )
    if not left:
        return f"{head}."
    names = ", ".join(f"#{item.id} “{item.preview[:40]}”" for item in left[:5])
    more = f" and {len(left) - 5} more" if len(left) > 5 else ""
    return (
        f"{head} without {len(left)} message{'s' if len(left) != 1 else ''}: {names}{more}. "
        "They stay in the store; the context panel lists them and r restores one."
    )


def _was_sent(view: ContextView, item_id: int) -> bool:
    item = view.item(item_id)
    return item is not None and item.in_prompt
