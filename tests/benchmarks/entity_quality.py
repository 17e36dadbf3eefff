"""Precision and recall of entity extraction on a hand-labelled sample (issue 37).

Precision: of the entities the extractor finds in the sampled messages, the share labelled real in
tests/data/entity_sample.jsonl. Recall: of the entities listed by hand for 60 messages
(tests/data/entity_recall.jsonl), the share the extractor finds. Both again "in the conversation":
leaving out the names each whole chat also writes as ordinary words (engine.curation.common_words),
as the context panel does once the chat is read. The messages are read from
shared/data (LoCoMo and BEAM dev chats, never copied here) and tests/data/entity_coding_transcript.jsonl;
tests/data/entity_labelling.md says how each entity was judged.

    .venv/bin/python tests/benchmarks/entity_quality.py [DATA_DIR] [--list]
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from engine.entities.extractor import extract_entities

HERE = Path(__file__).resolve().parents[1] / "data"
TARGET_PRECISION, TARGET_RECALL = 0.90, 0.85
FIRST = {"locomo": 40, "beam": 8, "coding": 1000}
"""The sampled messages: the first 40 of each LoCoMo chat, the first 8 of each BEAM chat, all coding."""
BEAM = ("beam-100K-10", "beam-100K-4", "beam-500K-23", "beam-1M-6")


def _data_dir() -> Path:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if args:
        return Path(args[0])
    for up in Path(__file__).resolve().parents:
        if (up / "shared" / "data" / "locomo-dev").is_dir():
            return up / "shared" / "data"
    raise SystemExit("shared/data not found: pass its path")


def key(label: str) -> str:
    """What makes two spellings one entity: case, spacing, a call's "()" and wrapping quotes aside."""
    k = " ".join(label.casefold().split()).removesuffix("()")
    return k[1:-1] if len(k) > 2 and k[0] == k[-1] and k[0] in "'\"`" else k


def messages(data: Path) -> dict[tuple[str, str], dict[str, str]]:
    """Every message of the chats, by (source, message id), in order."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    files = [(f"locomo/{p.stem}", p) for p in sorted((data / "locomo-dev").glob("conv-*.jsonl"))]
    files += [(f"beam/{name}", data / "beam-dev" / f"{name}.jsonl") for name in BEAM]
    files.append(("coding", HERE / "entity_coding_transcript.jsonl"))
    for source, path in files:
        if path.name.endswith(".probes.jsonl"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            message = json.loads(line)
            found[(source, message["id"])] = message
    return found


def conversation_words(chats: dict[tuple[str, str], dict[str, str]]) -> set[tuple[str, str]]:
    """(source, ref) of each name its whole chat also writes as an ordinary word."""
    from engine.chat import Role
    from engine.curation.session_curation import SessionCuration
    from engine.text.tokens import load_counter

    counter = load_counter("", model_is_offline=True)
    curations: dict[str, SessionCuration] = {}
    for number, ((source, _), message) in enumerate(chats.items(), start=1):
        curation = curations.setdefault(source, SessionCuration(window=8000, counter=counter))
        text = message["content"]
        role: Role = "user" if message["role"] == "user" else "assistant"
        curation.add_message(number, role, text, counter.count(text), name=message.get("name"))
    return {(source, ref) for source, curation in curations.items() for ref in curation.registry.words}


def scores(
    sampled: list[tuple[str, str]],
    texts: dict[tuple[str, str], str],
    labels: dict[tuple[str, str, str], bool],
    words: set[tuple[str, str]],
) -> tuple[int, int, Counter[str], list[str]]:
    """Entities labelled real, entities judged, the noise and the unlabelled, leaving out ``words``."""
    real = judged = 0
    unlabelled: list[str] = []
    noise: Counter[str] = Counter()
    for source, message in sampled:
        for mention in extract_entities(texts[(source, message)]):
            if (source, mention.ref) in words:
                continue
            label = labels.get((source, message, key(mention.label)))
            if label is None:
                unlabelled.append(f"{source} {message} {mention.kind} {mention.label!r}")
                continue
            judged += 1
            real += label
            if not label:
                noise[f"{mention.kind} {mention.label!r}"] += 1
    return real, judged, noise, unlabelled


def found_by_hand(
    texts: dict[tuple[str, str], str], words: set[tuple[str, str]]
) -> tuple[int, int, list[str]]:
    """Hand-listed entities found, hand-listed entities, and those missed, leaving out ``words``."""
    hits = total = 0
    missed: list[str] = []
    for line in (HERE / "entity_recall.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        source = row["source"]
        mentions = extract_entities(texts[(source, row["message"])])
        found = {key(m.label) for m in mentions if (source, m.ref) not in words}
        for spellings in row["entities"]:
            total += 1
            if any(key(s) in found for s in spellings):
                hits += 1
            else:
                missed.append(f"{source} {row['message']} {spellings[0]!r}")
    return hits, total, missed


def main() -> int:
    chats = messages(_data_dir())
    texts = {where: message["content"] for where, message in chats.items()}
    listing = "--list" in sys.argv
    labels = {}
    for line in (HERE / "entity_sample.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        labels[(row["source"], row["message"], key(row["entity"]))] = row["real"]
    sampled, taken = [], Counter[str]()
    for source, message in texts:
        if taken[source] < FIRST[source.split("/")[0]]:
            taken[source] += 1
            sampled.append((source, message))
    real, judged, noise, unlabelled = scores(sampled, texts, labels, set())
    hits, total, missed = found_by_hand(texts, set())
    words = conversation_words(chats)
    in_real, in_judged, in_noise, _ = scores(sampled, texts, labels, words)
    in_hits, _, in_missed = found_by_hand(texts, words)
    precision, recall = real / judged, hits / total
    if listing:
        print("noise:", "; ".join(f"{n}x {k}" for k, n in noise.most_common()))
        print("missed:", "; ".join(missed))
        print("noise in the conversation:", "; ".join(f"{n}x {k}" for k, n in in_noise.most_common()))
        print("missed in the conversation:", "; ".join(sorted(set(in_missed) - set(missed))))
    for entry in unlabelled:
        print("unlabelled (label it in tests/data/entity_sample.jsonl):", entry)
    print(
        f"precision {precision:.1%} ({real}/{judged} extracted entities labelled real, "
        f"{len(sampled)} messages; {len(unlabelled)} unlabelled)"
    )
    print(f"recall {recall:.1%} ({hits}/{total} hand-listed entities found, 60 messages)")
    print(
        f"in the conversation (its names written as words left out, {len(words)} in all): precision "
        f"{in_real / in_judged:.1%} ({in_real}/{in_judged}), recall {in_hits / total:.1%} ({in_hits}/{total})"
    )
    ok = precision >= TARGET_PRECISION and recall >= TARGET_RECALL and not unlabelled
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
