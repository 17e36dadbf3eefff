"""The picture of the next request: what the context would look like if the session's last user
message were sent now (planned, never applied: it changes nothing the user sees)."""

from __future__ import annotations

from collections.abc import Callable

from engine.advice.calls import CallsReport
from engine.advice.rules import Guidance
from engine.curation.cold_recall import ColdCandidates
from engine.curation.context_building import build_view, empty_view
from engine.curation.context_view import ContextView
from engine.curation.items import Item
from engine.curation.prompt import MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS
from engine.curation.session_curation import SessionCuration


def preview_view(
    curation: SessionCuration,
    *,
    system_prompt: str,
    guidance: Guidance | None,
    cold: Callable[[Item], ColdCandidates],
    calls: CallsReport | None,
) -> ContextView:
    """The next request's picture; the next turn's summaries are written ahead meanwhile.

    Args:
        cold: The messages before the session's curated cut that may answer a message.
    """
    new = curation.last_user()
    if new is None:
        counter = curation.counter
        system = counter.count(system_prompt) + MESSAGE_OVERHEAD_TOKENS if system_prompt else 0
        memory = counter.count(curation.memory) + MESSAGE_OVERHEAD_TOKENS if curation.memory else 0
        return empty_view(curation, system + memory + REPLY_PRIMING_TOKENS)
    result = curation.plan(new, system_prompt=system_prompt, guidance=guidance, cold=cold(new))
    curation.prepare_summaries()
    return build_view(curation, result, new_id=new.id, calls=calls, upcoming=True)
