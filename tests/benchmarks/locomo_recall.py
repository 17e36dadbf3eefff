"""Evidence recall on the LoCoMo development set (../shared/data/locomo-dev), as issue 3 defines it.

For each conversation: ``heedful replay --context-window 8000 --consent summarize`` with one probe
per question; an evidence turn counts when its original text appears unchanged inside a message of
that probe's context, and every context must fit the budget (see
:mod:`tests.benchmarks.replay_probes`). Prints per conversation, then per question category
(LoCoMo's numbers named as its evaluation code uses them) verbatim and verbatim-or-in-a-summary.
``BENCH_EMBEDDINGS=off|local|provider`` chooses the embeddings (see ``replay_probes``).

    .venv/bin/python tests/benchmarks/locomo_recall.py [DATA_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, when run as a script

from tests.benchmarks.replay_probes import SHARED_DATA, Tally, replay_and_score, transcripts

WINDOW = 8000
CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
"""LoCoMo's category numbers (snap-research/locomo task_eval/evaluation.py scores 1 as multi-hop and
5 as adversarial; 2 asks for dates, 4 is the largest set of one-turn lookups, 3 needs world
knowledge); the paper lists them in another order."""


def main() -> int:
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED_DATA / "locomo-dev"
    whole = Tally()
    by_category: dict[str, Tally] = {}
    over = contexts = 0
    for transcript in transcripts(data):
        scored = replay_and_score(transcript, WINDOW)
        found = scored.overall()
        print(
            f"{transcript.stem}: {found.verbatim}/{found.total} evidence turns verbatim "
            f"({found.verbatim / found.total:.1%}); curate p50 {scored.curate_p50} ms, "
            f"p95 {scored.curate_p95} ms"
        )
        whole.add(found)
        for category, tally in scored.by_category.items():
            by_category.setdefault(CATEGORIES.get(category, category), Tally()).add(tally)
        over += scored.over
        contexts += scored.contexts
    for category in sorted(by_category):
        print(f"  {category}: {by_category[category].line()}")
    print(
        f"all: {whole.verbatim}/{whole.total} = {whole.verbatim / whole.total:.1%} evidence turns "
        f"verbatim; {over}/{contexts} contexts over budget"
    )
    return 0 if over == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
