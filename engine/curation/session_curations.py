"""Each session's curation, built from the store on first use and kept in step after.

Shared by the turn pipeline (:mod:`engine.turn.service`) and the user's own context actions
(:mod:`engine.curation.context_service`). Curations are used from worker threads: callers hold :attr:`lock`
around every use, so a pin never interleaves with a turn's planning.

With a :class:`engine.protocols.memory.MemorySource`, each curation is given its memory section (memories
of earlier sessions) when it is built, and again when the memories change (:meth:`refresh_memory`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from engine.advice.calls import CallsReport, CallTally, CallUsage, Price
from engine.chat import BuildProgress, HistoryCut, SessionSettings, StoredMessage
from engine.curation.budget import DEFAULT_PROFILE, Profile, ProfileName, profile_named
from engine.curation.build import Build, grow
from engine.curation.cold_store import ColdStore
from engine.curation.pins import DEFAULT_PIN_LIMIT
from engine.curation.prompt import MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, in_conversation
from engine.protocols.memory import MemorySource
from engine.protocols.models import TokenCounter
from engine.protocols.store import ChatStore
from engine.summaries.model import SummaryLevel

if TYPE_CHECKING:
    # The curation engine is imported on first use, in a worker thread: the first screen should
    # not wait for its entity patterns to compile.
    from engine.advice.advice import AdviceOutcome, CuratorBrief
    from engine.advice.rules import Guidance
    from engine.curation.context_view import ContextView
    from engine.curation.items import Item
    from engine.curation.result import CurationDelta
    from engine.curation.session_curation import SessionCuration
    from engine.text.analysis import Analysis


CURATED_LIMIT = 10_000
"""The most messages of a session curated (held in memory, scored, sent from): its latest. The ones
before stay in the store, shown and searchable, and the panel says so. Building a session's
curation takes time in proportion to its length, before its first request can be sent: this many
keep that to a few seconds when none of them has been analysed yet (a session just imported)."""
BUILD_CHUNK = 500
"""The latest messages of a long session curated before its first use; the rest are read in a
thread (see :mod:`engine.curation.build`), and a request meanwhile is planned from those read so far."""
REBUILD_PAGE = 500
"""Messages read at a time when a session's curation is rebuilt."""
KEPT_CURATIONS = 2
"""Curations kept built: the open session's and the one open before it, so switching back and
forth is instant. Each is rebuilt from the store when needed again, in a worker; kept without
limit, every long session looked at stayed in memory until the app quit."""


class SessionCurations:
    def __init__(
        self,
        store: ChatStore,
        counter: TokenCounter,
        *,
        window: Callable[[], int],
        system_prompt: str,
        profile: Profile = DEFAULT_PROFILE,
        memory: MemorySource | None = None,
        recall: ColdStore | None = None,
    ) -> None:
        self.store = store
        self.recall = recall
        """Where the messages before a long session's cut are found again (see
        engine.curation.cold_recall); None: requests recall only curated messages."""
        self.counter = counter
        self.window = window
        """The model's context window (asked each time: the model can change)."""
        self.system_prompt = system_prompt
        self.profile = profile
        self.memory = memory
        """Gives each session's prompt its memory section; None: prompts carry none."""
        self.lock = threading.Lock()
        self._cached: dict[int, SessionCuration] = {}
        self._settings: dict[int, SessionSettings] = {}
        self.model_summaries = False
        """A model writes the summaries (brief ones under the cost profile); False: offline ones."""
        self.price: Price | None = None
        """What the curation model's tokens cost, when known (for the panel's estimate)."""
        self.pin_limit = DEFAULT_PIN_LIMIT
        """Share of the budget pins may take before another pin asks first (engine.curation.pins)."""
        self.guidance: dict[int, Guidance] = {}
        """Each session's last curator advice: previews of the same request are planned with it."""
        self._decisions: dict[int, list[str]] = {}
        self._fallbacks: dict[int, int] = {}
        """Each session's turns in a row, up to the last, on which the curator gave no advice."""
        self._tallies: dict[int, CallTally] = {}
        self.incremental = True
        """A long session's curation is read in the background, its latest messages first, and
        used meanwhile; False: built whole before its first use."""
        self.builds: dict[int, Build] = {}
        """The sessions whose curation is being read in the background (see engine.curation.build)."""

    # --- per-session settings (each falls back to the config's) -----------------------------------

    def settings(self, session_id: int) -> SessionSettings:
        """The session's own settings, read once from the store. Hold :attr:`lock`."""
        found = self._settings.get(session_id)
        if found is None:
            found = self._settings[session_id] = self.store.session_settings(session_id)
        return found

    def system_prompt_for(self, session_id: int | None) -> str:
        """The session's system prompt, or the config's. Hold :attr:`lock`."""
        own = self.settings(session_id).system_prompt if session_id is not None else None
        return own if own is not None else self.system_prompt

    def profile_for(self, session_id: int | None) -> Profile:
        """The session's curation profile, or the config's. Hold :attr:`lock`."""
        own = self.settings(session_id).profile if session_id is not None else None
        # An imported file may name a profile this version does not know: the config's then.
        return profile_named(own) if own in set(ProfileName) else self.profile

    def update_settings(self, session_id: int, settings: SessionSettings) -> None:
        """Store the session's own settings; its curation is rebuilt under them. Hold :attr:`lock`."""
        self.store.update_session_settings(session_id, settings)
        self._settings[session_id] = settings
        self.forget(session_id)

    def get(self, session_id: int) -> SessionCuration:
        """The session's curation, rebuilt from the store if it is not cached (a long session's
        from its latest messages, the rest read in the background: see :attr:`incremental`).
        Hold :attr:`lock`."""
        curation = self._cached.pop(session_id, None)
        if curation is None:
            curation = self._open(session_id)
        else:
            curation.fit_window(self.window())  # the server may have said the window is smaller
        self._cached[session_id] = curation  # the most recently used last
        for stale in list(self._cached)[:-KEPT_CURATIONS]:
            del self._cached[stale]
            self.builds.pop(stale, None)
        self._fit_summaries(curation, session_id)
        curation.state.pin_limit = self.pin_limit
        return curation

    def _open(self, session_id: int) -> SessionCuration:
        """A session's curation built now: whole, or, for one longer than :data:`BUILD_CHUNK`
        messages, its latest ones, with a thread reading the rest."""
        chunk = BUILD_CHUNK
        first = (
            self.store.history_cut(session_id, chunk) if self.incremental and chunk < CURATED_LIMIT else None
        )
        if first is None:
            curation = self.read(session_id, self.store.history_cut(session_id, CURATED_LIMIT))
            self._give_memory(curation, session_id)
            return curation
        curation = self.read(session_id, first)
        self._give_memory(curation, session_id)
        whole = self.store.history_cut(session_id, CURATED_LIMIT)
        total = CURATED_LIMIT if whole is not None else first.earlier + chunk
        build = Build(total, CURATED_LIMIT)
        curation.state.building = BuildProgress(chunk, total)
        self.builds[session_id] = build
        threading.Thread(
            target=grow, args=(self, session_id, build, chunk), name="curation-build", daemon=True
        ).start()
        return curation

    def read(self, session_id: int, cut: HistoryCut | None) -> SessionCuration:
        """The session's curation of its messages after ``cut``, read from the store. Needs no lock."""
        from engine.curation.state import rebuild
        from engine.text.analysis import ANALYSIS_VERSION

        after = cut.after if cut is not None else 0
        curation = rebuild(
            self._history(session_id, after),
            self.store.load_curation(session_id, after=after),
            window=self.window(),
            counter=self.counter,
            profile=self.profile_for(session_id),
            text_source=self.store.message_text,
            cut=cut,
        )
        # Analysed now (a session from before analyses were stored, or edited since): kept
        # so that the next opening reads them.
        self.store.save_analyses(ANALYSIS_VERSION, curation.take_unstored())
        return curation

    def adopt(self, session_id: int, curation: SessionCuration) -> None:
        """Put a curation read in the background in the place of the session's (keeping its place
        among those kept). Hold :attr:`lock`."""
        self._give_memory(curation, session_id)
        self._cached[session_id] = curation
        self._fit_summaries(curation, session_id)
        curation.state.pin_limit = self.pin_limit

    def changed(self, session_id: int) -> None:
        """The session's curation was changed (a plan applied, a message taken): the one being read
        in the background catches up with the store before it takes its place. Hold :attr:`lock`."""
        build = self.builds.get(session_id)
        if build is not None:
            build.changes += 1

    def save(self, session_id: int, curation: SessionCuration, delta: CurationDelta) -> None:
        """Write a change of the session's curation to the store (see
        :func:`engine.curation.state.save`). Hold :attr:`lock`."""
        from engine.curation.state import save

        self.changed(session_id)
        save(self.store, session_id, curation, delta)

    def building(self, session_id: int) -> BuildProgress | None:
        """How far the session's curation has been read, while it is being read; else None."""
        curation = self._cached.get(session_id)
        return curation.building if curation is not None else None

    def _fit_summaries(self, curation: SessionCuration, session_id: int) -> None:
        """Give the curation the model's summaries (those stored, and a book of those wanted), or
        take them away when the model in use writes none: it must not wait for one that will
        never come."""
        cost = self.profile_for(session_id).name == ProfileName.COST
        level = SummaryLevel.BRIEF if cost else SummaryLevel.DETAILED
        book = curation.model_summaries
        if not self.model_summaries:
            curation.state.model_summaries = None
        elif book is None or book.level is not level:
            from engine.summaries.book import SummaryBook

            book = curation.state.model_summaries = SummaryBook(level)
            book.load(self.store.load_summaries(session_id))

    def _history(self, session_id: int, after: int) -> Iterator[tuple[StoredMessage, Analysis | None]]:
        """The session's messages after message ``after`` with their stored analyses, read a part
        at a time: a long session's text and analyses read at once stayed in the process's memory
        after the rebuild."""
        from engine.text.analysis import ANALYSIS_VERSION

        while page := self.store.messages_after(session_id, after, limit=REBUILD_PAGE):
            analyses = self.store.load_analyses(session_id, ANALYSIS_VERSION, after=after, upto=page[-1].id)
            for message in page:
                yield message, analyses.get(message.id)
            after = page[-1].id

    def decisions(self, session_id: int) -> list[str]:
        """The curator's decision log of the session (its one-line notes, oldest first); read from
        the store once, with the run of fallbacks it ends with. Hold :attr:`lock`."""
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

    def tally(self, session_id: int) -> CallTally:
        """The session's curation calls so far (read from the store once). Hold :attr:`lock` or
        accept a racy sum: :class:`CallTally` adds are single assignments."""
        found = self._tallies.get(session_id)
        if found is None:
            found = self._tallies[session_id] = CallTally(self.store.curation_calls(session_id))
        return found

    def spend(self, session_id: int, usage: CallUsage) -> None:
        """Account for curation calls made for the session (counted now, kept in the store)."""
        self.tally(session_id).add(usage)
        if usage.calls:
            self.store.add_curation_calls(session_id, usage)

    def calls(self, session_id: int | None) -> CallsReport | None:
        """What the panel shows of the session's curation calls; None when there have been none."""
        tally = self.tally(session_id) if session_id is not None else None
        report = tally.report(self.price) if tally is not None else None
        return report if report is not None and report.session.calls else None

    def take(self, session_id: int, message: StoredMessage) -> None:
        """Add a message just stored to the session's curation, if that is built and lacks it.
        Hold :attr:`lock`.

        A curation rebuilt from the store after the message was written (the session let go and
        opened again meanwhile, by another worker) read it there already.
        """
        self.changed(session_id)
        curation = self._cached.get(session_id)
        if curation is not None and in_conversation(message) and message.id not in curation.by_id:
            curation.add_message(
                message.id, message.role, message.content, message.tokens or 0, digest=message.is_digest
            )

    def brief(self, session_id: int) -> CuratorBrief | None:
        """What the curator model is asked about the session's last message; None when the
        conversation fits the budget whole (nothing to forget: it is not asked). Hold :attr:`lock`."""
        from engine.advice.brief import brief_for

        curation = self.get(session_id)
        new = last_user_item(curation)
        if new is None or curation.fits_verbatim(new, system_prompt=self.system_prompt_for(session_id)):
            return None
        return brief_for(curation, new, self.decisions(session_id))

    def judge(self, session_id: int, outcome: AdviceOutcome, new_id: int) -> Guidance:
        """The curator's answer checked against the session; its cost and its line in the
        decision log noted. Hold :attr:`lock`."""
        from engine.advice.advice import AdviceSource

        curation = self.get(session_id)
        new = curation.by_id[new_id]
        guidance = curation.judge(outcome, new)
        # A failure that recurs is told with its count: the panel says it once, not as news.
        decisions = self.decisions(session_id)
        run = self._fallbacks.get(session_id, 0) + 1 if guidance.source is AdviceSource.FALLBACK else 0
        self._fallbacks[session_id] = run
        if run > 1:
            guidance = replace(guidance, repeats=run)
        self.guidance[session_id] = guidance
        decisions.append(f"turn {new.turn}: {guidance.note}")
        self.spend(session_id, outcome.usage)
        return guidance

    def cached(self, session_id: int) -> SessionCuration | None:
        """The session's curation if it is built (to keep it in step), else None. Hold :attr:`lock`."""
        return self._cached.get(session_id)

    def forget(self, session_id: int) -> None:
        """Drop the cached curation: the next use rebuilds it from the store. Hold :attr:`lock`."""
        self._cached.pop(session_id, None)
        self.builds.pop(session_id, None)

    def refresh_memory(self) -> None:
        """The memories changed (assessed, edited, deleted, expired): cached curations take them up.

        Takes :attr:`lock` itself.
        """
        with self.lock:
            for session_id, curation in self._cached.items():
                self._give_memory(curation, session_id)

    def earlier_candidates(self, session_id: int, curation: SessionCuration, new: Item) -> list[Item]:
        """The messages before the session's curated cut that may answer ``new``, read from the
        store for its plan (none for a session curated whole). Hold :attr:`lock`."""
        if self.recall is None or curation.cut is None:
            return []
        from engine.curation.cold_recall import ColdRecall

        return ColdRecall(self.recall, self.counter).candidates(
            session_id, curation.cut.after, new, curation.term_index
        )

    def new_session_memory_budget(self) -> int:
        """The tokens a new session's request gives its memory section (the config's profile, the
        current model's window)."""
        from engine.curation.budget import Budget
        from engine.memory.memories import memory_budget

        return memory_budget(Budget(self.window(), self.profile.budget_ratio).tokens)

    def _give_memory(self, curation: SessionCuration, session_id: int | None) -> None:
        if self.memory is not None:
            from engine.memory.memories import memory_budget

            budget = memory_budget(curation.budget.tokens)
            curation.set_memory(self.memory.section_for(session_id, budget))

    def preview(self, session_id: int | None) -> ContextView:
        """What the context would look like if the last user message were sent now (changes
        nothing the user sees; the next turn's summaries are written ahead meanwhile).

        Hold :attr:`lock`.
        """
        from engine.curation.context_building import build_view, empty_view
        from engine.curation.session_curation import SessionCuration

        if session_id is not None:
            curation = self.get(session_id)
        else:
            curation = SessionCuration(window=self.window(), counter=self.counter, profile=self.profile)
            self._give_memory(curation, None)
        new = last_user_item(curation)
        system_prompt = self.system_prompt_for(session_id)
        if new is None:
            system = self.counter.count(system_prompt) + MESSAGE_OVERHEAD_TOKENS if system_prompt else 0
            memory = self.counter.count(curation.memory) + MESSAGE_OVERHEAD_TOKENS if curation.memory else 0
            return empty_view(curation, system + memory + REPLY_PRIMING_TOKENS)
        guidance = self.guidance.get(session_id) if session_id is not None else None
        cold = self.earlier_candidates(session_id, curation, new) if session_id is not None else []
        result = curation.plan(new, system_prompt=system_prompt, guidance=guidance, cold=cold)
        curation.prepare_summaries()
        return build_view(curation, result, new_id=new.id, calls=self.calls(session_id), upcoming=True)


def last_user_item(curation: SessionCuration) -> Item | None:
    return next((i for i in reversed(curation.items) if i.role == "user"), None)
