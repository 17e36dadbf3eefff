"""Between the engine's in-memory curation and the store's records: load a session, save a delta."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

from engine.chat import HistoryCut, StoredMessage
from engine.curation.budget import DEFAULT_PROFILE, Profile
from engine.curation.prompt import in_conversation
from engine.curation.result import CurationDelta
from engine.curation.session_curation import SessionCuration
from engine.entities.registry import EntityRecord
from engine.errors import StoreError
from engine.protocols.models import TokenCounter
from engine.protocols.store import ChatStore, CurationSnapshot, ItemRecord, StandingScan
from engine.standing.recognise import RECOGNISER_VERSION, SCAN_CHARS
from engine.summaries.story_earlier import NO_EARLIER, STORY_LIMIT, Earlier, Told, tell_earlier
from engine.text.analysis import ANALYSIS_VERSION, Analysis, term_counts

T = TypeVar("T")

REBUILD_PAGE = 500
"""Messages read at a time when a session's curation is rebuilt."""


def rebuild(
    history: Iterable[tuple[StoredMessage, Analysis | None]],
    snapshot: CurationSnapshot,
    *,
    window: int,
    counter: TokenCounter,
    profile: Profile = DEFAULT_PROFILE,
    budget_ratio: float | None = None,
    text_source: Callable[[int], str] | None = None,
    cut: HistoryCut | None = None,
    pinned_earlier: Sequence[tuple[StoredMessage, Analysis | None]] = (),
    said_earlier: Iterable[tuple[int, str]] = (),
    told_earlier: Iterable[tuple[StoredMessage, Mapping[str, int] | None]] = (),
    earlier: Earlier = NO_EARLIER,
) -> SessionCuration:
    """A session's curation from its stored messages and curation records.

    Indexes and turn numbers are derived again from the messages (they are cheap to compute and
    cannot go stale); states, pins, summaries and the consent policy come from the snapshot (the
    entities' verdicts are the caller's to load: :func:`read_session`). ``history`` is the
    session's messages in order, each with its stored analysis (entities, terms, role) or None;
    those without are read again from the text (and handed over by ``take_unstored``). With a
    ``text_source`` (the store), summarized and pruned items do not keep their texts (see
    :meth:`engine.curation.curation_state.CurationState.settle_text`). With a ``cut``,
    ``history`` starts after it and turns are numbered on from the turns before it; the messages the
    user pinned before it (``pinned_earlier``) come first: a pin holds whatever the message's age;
    so does a standing instruction in the user's messages before it (``said_earlier``: their ids
    and openings, in order), and the story tells the messages before it in ``told_earlier`` (in
    order, with their stored term counts: those ``earlier`` holds).
    """
    curation = SessionCuration(
        window=window, counter=counter, profile=profile, budget_ratio=budget_ratio, policy=snapshot.policy
    )
    curation.state.saved_in_session = snapshot.saved_tokens
    curation.state.text_source = text_source
    if cut is not None:
        curation.state.cut = cut
        # The pinned messages' turns are among those before the cut: the rest are numbered as before.
        pinned_turns = sum(m.role == "user" and in_conversation(m) for m, _ in pinned_earlier)
        curation.state.turn = cut.earlier_turns - pinned_turns
    for message_id, opening in said_earlier:
        curation.state.standing.observe(message_id, opening)
    if earlier:
        told = _told(told_earlier, earlier)
        curation.state.told_earlier = tell_earlier(curation.state.story, earlier, told)
    for message, analysis in itertools.chain(pinned_earlier, history):
        if not in_conversation(message):
            continue
        tokens = message.tokens if message.tokens is not None else counter.count(message.sent_text)
        item = curation.analyse(
            message.id, message.role, message.content, tokens, analysis=analysis, digest=message.is_digest
        )
        curation.add(item, log=False, stored=analysis is not None)
        record = snapshot.items.get(message.id)
        if record is not None:
            curation.load_record(record)
    return curation


def _told(
    messages: Iterable[tuple[StoredMessage, Mapping[str, int] | None]], earlier: Earlier
) -> Iterator[Told]:
    """The messages the story tells before the cut: in the conversation and not taken out."""
    for message, terms in messages:
        if in_conversation(message) and message.id in earlier:
            text = message.sent_text
            yield message.id, message.role, text, terms if terms is not None else term_counts(text)


def _load_entities(curation: SessionCuration, store: ChatStore, session_id: int) -> None:
    """The stored records of the entities the curation's messages mention: their verdicts onto
    its registry, and those unchanged marked as saved."""
    stored = store.load_entities(session_id, curation.registry.records)
    for record in stored:
        if record.state is not None:
            curation.registry.load_verdict(record.ref, record.state, record.reason)
    curation.mark_saved_entities(stored)


def catch_up(
    curation: SessionCuration, store: ChatStore, session_id: int, *, counter: TokenCounter, page: int = 500
) -> None:
    """Bring a curation read from the store (by :func:`rebuild`) up to what was written since:
    the messages after its last, and the stored states of its items and entities."""
    after = curation.cut.after if curation.cut is not None else 0
    last = curation.items[-1].id if curation.items else after
    while messages := store.messages_after(session_id, last, limit=page):
        for message in messages:
            if in_conversation(message) and message.id not in curation.by_id:
                tokens = message.tokens if message.tokens is not None else counter.count(message.sent_text)
                curation.add_message(
                    message.id, message.role, message.content, tokens, digest=message.is_digest
                )
        last = messages[-1].id
    snapshot = store.load_curation(session_id, after=after)
    for item_id, record in snapshot.items.items():
        if item_id in curation.by_id:
            curation.load_record(record)
    _load_entities(curation, store, session_id)
    curation.state.saved_in_session = snapshot.saved_tokens
    curation.state.policy = snapshot.policy


def read_session(
    store: ChatStore,
    session_id: int,
    cut: HistoryCut | None,
    *,
    window: int,
    counter: TokenCounter,
    profile: Profile,
    earlier: bool = True,
) -> SessionCuration:
    """The session's curation of its messages after ``cut``, read from the store; the analyses
    made now (a session from before analyses were stored, or edited since) are kept for the next.
    Unless ``earlier`` is False (a first part read to answer at once), what the messages before
    the cut say is read too: their standing instructions, and the story of the latest
    :data:`~engine.summaries.story_earlier.STORY_LIMIT` messages."""
    after = cut.after if cut is not None else 0
    pinned = store.pinned_before(session_id, after) if cut is not None else []
    said: Iterable[tuple[int, str]] = ()
    scan: StandingScan | None = None
    told = NO_EARLIER
    if cut is not None and earlier:
        with contextlib.suppress(StoreError):  # a damaged one is made again
            scan = store.standing_scan(session_id, RECOGNISER_VERSION)
        said = _openings(store, session_id, after, scan)
        story_cut = store.history_cut(session_id, STORY_LIMIT)
        told_from = story_cut.after if story_cut is not None else 0
        told = Earlier(told_from, after, frozenset(store.forgotten_between(session_id, told_from, after)))
    curation = rebuild(
        _history(store, session_id, after),
        store.load_curation(session_id, after=after),
        window=window,
        counter=counter,
        profile=profile,
        text_source=store.message_text,
        cut=cut,
        pinned_earlier=[(m, _stored_analysis(store, m)) for m in pinned],
        said_earlier=said,
        told_earlier=_earlier(store, session_id, told.after, told.upto),
        earlier=told,
    )
    _load_entities(curation, store, session_id)
    store.save_analyses(ANALYSIS_VERSION, curation.take_unstored())
    if cut is not None and earlier and (scan is None or scan.upto < after):
        found = StandingScan(after, curation.state.standing.stating(after))
        with contextlib.suppress(StoreError):  # a read-only database: the scan is made again next time
            store.save_standing_scan(session_id, RECOGNISER_VERSION, found)
    curation.set_keep_rules(store.keep_rules(session_id))
    curation.state.standing.set_edits(store.standing_edits(session_id))
    return curation


def _history(
    store: ChatStore, session_id: int, after: int
) -> Iterator[tuple[StoredMessage, Analysis | None]]:
    """The session's messages after message ``after`` with their stored analyses, read a page at a
    time: a long session's text and analyses read at once stayed in the process's memory."""
    return _pages(store, session_id, after, None, store.load_analyses)


def _earlier(
    store: ChatStore, session_id: int, after: int, upto: int
) -> Iterator[tuple[StoredMessage, Mapping[str, int] | None]]:
    """The session's messages in (``after``, ``upto``] with their stored term counts (what the
    story reads of the messages before the cut), a page at a time."""
    return _pages(store, session_id, after, upto, store.load_terms)


def _pages(
    store: ChatStore, session_id: int, after: int, upto: int | None, load: Callable[..., Mapping[int, T]]
) -> Iterator[tuple[StoredMessage, T | None]]:
    """Messages in (``after``, ``upto``] with what ``load`` gives of their stored analyses."""
    while upto is None or after < upto:
        page = store.messages_after(session_id, after, limit=REBUILD_PAGE, upto=upto)
        if not page:
            return
        stored = load(session_id, ANALYSIS_VERSION, after=after, upto=page[-1].id)
        for message in page:
            yield message, stored.get(message.id)
        after = page[-1].id


def _openings(
    store: ChatStore, session_id: int, upto: int, scan: StandingScan | None
) -> Iterator[tuple[int, str]]:
    """The openings of the session's user messages up to ``upto`` where standing instructions are
    recognised (engine.standing.recognise), a page at a time: of those a stored ``scan`` found to
    state one, then of every one after what it read."""
    said = [message_id for message_id in scan.said if message_id <= upto] if scan is not None else []
    for start in range(0, len(said), REBUILD_PAGE):
        yield from store.openings(session_id, said[start : start + REBUILD_PAGE], chars=SCAN_CHARS)
    after = scan.upto if scan is not None else 0
    while after < upto and (
        page := store.user_openings(session_id, after=after, upto=upto, chars=SCAN_CHARS, limit=REBUILD_PAGE)
    ):
        yield from page
        after = page[-1][0]


def _stored_analysis(store: ChatStore, message: StoredMessage) -> Analysis | None:
    found = store.load_analyses(message.session_id, ANALYSIS_VERSION, after=message.id - 1, upto=message.id)
    return found.get(message.id)


def save(store: ChatStore, session_id: int, curation: SessionCuration, delta: CurationDelta) -> None:
    """Write a delta (state changes, entity records and ledger entries) in one store transaction,
    and the analyses of messages added since the last save."""
    store.save_analyses(ANALYSIS_VERSION, curation.take_unstored())
    store.save_curation(
        session_id,
        items=[
            ItemRecord(i.id, i.state, i.pinned, i.kept_by_user, i.summary, i.forgotten) for i in delta.items
        ],
        entities=_entity_records(curation, delta.entities),
        ledger=delta.ledger,
        policy=delta.policy,
        policy_changed=delta.policy_changed,
        saved_tokens=delta.saved_tokens,
    )


def _entity_records(curation: SessionCuration, refs: Sequence[str]) -> list[EntityRecord]:
    return [curation.registry.records[ref] for ref in refs if ref in curation.registry.records]
