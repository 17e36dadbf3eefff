"""Full-text search across sessions (the picker's search box) over 10,000 messages.

Builds a store of 100 sessions × 100 messages (templated technical and everyday sentences padded
with made-up words drawn by Zipf's law, the same writer as curation_speed.py), then times 50 varied
searches through ``SqliteChatStore.search``, as the picker calls it (in a worker thread, which adds
nothing measurable): words in almost every message, rare words, word starts, phrases, several
pieces, FTS5 syntax typed as text, and words that are nowhere. Each search is run once to warm the
page cache, then timed once.
Target (issue 6): ≤ 50 ms per search.

    .venv/bin/python tests/benchmarks/fts_search.py
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, when run as a script

from sessions.store import SqliteChatStore
from tests.benchmarks.curation_speed import TOPICS, Writer

SESSIONS = 100
PER_SESSION = 100


def build(path: Path) -> tuple[SqliteChatStore, Writer]:
    writer = Writer(random.Random(6))
    store = SqliteChatStore(path)
    for n in range(SESSIONS):
        session = store.create_session(f"session {n}")
        for m in range(PER_SESSION):
            store.add_message(session.id, ("user", "assistant")[m % 2], writer.message())
    return store, writer


def queries(writer: Writer) -> list[str]:
    rng = random.Random(50)
    common = writer.words[:5]  # the Zipf head: in a large share of the messages
    rare = writer.words[-5:]
    found: list[str] = [
        *common,
        *rare,
        *(rng.choice(TOPICS) for _ in range(8)),
        *(word[:3] for word in rng.sample(writer.words[:200], 6)),  # word starts, as typed so far
        *(f"{rng.choice(TOPICS)} {rng.choice(TOPICS)}" for _ in range(6)),  # two pieces, both must match
        *(f"{a} {b}" for a, b in zip(common, rare, strict=True)),
        "the deploy of billing-api",
        "ConnectionRefusedError port 5432",
        "db/pool.py:88",
        '"unbalanced AND',
        "NEAR(deploy billing",
        "* OR -",
        "zzzqqq nowhere",
        "xylophonequartet",
        "e",  # one letter: a word of its own (as a prefix it would start thousands)
        "t",
        "a b c d e f",
        *(" ".join(rng.sample(writer.words[:50], 3)) for _ in range(3)),  # three common pieces
        " ".join(rng.sample(writer.words[:2000], 12)),  # a pasted sentence: nothing has all of it
    ]
    assert len(found) == 50, len(found)
    return found


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="heedful-fts-") as scratch:
        started = time.perf_counter()
        store, writer = build(Path(scratch) / "heedful.db")
        print(f"built {SESSIONS * PER_SESSION:,} messages in {time.perf_counter() - started:.1f} s")
        try:
            asked = queries(writer)
            times, hits = [], []
            for query in asked:
                store.search(query)
                began = time.perf_counter()
                found = store.search(query)
                times.append((time.perf_counter() - began) * 1000)
                hits.append(len(found))
        finally:
            store.close()
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    worst = max(range(len(times)), key=times.__getitem__)
    print(f"{len(times)} searches over {SESSIONS * PER_SESSION:,} messages (50 hits at most each)")
    print(f"  p50 {statistics.median(times):.1f} ms   p95 {p95:.1f} ms   max {max(times):.1f} ms")
    print(f"  slowest: {asked[worst]!r} ({hits[worst]} hits)   target ≤ 50 ms")


if __name__ == "__main__":
    main()
