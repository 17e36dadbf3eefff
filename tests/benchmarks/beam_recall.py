"""Evidence recall on the BEAM development chats (../shared/data/beam-dev), as issue 36 defines it.

``heedful replay --context-window 131072 --consent summarize`` per chat with its probing questions;
prints, per chat and over all five, evidence found verbatim and verbatim-or-in-a-summary-naming-it,
overall and per question category (see :mod:`tests.benchmarks.replay_probes`).

    .venv/bin/python tests/benchmarks/beam_recall.py [DATA_DIR] [--window N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, when run as a script

from tests.benchmarks.replay_probes import SHARED_DATA, Tally, replay_and_score, transcripts

WINDOW = 131_072


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=SHARED_DATA / "beam-dev")
    parser.add_argument("--window", type=int, default=WINDOW)
    args = parser.parse_args()
    whole = Tally()
    by_category: dict[str, Tally] = {}
    over = contexts = 0
    for transcript in transcripts(args.data):
        scored = replay_and_score(transcript, args.window)
        times = f"curate p50 {scored.curate_p50} ms, p95 {scored.curate_p95} ms"
        print(f"{transcript.stem}: {scored.overall().line()}; {times}")
        whole.add(scored.overall())
        for category, tally in scored.by_category.items():
            by_category.setdefault(category, Tally()).add(tally)
        over += scored.over
        contexts += scored.contexts
    for category in sorted(by_category):
        print(f"  {category}: {by_category[category].line()}")
    print(f"all: {whole.line()}; {over}/{contexts} contexts over budget")
    return 0 if over == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
