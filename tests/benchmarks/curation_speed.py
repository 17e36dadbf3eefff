"""Per-turn curation time (plan + apply) at 1,000 and 10,000 items, and how it grows.

Builds a synthetic session of mixed technical and everyday messages (generated, no external data),
then times 60 more turns at that size. Targets (issue 3): p95 ≤ 20 ms at 1,000 items and ≤ 150 ms at
10,000 items on the 2-core development machine.

    .venv/bin/python tests/benchmarks/curation_speed.py
"""

from __future__ import annotations

import random
import statistics
import time

from engine.curator import SessionCuration
from engine.tokens import load_counter

WORDS = [
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


def message(rng: random.Random) -> str:
    template = rng.choice(TEMPLATES)
    out = []
    for part in template.split("{"):
        if part.startswith("w}"):
            out.append(rng.choice(WORDS) + part[2:])
        elif part.startswith("W}"):
            out.append(rng.choice(WORDS).title() + part[2:])
        elif part.startswith("n}"):
            out.append(str(rng.randint(1, 500)) + part[2:])
        else:
            out.append(part)
    return "".join(out) + " " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))


def measure(size: int, turns: int = 60) -> tuple[float, float, float]:
    rng = random.Random(size)
    counter = load_counter("gpt-4o-mini")
    curation = SessionCuration(window=128_000, counter=counter, budget_ratio=0.05)
    next_id = 1
    while len(curation.items) < size:
        for role in ("user", "assistant"):
            text = message(rng)
            item = curation.add_message(next_id, role, text, counter.count(text))  # type: ignore[arg-type]
            next_id += 1
            if role == "user":
                curation.apply(curation.plan(item))
    times = []
    for _ in range(turns):
        text = message(rng)
        item = curation.add_message(next_id, "user", text, counter.count(text))
        next_id += 1
        started = time.perf_counter()
        curation.apply(curation.plan(item))
        times.append((time.perf_counter() - started) * 1000)
        reply = message(rng)
        curation.add_message(next_id, "assistant", reply, counter.count(reply))
        next_id += 1
    times.sort()
    return statistics.median(times), times[int(0.95 * len(times))], times[-1]


def main() -> None:
    for size in (1_000, 10_000):
        p50, p95, worst = measure(size)
        print(f"{size:>6,} items: per-turn curation p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {worst:.1f} ms")


if __name__ == "__main__":
    main()
