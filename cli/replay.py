"""``heedful replay``: feed a transcript through the curation engine and print the contexts as JSON.

Offline and deterministic, unless ``--base-url`` and ``--model`` name a live model for summaries and
the curator pass (:mod:`cli.replay_live`; the output then has a ``curation_calls`` section).
Messages go through the same store and engine as in the app: each is stored, a user message
triggers curation, and the plan is applied and logged. Probes are curated as
if each were the next user message after the whole transcript, independently of one another (a
plan never changes state). The output format is an external contract; keep it stable.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import NotRequired, TypedDict, Unpack

from engine.curation.budget import profile_named
from engine.curation.consent import ConsentChoice
from engine.curation.result import ContextMessage, CurationResult
from engine.curation.session_curation import SessionCuration
from engine.curation.stored import save
from engine.errors import ModelError, StoreError
from engine.summaries.model import SummaryLevel
from engine.text.inert import inert, inert_json, quoted
from engine.text.redaction import redact
from engine.text.tokens import load_counter
from sessions import paths
from sessions.store import SqliteChatStore, open_store
from sessions.transcript import TranscriptError, read_probes, read_transcript

_CONTRACT_FORM = {"story": "summary", "standing": "memory"}
"""The contract's forms are verbatim, summary, memory and system: a newer section keeps the nearest
one and names itself in an optional ``section`` field."""

_EMPTY_CONTEXT: dict[str, object] = {
    "tokens": 0,
    "messages": [],
    "entities": {"active": [], "retained": [], "pruned": []},
}


@contextmanager
def _replay_store() -> Iterator[SqliteChatStore]:
    """The user's data directory when HEEDFUL_DATA_DIR is set, else a throwaway database."""
    if os.environ.get("HEEDFUL_DATA_DIR"):
        store = open_store(paths.database_path()).store
        try:
            yield store
        finally:
            store.close()
        return
    with tempfile.TemporaryDirectory(prefix="heedful-replay-") as scratch:
        store = SqliteChatStore(Path(scratch) / "replay.db")
        try:
            yield store
        finally:
            store.close()


def _context(result: CurationResult, curation: SessionCuration, ids: Mapping[int, str]) -> dict[str, object]:
    groups: dict[str, list[dict[str, object]]] = {"active": [], "retained": [], "pruned": []}
    for ref, (state, reason) in sorted(result.entities.items()):
        record = curation.registry.records.get(ref)
        if record is None:
            continue
        entry = record.as_json()
        entry["reason"] = reason
        groups[state.value].append(entry)
    context: dict[str, object] = {
        "tokens": result.tokens,
        "messages": [_message(m, ids) for m in result.messages],
        "entities": groups,
    }
    if result.story:  # optional: the story so far, line by line with the messages each quotes
        context["story"] = [
            {"sources": [ids.get(source, str(source)) for source in sources], "line": line}
            for sources, line in result.story
        ]
    return context


def _message(message: ContextMessage, ids: Mapping[int, str]) -> dict[str, object]:
    out: dict[str, object] = {
        "role": message.role,
        "content": message.content,
        "sources": [ids.get(source, str(source)) for source in message.sources],
        "form": _CONTRACT_FORM.get(message.form, message.form),
    }
    if message.form in _CONTRACT_FORM:
        out["section"] = message.form
    return out


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class ReplayOptions(TypedDict):
    """How to replay: the model's window, the budget (None: the profile's share), the curation
    profile, what to do with the user's messages that do not fit, the probes, and a live model."""

    context_window: int
    budget_ratio: float | None
    profile: str
    consent: str
    probes: Path | None
    base_url: NotRequired[str | None]
    model: NotRequired[str | None]
    embeddings: NotRequired[str]
    """"local": the bundled embedding model joins the ranking; "provider": ``embedding_model`` at
    ``embeddings_url``'s (else ``base_url``'s) ``/v1/embeddings``; "off" (the default): words alone."""
    embedding_model: NotRequired[str]
    embeddings_url: NotRequired[str | None]


def replay(transcript: Path, **options: Unpack[ReplayOptions]) -> dict[str, object]:
    """Run the replay and return the output document.

    Raises:
        TranscriptError: A file could not be read or has a bad line.
        StoreError: The database could not be used.
    """
    return asyncio.run(_replay(transcript, **options))


async def _replay(
    transcript: Path,
    *,
    context_window: int,
    budget_ratio: float | None,
    profile: str,
    consent: str,
    probes: Path | None,
    base_url: str | None = None,
    model: str | None = None,
    embeddings: str = "off",
    embedding_model: str = "text-embedding-3-small",
    embeddings_url: str | None = None,
) -> dict[str, object]:
    # An exported session keeps its superseded and failed replies; the app never sends them, nor does this.
    messages = [message for message in read_transcript(transcript) if message.in_conversation]
    probe_list = read_probes(probes) if probes is not None else []
    counter = load_counter("", model_is_offline=True)
    curation = SessionCuration(
        window=context_window,
        counter=counter,
        profile=profile_named(profile),
        budget_ratio=budget_ratio,
        policy=ConsentChoice(consent),
    )
    embedder_name = _use_embeddings(curation, embeddings, embeddings_url or base_url, embedding_model)
    live = None
    if base_url is not None:
        from cli.replay_live import LiveCuration

        live = LiveCuration.connect(base_url, model or "gpt-4o-mini", counter, window=context_window)
        level = SummaryLevel.BRIEF if profile == "cost" else SummaryLevel.DETAILED
        live.attach(curation, level)
    ids: dict[int, str] = {}
    timings: list[float] = []
    last: CurationResult | None = None
    with _replay_store() as store, _closing(curation):
        session = store.create_session(f"replay of {transcript.name}")
        for message in messages:
            tokens = counter.count(message.content)
            stored = store.add_message(session.id, message.role, message.content, tokens=tokens)
            ids[stored.id] = message.id
            item = curation.add_message(
                stored.id, message.role, message.content, tokens, name=message.name, label=message.id
            )
            if message.pinned:
                save(store, session.id, curation, curation.pin(item.id))
            if message.role != "user":
                continue
            guidance = await live.advise(curation, item) if live is not None else None
            started = time.perf_counter()
            result = curation.plan(item, guidance=guidance)
            delta = curation.apply(result)
            timings.append((time.perf_counter() - started) * 1000)
            save(store, session.id, curation, delta)
            last = result
            if live is not None:
                if guidance is not None:
                    live.note(guidance, item.turn)
                await live.write_summaries(curation, store, session.id)
        probe_contexts = []
        for number, probe in enumerate(probe_list, start=1):
            probe_item = curation.analyse(
                -number, "user", probe.content, counter.count(probe.content), label=probe.id
            )
            probe_ids = {**ids, -number: probe.id}
            guidance = await live.advise(curation, probe_item) if live is not None else None
            planned = curation.plan(probe_item, guidance=guidance)
            probe_contexts.append({"id": probe.id, "context": _context(planned, curation, probe_ids)})
        ledger = [entry.as_json() for entry in store.ledger(session.id)]
    if live is not None:
        await live.curator.aclose()  # their connections are kept between calls
        await live.summarizer.aclose()
    for entry in ledger:
        target = entry["target"]
        if isinstance(target, str) and target.lstrip("-").isdigit():
            entry["target"] = ids.get(int(target), target)
    document: dict[str, object] = {
        "tokenizer": counter.description,
        "context_window": context_window,
        "budget_tokens": curation.budget.tokens,
        "messages": len(messages),
        "turns": curation.turn,
        "curate_ms": {
            "p50": round(statistics.median(timings), 3) if timings else 0.0,
            "p95": round(_percentile(timings, 0.95), 3),
            "max": round(max(timings, default=0.0), 3),
        },
        "final": _context(last, curation, ids) if last is not None else _EMPTY_CONTEXT,
        "probes": probe_contexts,
        "ledger": ledger,
    }
    if live is not None:
        document["curation_calls"] = live.report()
    if embedder_name is not None:
        document["embeddings"] = embedder_name
    return document


def _use_embeddings(
    curation: SessionCuration, embeddings: str, base_url: str | None, embedding_model: str
) -> str | None:
    """Give the curation the embedding model asked for (``"local"``, or ``"provider"``: the
    server at ``base_url``); its name, or None. A provider that fails ends the replay (its figures
    would otherwise be words alone's under the embeddings' name)."""
    if embeddings not in ("local", "provider"):
        return None
    from engine.curation.dense import DenseIndex
    from engine.protocols.embeddings import Embedder

    embedder: Embedder
    if embeddings == "provider":
        if base_url is None:
            raise ValueError(
                "--embeddings provider needs --embeddings-url or --base-url (the server with /v1/embeddings)"
            )
        from providers.openai_embedder import ProviderEmbedder

        key = os.environ.get("OPENAI_API_KEY") or None
        embedder = ProviderEmbedder(model=embedding_model, base_url=base_url, api_key=key)
    else:
        from providers.local_embedder import load_local_embedder

        try:
            embedder = load_local_embedder()
        except (ImportError, OSError) as err:
            raise ValueError(f"the local embedding model could not be loaded: {err}") from err
    curation.state.dense = DenseIndex(embedder)
    return embedder.name


@contextmanager
def _closing(curation: SessionCuration) -> Iterator[None]:
    """Close the connections of the curation's embedder (a provider's) when the replay ends."""
    try:
        yield
    finally:
        dense = curation.state.dense
        close = getattr(dense.embedder, "close", None) if dense is not None else None
        if close is not None:
            close()


def run_replay(transcript: Path, *, output: Path | None, **options: Unpack[ReplayOptions]) -> int:
    try:
        document = replay(transcript, **options)
    except (TranscriptError, ValueError) as err:
        print(inert(redact(f"heedful replay: {err}")), file=sys.stderr)
        return 2
    except (StoreError, ModelError) as err:
        print(inert(redact(f"heedful replay: {err.user_message}")), file=sys.stderr)
        return 1
    # A live model's answers and errors are in it: through the redaction gate, as a whole, then
    # control, C1, bidi and zero-width characters as \u escapes: the same JSON, safe to show.
    text = inert_json(redact(json.dumps(document, ensure_ascii=False, indent=1)))
    if output is None:
        sys.stdout.write(text + "\n")
        return 0
    try:
        output.write_text(text + "\n", encoding="utf-8")
    except OSError as err:
        print(
            f"heedful replay: could not write {quoted(str(output))}: {err.strerror or err}", file=sys.stderr
        )
        return 1
    return 0
