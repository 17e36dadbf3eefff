"""Each session's curation, built from the store on first use and kept in step after.

Used from worker threads; the cache owns its lock. A curation is reached only inside ``with
curations.held(session_id) as held:`` or through an operation that takes the lock itself (``evict``,
``take``, ``preview``, ``brief``): a pin never interleaves with a turn's plan, and no caller has a lock
to remember. Each curation is given its memory section when built and when memories change."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from engine.advice.calls import CallsReport, CallTally, CallUsage, Price
from engine.chat import BuildProgress, HistoryCut, SessionSettings, StoredMessage
from engine.curation.budget import DEFAULT_PROFILE, Profile, ProfileName
from engine.curation.build import Build, grow
from engine.curation.cold_store import ColdStore
from engine.curation.model_books import equip_model_books
from engine.curation.pins import DEFAULT_PIN_LIMIT
from engine.curation.prompt import in_conversation
from engine.curation.session_notes import SessionNotes
from engine.protocols.memory import MemorySource
from engine.protocols.models import TokenCounter
from engine.protocols.store import ChatStore
from engine.summaries.model import SummaryLevel

if TYPE_CHECKING:  # the curation engine is imported on first use, in a worker thread
    from engine.advice.advice import AdviceOutcome, CuratorBrief
    from engine.advice.rules import Guidance
    from engine.curation.cold_recall import ColdCandidates
    from engine.curation.context_view import ContextView
    from engine.curation.dense import Meaning
    from engine.curation.items import Item
    from engine.curation.result import CurationDelta
    from engine.curation.session_curation import SessionCuration


CURATED_LIMIT = 1_000
"""The most messages of a session curated (held in memory, scored, sent from): its latest; the ones
before stay in the store, shown and searchable, recalled from it (engine.curation.cold_recall) and
told in the story so far (engine.summaries.story_earlier): memory does not grow with the session."""
RECUT = 2
"""A session grown in use past this many times :data:`CURATED_LIMIT` is read again in the
background, its latest curated: memory stays bounded however long it is used in one sitting."""
BUILD_CHUNK = 500
"""The latest messages of a long session curated before its first use; the rest are read in a
thread (see :mod:`engine.curation.build`), and a request meanwhile is planned from those read so far."""
KEPT_CURATIONS = 2
"""Curations kept built (the open session's and the one before): the rest are rebuilt when needed."""


class SessionCurations:
    """The curations of the sessions in use, and the one lock over them (see the module)."""

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
        self.memory_source = memory
        """Gives each session's prompt its memory section; None: prompts carry none."""
        self._lock = threading.Lock()
        """Held around every use of a curation or of :attr:`_notes`; not reentrant."""
        self._cached: dict[int, SessionCuration] = {}
        self._notes = SessionNotes(store)
        self._builds: dict[int, Build] = {}
        """The sessions whose curation is being read in the background (see engine.curation.build)."""
        self.model_writes_summaries = False
        """A model writes the summaries (brief ones under the cost profile); False: offline ones."""
        self.price: Price | None = None
        """What the curation model's tokens cost, when known (for the panel's estimate)."""
        self.pin_limit = DEFAULT_PIN_LIMIT
        """Share of the budget pins may take before another pin asks first (engine.curation.pins)."""
        self.meaning: Meaning | None = None
        """Recall by meaning (engine.curation.dense), taken up by each curation at its next use;
        None: words alone."""
        self.incremental = True
        """A long session's curation is read in the background, its latest messages first, and
        used meanwhile; False: built whole before its first use."""

    @contextmanager
    def held(self, session_id: int) -> Iterator[HeldSession]:
        """The session's curation and what is kept of it, under the lock for the ``with`` block."""
        with self._lock:
            held = HeldSession(self, session_id)
            try:
                yield held
            finally:
                held.open = False

    def evict(self, session_id: int) -> None:
        """Drop the session's cached curation: the next use rebuilds it from the store."""
        with self._lock:
            self._evict(session_id)

    def take(self, session_id: int, message: StoredMessage) -> None:
        """Add a message just stored to the session's curation, if that is built and lacks it."""
        with self._lock:
            self._take(session_id, message)

    def preview(self, session_id: int | None) -> ContextView:
        """What the context would look like if the last user message were sent now (changes nothing)."""
        with self._lock:
            return self._preview(session_id)

    def brief(self, session_id: int) -> CuratorBrief | None:
        """What the curator model is asked about the last message; None when all of it fits the budget."""
        with self._lock:
            from engine.advice.brief import brief_for

            curation = self._get(session_id)
            new = curation.last_user()
            system_prompt = self._notes.system_prompt(session_id, self.system_prompt)
            if new is None or curation.fits_verbatim(new, system_prompt=system_prompt):
                return None
            return brief_for(curation, new, self._notes.decisions(session_id))

    def refresh_memory(self) -> None:
        """The memories changed (assessed, edited, deleted, expired): cached curations take them up."""
        with self._lock:
            for session_id, curation in self._cached.items():
                self._give_memory(curation, session_id)

    def building(self, session_id: int) -> BuildProgress | None:
        """How far the session's curation has been read, while it is; read without the lock (the UI)."""
        curation = self._cached.get(session_id)
        return curation.building if curation is not None else None

    def spend(self, session_id: int, usage: CallUsage) -> None:
        """Account for curation calls made for the session (counted now, kept in the store)."""
        self._notes.spend(session_id, usage)

    def build_changes(self, session_id: int, build: Build) -> int | None:
        """The changes made to the curation ``build`` reads again; None once it is not wanted."""
        with self._lock:
            return build.changes if self._builds.get(session_id) is build else None

    def adopt_built(
        self,
        session_id: int,
        build: Build,
        curation: SessionCuration,
        progress: BuildProgress | None,
        seen: int,
    ) -> bool:
        """Put a curation read in the background in the session's place; whether ``build`` goes on."""
        from engine.curation.stored import catch_up

        with self._lock:
            if self._builds.get(session_id) is not build or self._cached.get(session_id) is None:
                self._builds.pop(session_id, None)
                return False
            if build.changes != seen:
                catch_up(curation, self.store, session_id, counter=self.counter)
            curation.state.building = progress
            self._give_memory(curation, session_id)
            self._cached[session_id] = curation  # keeping its place among those kept
            self._equip(curation, session_id)
            if progress is None:
                del self._builds[session_id]
            return progress is not None

    def end_build(self, session_id: int, build: Build) -> None:
        """``build`` failed: the part read stays in use, no longer said to be growing."""
        with self._lock:
            found = self._cached.get(session_id)
            if self._builds.pop(session_id, None) is build and found is not None:
                found.state.building = None

    def read(self, session_id: int, cut: HistoryCut | None, *, earlier: bool = True) -> SessionCuration:
        """The session's curation after ``cut``, read from the store (no one's until adopted); with
        the standing instructions and the story of the messages before the cut unless ``earlier``
        is False."""
        from engine.curation.stored import read_session

        return read_session(
            self.store,
            session_id,
            cut,
            window=self.window(),
            counter=self.counter,
            profile=self._notes.profile(session_id, self.profile),
            earlier=earlier,
        )

    def _get(self, session_id: int) -> SessionCuration:
        """The session's curation, rebuilt from the store if it is not cached (see :attr:`incremental`)."""
        curation = self._cached.pop(session_id, None)
        if curation is None:
            curation = self._open(session_id)
        else:
            curation.fit_window(self.window())  # the server may have said the window is smaller
        self._cached[session_id] = curation  # the most recently used last
        for stale in list(self._cached)[:-KEPT_CURATIONS]:
            del self._cached[stale]
            self._builds.pop(stale, None)
        self._equip(curation, session_id)
        return curation

    def _open(self, session_id: int) -> SessionCuration:
        """A session's curation built now: whole, or its latest :data:`BUILD_CHUNK` and a thread."""
        chunk = BUILD_CHUNK
        first = (
            self.store.history_cut(session_id, chunk) if self.incremental and chunk < CURATED_LIMIT else None
        )
        if first is None:
            curation = self.read(session_id, self.store.history_cut(session_id, CURATED_LIMIT))
            self._give_memory(curation, session_id)
            return curation
        # The first part answers at once; the standing instructions and story before it come with the build.
        curation = self.read(session_id, first, earlier=False)
        self._give_memory(curation, session_id)
        whole = self.store.history_cut(session_id, CURATED_LIMIT)
        total = CURATED_LIMIT if whole is not None else first.earlier + chunk
        curation.state.building = BuildProgress(chunk, total)
        self._build(session_id, total, chunk)
        return curation

    def _build(self, session_id: int, total: int, read: int) -> None:
        """Read the session's curation again in a thread, from ``read`` of its latest messages on."""
        self._builds[session_id] = build = Build(total, CURATED_LIMIT)
        threading.Thread(
            target=grow, args=(self, session_id, build, read), name="curation-build", daemon=True
        ).start()

    def _changed(self, session_id: int) -> None:
        """The curation changed: the one read in the background catches up before taking its place."""
        build = self._builds.get(session_id)
        if build is not None:
            build.changes += 1

    def _equip(self, curation: SessionCuration, session_id: int) -> None:
        """Give the curation the pin limit and the model's summaries (those stored, and a book of
        those wanted), or take them away when the model in use writes none: it must not wait for
        one that will never come."""
        cost = self._notes.profile(session_id, self.profile).name == ProfileName.COST
        level = SummaryLevel.BRIEF if cost else SummaryLevel.DETAILED
        equip_model_books(curation.state, self.store, session_id, level, writes=self.model_writes_summaries)
        curation.state.pin_limit = self.pin_limit
        state = curation.state
        state.dense = self.meaning.index(state.dense) if self.meaning is not None else None

    def _take(self, session_id: int, message: StoredMessage) -> None:
        """(A curation rebuilt from the store after the message was written read it there already.)"""
        self._changed(session_id)
        curation = self._cached.get(session_id)
        if curation is not None and in_conversation(message) and message.id not in curation.by_id:
            curation.add_message(
                message.id, message.role, message.content, message.tokens or 0, digest=message.is_digest
            )
            if len(curation.items) > RECUT * CURATED_LIMIT and session_id not in self._builds:
                self._build(session_id, CURATED_LIMIT, CURATED_LIMIT)  # its latest read again

    def _evict(self, session_id: int) -> None:
        self._cached.pop(session_id, None)
        self._builds.pop(session_id, None)

    def _earlier_candidates(self, session_id: int, curation: SessionCuration, new: Item) -> ColdCandidates:
        """The messages before the curated cut that may answer ``new`` (see engine.curation.cold_recall)."""
        from engine.curation.cold_recall import earlier_candidates

        return earlier_candidates(self.recall, self.counter, session_id, curation, new)

    def _give_memory(self, curation: SessionCuration, session_id: int | None) -> None:
        if self.memory_source is not None:
            from engine.memory.memories import memory_budget

            budget = memory_budget(curation.budget.tokens)
            curation.set_memory(self.memory_source.section_for(session_id, budget))

    def _preview(self, session_id: int | None) -> ContextView:
        from engine.curation.cold_recall import NONE
        from engine.curation.preview import preview_view
        from engine.curation.session_curation import SessionCuration

        if session_id is None:
            curation = SessionCuration(window=self.window(), counter=self.counter, profile=self.profile)
            self._give_memory(curation, None)
            return preview_view(
                curation, system_prompt=self.system_prompt, guidance=None, cold=lambda _: NONE, calls=None
            )
        curation = self._get(session_id)
        return preview_view(
            curation,
            system_prompt=self._notes.system_prompt(session_id, self.system_prompt),
            guidance=self._notes.guidance.get(session_id),
            cold=lambda new: self._earlier_candidates(session_id, curation, new),
            calls=self._notes.calls(session_id, self.price),
        )


class HeldSession:
    """A session's curation and notes while :meth:`SessionCurations.held` holds the lock, no longer."""

    def __init__(self, curations: SessionCurations, session_id: int) -> None:
        self._curations = curations
        self.session_id = session_id
        self.open = True
        self._curation: SessionCuration | None = None

    def _owner(self) -> SessionCurations:
        if not self.open:
            raise RuntimeError("a held curation was used after its with-block ended")
        return self._curations

    @property
    def curation(self) -> SessionCuration:
        """The session's curation (built from the store if it is not cached)."""
        owner = self._owner()
        if self._curation is None:
            self._curation = owner._get(self.session_id)
        return self._curation

    @property
    def cached(self) -> SessionCuration | None:
        """The session's curation if it is built (to keep it in step), else None."""
        return self._owner()._cached.get(self.session_id)

    @property
    def settings(self) -> SessionSettings:
        """The session's own settings (each None: the config's)."""
        return self._owner()._notes.settings(self.session_id)

    @property
    def system_prompt(self) -> str:
        """The session's system prompt, or the config's."""
        owner = self._owner()
        return owner._notes.system_prompt(self.session_id, owner.system_prompt)

    @property
    def guidance(self) -> Guidance | None:
        """The curator's last advice for the session (a request planned again is planned with it)."""
        return self._owner()._notes.guidance.get(self.session_id)

    @property
    def tally(self) -> CallTally:
        """The session's curation calls so far."""
        return self._owner()._notes.tally(self.session_id)

    def calls(self) -> CallsReport | None:
        """What the panel shows of the session's curation calls; None when there have been none."""
        owner = self._owner()
        return owner._notes.calls(self.session_id, owner.price)

    def judge(self, outcome: AdviceOutcome, new_id: int) -> Guidance:
        """The curator's answer checked against the session; its cost and decision-log line noted."""
        curation = self.curation
        new = curation.by_id[new_id]
        guidance = curation.judge(outcome, new)
        return self._owner()._notes.note_advice(self.session_id, guidance, new.turn, outcome.usage)

    def earlier_candidates(self, new: Item) -> ColdCandidates:
        """The messages before the curated cut that may answer ``new`` (none for a session curated whole)."""
        return self._owner()._earlier_candidates(self.session_id, self.curation, new)

    def save(self, delta: CurationDelta) -> None:
        """Write a change of the session's curation to the store (see :func:`engine.curation.stored.save`)."""
        from engine.curation.stored import save

        owner, curation = self._owner(), self._curation or self.cached
        assert curation is not None, "a delta comes from the held curation"
        owner._changed(self.session_id)
        save(owner.store, self.session_id, curation, delta)

    def preview(self) -> ContextView:
        """What the context would look like if the last user message were sent now."""
        return self._owner()._preview(self.session_id)

    def take(self, message: StoredMessage) -> None:
        """Add a message just stored to the session's curation, if that is built and lacks it."""
        self._owner()._take(self.session_id, message)

    def evict(self) -> None:
        """Drop the cached curation: the next use rebuilds it from the store."""
        self._owner()._evict(self.session_id)
        self._curation = None

    def update_settings(self, settings: SessionSettings) -> None:
        """Store the session's own settings; its curation is rebuilt under them."""
        owner = self._owner()
        owner._notes.update_settings(self.session_id, settings)
        self.evict()
