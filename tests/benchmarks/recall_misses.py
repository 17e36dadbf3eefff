"""Why evidence was not sent: every missed evidence message of the LoCoMo and BEAM dev probes.

Replays each transcript in-process as ``heedful replay`` does (same store, same plans; probes
planned after the whole conversation), then for each evidence message a probe's context does not
carry verbatim prints: its probe's category, role and size, its state at probe time (active,
summarized, pruned) and whether the summary section or the story names it, its rank by worth
(score per square root of cost) among what could be sent against the last rank sent, the words
and entities it shares with the probe, its relevance from words (and with embeddings on, its
similarity rank), its distance in messages from the nearest message the probe's words point to,
and a reason:

- ``no shared word or entity``: nothing of the probe's in it; only meaning or neighbours can find it;
- ``only a speaker's name``: the one word it shares is who speaks (LoCoMo's names), said by half
  the conversation;
- ``weak words``: it shares words, but its word relevance is under a tenth of the best match's;
- ``not eligible``: summarized or pruned and not named or beside a named message (never sent back);
- ``below the cut``: eligible and scored, ranked past what the room holds;
- ``too big``: costs more than the room left when its rank came.

Per category it then counts the reasons, and the probes whose evidence alone exceeds the budget.

    .venv/bin/python tests/benchmarks/recall_misses.py [--data locomo|beam|both] [--embeddings off|local]
        [--rows]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, when run as a script

from cli.replay import _use_embeddings  # the replay's own way of turning embeddings on
from engine.curation.budget import profile_named
from engine.curation.choosing import worth
from engine.curation.consent import ConsentChoice
from engine.curation.items import Item, ItemState
from engine.curation.result import CurationResult, cost
from engine.curation.scoring import ScoreTable
from engine.curation.session_curation import SessionCuration
from engine.curation.stored import save
from engine.text.terms import terms
from engine.text.tokens import load_counter
from sessions.store import SqliteChatStore
from sessions.transcript import read_transcript
from tests.benchmarks.locomo_recall import CATEGORIES
from tests.benchmarks.replay_probes import SHARED_DATA, transcripts

WINDOWS = {"locomo-dev": 8000, "beam-dev": 131_072}
WEAK = 0.1
NEAR = 0.3
"""Word relevance from which a message counts as one the probe's words point to (for distance)."""


@dataclass
class Miss:
    probe: str
    category: str
    evidence: str
    role: str
    tokens: int
    state: str
    named_in: str
    rank: str
    cut: int
    shared_words: int
    shared_entities: int
    wording: float
    dense_rank: str
    distance: str
    reason: str


def category_of(probe: dict[str, object], dataset: str) -> str:
    raw = str(probe.get("category", "all"))
    return CATEGORIES.get(raw, raw) if dataset == "locomo-dev" else raw


def replay_curation(
    transcript: Path, window: int, embeddings: str, store: SqliteChatStore
) -> SessionCuration:
    """The transcript fed through a curation as ``heedful replay`` feeds it (consent: summarize)."""
    counter = load_counter("", model_is_offline=True)
    curation = SessionCuration(
        window=window,
        counter=counter,
        profile=profile_named("balanced"),
        budget_ratio=None,
        policy=ConsentChoice("summarize"),
    )
    _use_embeddings(curation, embeddings, None, "")
    session = store.create_session(f"misses of {transcript.name}")
    for message in read_transcript(transcript):
        if not message.in_conversation:
            continue
        tokens = counter.count(message.content)
        stored = store.add_message(session.id, message.role, message.content, tokens=tokens)
        item = curation.add_message(
            stored.id, message.role, message.content, tokens, name=message.name, label=message.id
        )
        if message.role == "user":
            save(store, session.id, curation, curation.apply(curation.plan(item)))
    return curation


@dataclass
class Probed:
    """What one probe's plan did: what it sent, named, ranked, and what its words point to."""

    sent: set[int]
    summarized: set[int]
    storied: set[int]
    rank_of: dict[int, int]
    cut: int
    new_terms: set[str]
    new_refs: frozenset[str]
    pointed: list[int]
    dense_rank: dict[int, int]
    speakers: set[str]
    """The terms of the speakers' names."""
    sent_tokens: dict[str, int]
    """Tokens of the earlier messages sent verbatim, by role."""


def misses_of(
    curation: SessionCuration, probe: dict[str, object], number: int, category: str, texts: dict[str, str]
) -> tuple[list[Miss], int, int, dict[str, int]]:
    """The probe's missed evidence, how much evidence it asked and found verbatim, and the tokens
    of the earlier messages it sent verbatim by role."""
    state = curation.state
    content = str(probe["content"])
    new = curation.analyse(-number, "user", content, state.counter.count(content))
    planned: CurationResult = curation.plan(new)
    scores = planned.scores
    assert isinstance(scores, ScoreTable)
    threshold = state.profile.recall_threshold
    named, beside = scores.named(threshold), scores.beside(threshold)
    # What choosing ranks (engine.curation.choosing.choose): summarized or pruned items only when
    # named or beside a named one.
    eligible = [
        i
        for i in (state.by_id[k] for k in scores if k in state.by_id)
        if not i.forgotten
        and (i.id in named or (i.role != "tool" and (i.state is ItemState.ACTIVE or i.id in beside)))
    ]
    eligible.sort(key=lambda i: (worth(scores.total[i.id], i.tokens), i.position), reverse=True)
    sent = {s for m in planned.messages if m.form == "verbatim" for s in m.sources}
    rank_of = {item.id: n for n, item in enumerate(eligible, start=1)}
    dense_rank: dict[int, int] = {}
    if state.dense is not None:
        candidates = [state.by_id[k] for k in scores if k in state.by_id]
        similar = state.dense.similarities(content, candidates)
        order = sorted(range(len(similar.ids)), key=lambda n: -float(similar.values[n]))
        dense_rank = {similar.ids[n]: rank for rank, n in enumerate(order, start=1)}
    probed = Probed(
        sent=sent,
        summarized={s for m in planned.messages if m.form == "summary" for s in m.sources},
        storied={s for sources, _ in planned.story for s in sources},
        rank_of=rank_of,
        cut=max((rank_of[i] for i in sent if i in rank_of), default=0),
        new_terms=set(state.terms_of(new)),
        new_refs=new.refs,
        pointed=[i.position for i in state.items if scores.by_wording(i.id) >= NEAR],
        dense_rank=dense_rank,
        speakers={t for i in state.items if i.name for t in terms(i.name)},
        sent_tokens={},
    )
    for key in sent:
        if key in scores and key in state.by_id:
            sent_item = state.by_id[key]
            probed.sent_tokens[sent_item.role] = probed.sent_tokens.get(sent_item.role, 0) + sent_item.tokens
    contents = [m.content for m in planned.messages]
    by_label = {i.label: i for i in state.items}
    found = total = 0
    missed: list[Miss] = []
    for label in map(str, probe["evidence"]):  # type: ignore[call-overload]
        item = by_label.get(label)
        if item is None or label not in texts:
            continue
        total += 1
        if any(texts[label] in c for c in contents):
            found += 1
        else:
            missed.append(
                describe(item, str(probe["id"]), category, scores, set(state.terms_of(item)), probed)
            )
    return missed, found, total, probed.sent_tokens


def describe(
    item: Item, probe: str, category: str, scores: ScoreTable, words: set[str], probed: Probed
) -> Miss:
    """One missed evidence message, and the first reason that applies (see the module's list)."""
    shared = words & probed.new_terms
    shared_words = len(shared)
    shared_entities = len(item.refs & probed.new_refs)
    wording = scores.by_wording(item.id)
    rank = probed.rank_of.get(item.id)
    distance = min((abs(p - item.position) for p in probed.pointed), default=None)
    if not shared_words and not shared_entities:
        reason = "no shared word or entity"
    elif shared <= probed.speakers and not shared_entities and (rank is None or rank > probed.cut):
        reason = "only a speaker's name"
    elif wording < WEAK and (rank is None or rank > probed.cut):
        reason = "weak words"
    elif rank is None:
        reason = "not eligible"
    elif rank <= probed.cut:
        reason = "too big"
    else:
        reason = "below the cut"
    return Miss(
        probe=probe,
        category=category,
        evidence=item.label,
        role=item.role,
        tokens=item.tokens,
        state=item.state.value,
        named_in="summary" if item.id in probed.summarized else "story" if item.id in probed.storied else "-",
        rank=str(rank) if rank is not None else "-",
        cut=probed.cut,
        shared_words=shared_words,
        shared_entities=shared_entities,
        wording=wording,
        dense_rank=str(probed.dense_rank.get(item.id, "-")) if probed.dense_rank else "",
        distance=str(distance) if distance is not None else "-",
        reason=reason,
    )


def analyse(dataset: str, embeddings: str, rows: bool) -> None:
    window = WINDOWS[dataset]
    tallies: dict[str, list[int]] = {}
    reasons: dict[str, Counter[str]] = {}
    named: dict[str, Counter[str]] = {}
    spread: Counter[str] = Counter()
    every: list[Miss] = []
    rooms: list[dict[str, int]] = []
    for transcript in transcripts(SHARED_DATA / dataset):
        texts = {m["id"]: m["content"] for m in map(json.loads, transcript.read_text().splitlines())}
        probes_path = transcript.with_name(transcript.stem + ".probes.jsonl")
        probes = [json.loads(line) for line in probes_path.read_text().splitlines() if line.strip()]
        with tempfile.TemporaryDirectory(prefix="recall-misses-") as scratch:
            store = SqliteChatStore(Path(scratch) / "replay.db")
            try:
                curation = replay_curation(transcript, window, embeddings, store)
                budget = curation.state.budget.tokens
                by_label = {i.label: i for i in curation.state.items}
                for number, probe in enumerate(probes, start=1):
                    category = category_of(probe, dataset)
                    missed, found, total, sent_tokens = misses_of(curation, probe, number, category, texts)
                    rooms.append(sent_tokens)
                    tally = tallies.setdefault(category, [0, 0, 0])
                    tally[0] += found
                    tally[1] += found + sum(m.named_in != "-" for m in missed)
                    tally[2] += total
                    evidence_tokens = sum(
                        cost(by_label[e].tokens) for e in probe["evidence"] if e in by_label
                    )
                    if missed and evidence_tokens > budget:
                        spread[category] += len(missed)
                    for miss in missed:
                        reasons.setdefault(category, Counter())[miss.reason] += 1
                        named.setdefault(category, Counter())[
                            f"{miss.state}, {miss.named_in}" if miss.named_in != "-" else miss.state
                        ] += 1
                    every.extend(missed)
            finally:
                store.close()
    print(f"\n## {dataset} at {window:,} tokens, embeddings {embeddings}")
    for category in sorted(tallies):
        verbatim, sourced, total = tallies[category]
        print(
            f"{category}: {verbatim}/{total} verbatim, {sourced}/{total} verbatim or named; "
            f"misses by reason {dict(reasons.get(category, {}))}; by state {dict(named.get(category, {}))}"
            + (
                f"; {spread[category]} in probes whose evidence exceeds the budget"
                if spread[category]
                else ""
            )
        )
    if every:
        roles = Counter(m.role for m in every)
        far = sum(m.distance != "-" and int(m.distance) > 2 for m in every)
        print(
            f"all misses {len(every)}: roles {dict(roles)}; median tokens "
            f"{sorted(m.tokens for m in every)[len(every) // 2]}; more than 2 messages from any message "
            f"the probe's words point to: {far}"
        )
    if rooms:
        totals = sorted(sum(r.values()) for r in rooms)
        shares = sorted(r.get("assistant", 0) / max(1, sum(r.values())) for r in rooms)
        print(
            f"earlier messages sent verbatim per probe: median {totals[len(totals) // 2]:,} tokens, "
            f"the assistant's replies median {shares[len(shares) // 2]:.0%} of them"
        )
    if rows:
        header = (
            "probe category evidence role tokens state named rank cut words ents wording dense dist reason"
        )
        print(header)
        for m in every:
            print(
                f"{m.probe} {m.category} {m.evidence} {m.role} {m.tokens} {m.state} {m.named_in} {m.rank} "
                f"{m.cut} {m.shared_words} {m.shared_entities} {m.wording:.2f} {m.dense_rank or '-'} "
                f"{m.distance} {m.reason.replace(' ', '_')}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["locomo", "beam", "both"], default="both")
    parser.add_argument("--embeddings", choices=["off", "local"], default="off")
    parser.add_argument("--rows", action="store_true", help="print every missed evidence message")
    args = parser.parse_args()
    datasets = ["locomo-dev", "beam-dev"] if args.data == "both" else [f"{args.data}-dev"]
    for dataset in datasets:
        analyse(dataset, args.embeddings, args.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
