"""Evidence recall in one long session: what a smaller curated window costs.

The two LoCoMo dev conversations, then the five BEAM dev chats, as one session of ~5,200 messages
(``heedful replay --context-window 8000 --consent summarize`` into a scratch data dir, as the app
would have left it); then every question of all seven is asked at its end, against the session read
from the store as the app opens it, with the latest ``--limit`` messages curated (in memory) and the
earlier ones found again through the store (cold recall). LoCoMo's evidence is then ~4,400 messages
old. Scored as ``locomo_recall.py`` scores: an evidence turn counts when its text appears unchanged in
a message of the question's context.

    .venv/bin/python tests/benchmarks/long_recall.py [--limit N ...] [--reuse DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, when run as a script

from tests.benchmarks.replay_probes import SHARED_DATA, Tally

WINDOW = 8000
PARTS = [
    SHARED_DATA / "locomo-dev" / "conv-26.jsonl",
    SHARED_DATA / "locomo-dev" / "conv-30.jsonl",
    *sorted((SHARED_DATA / "beam-dev").glob("beam-*[0-9].jsonl")),
]


@dataclass(frozen=True, slots=True)
class Question:
    content: str
    evidence: list[str]
    """The ids (prefixed) of the messages that answer it."""
    part: str
    """locomo or beam."""


def stitch(out: Path) -> tuple[list[Question], dict[str, str]]:
    """Write the parts as one transcript to ``out`` (ids prefixed by their file's name); the
    questions of every part, their evidence ids prefixed too, and each message's text by id."""
    texts: dict[str, str] = {}
    questions: list[Question] = []
    with out.open("w", encoding="utf-8") as written:
        for part in PARTS:
            for line in part.read_text(encoding="utf-8").splitlines():
                message = json.loads(line)
                message["id"] = f"{part.stem}/{message['id']}"
                texts[message["id"]] = message["content"]
                written.write(json.dumps(message) + "\n")
            probes = part.with_name(part.stem + ".probes.jsonl")
            for line in probes.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    asked = json.loads(line)
                    evidence = [f"{part.stem}/{e}" for e in asked["evidence"]]
                    kind = "locomo" if part.stem.startswith("conv") else "beam"
                    questions.append(Question(asked["content"], evidence, kind))
    return questions, texts


def ask(data_dir: Path, limit: int, questions: list[Question], texts: dict[str, str]) -> None:
    """Ask every question against the stored session read with ``limit`` messages curated."""
    from engine.curation import session_curations
    from engine.curation.session_curations import SessionCurations
    from engine.text.tokens import load_counter
    from sessions.store import SqliteChatStore

    session_curations.CURATED_LIMIT = limit
    counter = load_counter("", model_is_offline=True)
    store = SqliteChatStore(data_dir / "heedful.db")
    session_id = store.list_sessions()[0].id
    curations = SessionCurations(store, counter, window=lambda: WINDOW, system_prompt="", recall=store)
    curations.incremental = False
    tallies: dict[str, Tally] = {}
    started = time.perf_counter()
    with curations.held(session_id) as held:
        curation = held.curation
        read = time.perf_counter() - started
        cut = curation.cut.earlier if curation.cut is not None else 0
        for number, question in enumerate(questions, start=1):
            content = question.content
            probe = curation.analyse(-number, "user", content, counter.count(content))
            result = curation.plan(probe, cold=held.earlier_candidates(probe))
            contents = [m.content for m in result.messages]
            tally = tallies.setdefault(question.part, Tally())
            for evidence in question.evidence:
                text = texts.get(evidence)
                if text is None:
                    continue
                tally.total += 1
                tally.verbatim += any(text in c for c in contents)
    store.close()
    asked = time.perf_counter() - started - read
    found = " ".join(
        f"{part} {t.verbatim}/{t.total} ({t.verbatim / t.total:.1%})" for part, t in sorted(tallies.items())
    )
    print(
        f"limit {limit:,} ({cut:,} messages before the cut): {found}; read {read:.1f} s, "
        f"{1000 * asked / len(questions):.0f} ms a question"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--limit", type=int, action="append", help="curated messages (default: 10,000, then 1,000 as shipped)"
    )
    parser.add_argument("--reuse", type=Path, help="a data dir: replayed into once, read after")
    args = parser.parse_args()
    limits = args.limit or [10_000, 1_000]
    with tempfile.TemporaryDirectory(prefix="heedful-long-recall-") as scratch:
        root = args.reuse or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        transcript = root / "stitched.jsonl"
        questions, texts = stitch(transcript)
        if (root / "heedful.db").exists():
            for limit in limits:
                ask(root, limit, questions, texts)
            return 0
        env = {**os.environ, "HEEDFUL_DATA_DIR": str(root), "HEEDFUL_CONFIG": str(root / "none.toml")}
        command = [sys.executable, "-m", "cli", "replay", str(transcript), "--context-window", str(WINDOW)]
        command += ["--consent", "summarize", "--output", str(root / "replay.json")]
        began = time.perf_counter()
        subprocess.run(command, check=True, env=env)
        took = time.perf_counter() - began
        print(f"{len(texts):,} messages replayed in {took:.0f} s; {len(questions)} questions")
        for limit in limits:
            ask(root, limit, questions, texts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
