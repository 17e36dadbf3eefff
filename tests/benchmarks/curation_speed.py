"""Per-turn curation time (plan + apply) at 1,000 and 10,000 items.

Builds a synthetic session (no external data): templated technical and everyday sentences padded
with made-up words drawn by Zipf's law, as natural language is (a few words everywhere, most rare).
The session is curated every few turns while it grows, then 60 more turns are timed at that size.
Targets (issue 3): p95 ≤ 20 ms at 1,000 items and ≤ 150 ms at 10,000 items on the 2-core machine.
With ``--embeddings local`` the local embedding model joins (recall by meaning, issue 36).

    .venv/bin/python tests/benchmarks/curation_speed.py [--embeddings off|local]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from engine.chat import Role
from engine.curation.session_curation import SessionCuration
from engine.protocols.embeddings import Embedder
from engine.text.tokens import load_counter
from tui import heap

TOPICS = [
    "deploy",
    "billing",
    "api",
    "fails",
    "connection",
    "refused",
    "port",
    "pool",
    "retry",
    "timeout",
    "config",
    "cache",
    "index",
    "query",
    "lentils",
    "boil",
    "minutes",
    "garden",
    "tomato",
    "weekend",
    "hiking",
    "trail",
    "lake",
    "sister",
    "birthday",
    "concert",
    "ticket",
    "budget",
    "invoice",
    "meeting",
    "agenda",
    "review",
    "branch",
    "merge",
    "commit",
    "release",
    "version",
    "schema",
    "migration",
]
TEMPLATES = (
    "The {w} {w} fails with ValueError in src/{w}/{w}.py:{n} since {n} minutes.",
    "Let's set {w}_{w} = {n} in config.toml and run `pytest -q` again.",
    "My friend Alex went to {W} on {n} May 2024 for the {w} {w}.",
    "I prefer {w} over {w}, it costs ${n} and takes {n} km.",
    "ok thanks, the {w} works now",
    "See https://example.com/{w}/{w} for the {w} {w} {w} details about {w}.",
)
SYLLABLES = ["ka", "ri", "to", "mu", "se", "la", "po", "ne", "vi", "da", "lo", "qu", "ze", "fa", "gi", "ho"]


class Writer:
    """Writes plausible messages with a Zipf-distributed vocabulary of made-up words."""

    def __init__(self, rng: random.Random, vocabulary: int = 6000) -> None:
        self.rng = rng
        words = {
            "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(vocabulary * 2)
        }
        self.words = sorted(words)[:vocabulary]
        rng.shuffle(self.words)
        self.weights = [1 / (rank + 1) for rank in range(len(self.words))]

    def message(self) -> str:
        rng = self.rng
        out = []
        for part in rng.choice(TEMPLATES).split("{"):
            if part.startswith("w}"):
                out.append(rng.choice(TOPICS) + part[2:])
            elif part.startswith("W}"):
                out.append(rng.choice(TOPICS).title() + part[2:])
            elif part.startswith("n}"):
                out.append(str(rng.randint(1, 500)) + part[2:])
            else:
                out.append(part)
        filler = rng.choices(self.words, self.weights, k=rng.randint(5, 60))
        return "".join(out) + " " + " ".join(filler)


def measure(
    size: int, turns: int = 60, curate_every: int = 5, embedder: Embedder | None = None
) -> list[float]:
    writer = Writer(random.Random(size))
    counter = load_counter("gpt-4o-mini")
    curation = SessionCuration(window=128_000, counter=counter, budget_ratio=0.05)
    if embedder is not None:
        from engine.curation.dense import DenseIndex

        curation.state.dense = DenseIndex(embedder)
    next_id = 1

    def add(role: Role) -> None:
        nonlocal next_id
        text = writer.message()
        item = curation.add_message(next_id, role, text, counter.count(text))
        next_id += 1
        if role == "user" and (next_id // 2) % curate_every == 0:
            curation.apply(curation.plan(item))

    while len(curation.items) < size:
        add("user")
        add("assistant")
    # As the app does once a session is on screen: without it, CPython's full collections
    # re-scan every item's objects, a ~70 ms pause every twenty-odd turns at 10,000 items.
    heap.settle()
    times = []
    for _ in range(turns):
        text = writer.message()
        item = curation.add_message(next_id, "user", text, counter.count(text))
        next_id += 1
        started = time.perf_counter()
        curation.apply(curation.plan(item))
        times.append((time.perf_counter() - started) * 1000)
        add("assistant")
    return sorted(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embeddings", choices=("off", "local"), default="off")
    embedder = None
    if parser.parse_args().embeddings == "local":
        from providers.local_embedder import load_local_embedder

        embedder = load_local_embedder()
    for size in (1_000, 10_000):
        times = measure(size, embedder=embedder)
        p95 = times[int(0.95 * len(times))]
        print(
            f"{size:>6,} items: per-turn curation p50 {statistics.median(times):.1f} ms, "
            f"p95 {p95:.1f} ms, max {times[-1]:.1f} ms"
        )


if __name__ == "__main__":
    main()
