"""What is kept of each session beside its curation: its own settings, the curator model's
decisions and last advice, and what curation calls cost; each read from the store once.

Owned by :class:`engine.curation.session_curations.SessionCurations`, which uses it under its lock.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.advice.calls import CallsReport, CallTally, CallUsage, Price
from engine.chat import SessionSettings
from engine.curation.budget import Profile, ProfileName, profile_named
from engine.protocols.store import ChatStore

if TYPE_CHECKING:
    from engine.advice.rules import Guidance


class SessionNotes:
    def __init__(self, store: ChatStore) -> None:
        self.store = store
        self.guidance: dict[int, Guidance] = {}
        """Each session's last curator advice: previews of the same request are planned with it."""
        self._settings: dict[int, SessionSettings] = {}
        self._decisions: dict[int, list[str]] = {}
        self._fallbacks: dict[int, int] = {}
        """Each session's turns in a row, up to the last, on which the curator gave no advice."""
        self._tallies: dict[int, CallTally] = {}

    def settings(self, session_id: int) -> SessionSettings:
        """The session's own settings, read once from the store."""
        found = self._settings.get(session_id)
        if found is None:
            found = self._settings[session_id] = self.store.session_settings(session_id)
        return found

    def system_prompt(self, session_id: int | None, default: str) -> str:
        """The session's own system prompt, else ``default`` (the config's)."""
        own = self.settings(session_id).system_prompt if session_id is not None else None
        return own if own is not None else default

    def profile(self, session_id: int | None, default: Profile) -> Profile:
        """The session's own profile, else ``default``: also when an imported file names one this
        version does not know."""
        own = self.settings(session_id).profile if session_id is not None else None
        return profile_named(own) if own in set(ProfileName) else default

    def update_settings(self, session_id: int, settings: SessionSettings) -> None:
        """Store the session's own settings."""
        self.store.update_session_settings(session_id, settings)
        self._settings[session_id] = settings

    def decisions(self, session_id: int) -> list[str]:
        """The curator's decision log of the session (its one-line notes, oldest first); read from
        the store once, with the run of fallbacks it ends with."""
        found = self._decisions.get(session_id)
        if found is None:
            from engine.advice.advice import DECISIONS_SHOWN, AdviceSource

            every = self.store.ledger(session_id, target="curator")
            entries = every[-DECISIONS_SHOWN:]
            found = self._decisions[session_id] = [f"turn {e.turn}: {e.reason}" for e in entries]
            run = 0
            while run < len(every) and every[-1 - run].action == AdviceSource.FALLBACK:
                run += 1
            self._fallbacks[session_id] = run
        return found

    def note_advice(self, session_id: int, guidance: Guidance, turn: int, usage: CallUsage) -> Guidance:
        """Note the curator's checked answer for ``turn``: its line in the decision log, its cost,
        and a failure that recurs told with its count (the panel says it once, not as news)."""
        from engine.advice.advice import AdviceSource

        decisions = self.decisions(session_id)
        run = self._fallbacks.get(session_id, 0) + 1 if guidance.source is AdviceSource.FALLBACK else 0
        self._fallbacks[session_id] = run
        if run > 1:
            guidance = replace(guidance, repeats=run)
        self.guidance[session_id] = guidance
        decisions.append(f"turn {turn}: {guidance.note}")
        self.spend(session_id, usage)
        return guidance

    def tally(self, session_id: int) -> CallTally:
        """The session's curation calls so far (read from the store once). A racy sum is harmless:
        :class:`CallTally` adds are single assignments."""
        found = self._tallies.get(session_id)
        if found is None:
            found = self._tallies[session_id] = CallTally(self.store.curation_calls(session_id))
        return found

    def spend(self, session_id: int, usage: CallUsage) -> None:
        """Account for curation calls made for the session (counted now, kept in the store)."""
        self.tally(session_id).add(usage)
        if usage.calls:
            self.store.add_curation_calls(session_id, usage)

    def calls(self, session_id: int | None, price: Price | None) -> CallsReport | None:
        """What the panel shows of the session's curation calls; None when there have been none."""
        tally = self.tally(session_id) if session_id is not None else None
        report = tally.report(price) if tally is not None else None
        return report if report is not None and report.session.calls else None
