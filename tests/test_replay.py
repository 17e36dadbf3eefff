"""``heedful replay``: the external contract (flags, output shape), budgets, consent, and bad input."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from engine.text.tokens import load_counter
from tests.fake_openai import FakeOpenAIServer

COUNTER = load_counter("", model_is_offline=True)

TOPICS = (
    "The deploy of billing-api fails with ConnectionRefusedError on port 5432 in db/pool.py:88.",
    "My sister Maya moved to Lisbon on 3 March 2024 and works at Feedzai now.",
    "We decided to use PostgreSQL 16 with max_connections = 200 for the analytics cluster.",
    "I prefer short answers with code first, please.",
    "The hiking trip to Mount Rainier is planned for 14 August, about 18 km round trip.",
    "Our cat Biscuit needs her vaccine before the vet visit next Tuesday.",
)


def write_transcript(path: Path, turns: int = 30, *, pinned: tuple[int, ...] = ()) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for n in range(turns):
        topic = TOPICS[n % len(TOPICS)]
        rows.append({"id": f"u{n}", "role": "user", "content": f"{topic} (note {n}) " + "More detail. " * 6})
        rows.append(
            {"id": f"a{n}", "role": "assistant", "name": "bot", "content": f"Noted about {topic[:40]} " * 4}
        )
    for index in pinned:
        rows[index]["pinned"] = True
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """The exit code, the JSON document printed (None on failure) and stderr."""
    code = main(["replay", *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else None, captured.err


def test_output_follows_the_contract_and_fits_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "t.jsonl"
    rows = write_transcript(transcript)
    probes = tmp_path / "p.jsonl"
    probes.write_text(
        json.dumps({"id": "q1", "content": "Where did Maya move, and when?", "answer": "x"}) + "\n"
    )
    code, out, _ = run(capsys, str(transcript), "--context-window", "2000", "--probes", str(probes))
    assert code == 0 and out is not None
    assert set(out) == {
        "tokenizer",
        "context_window",
        "budget_tokens",
        "messages",
        "turns",
        "curate_ms",
        "final",
        "probes",
        "ledger",
    }
    assert out["context_window"] == 2000 and out["budget_tokens"] == 1400
    assert out["messages"] == len(rows) and out["turns"] == 30
    assert set(out["curate_ms"]) == {"p50", "p95", "max"}
    originals = {str(r["id"]): str(r["content"]) for r in rows}
    contexts = [out["final"], *(p["context"] for p in out["probes"])]
    for context in contexts:
        assert set(context) - {"story"} == {"tokens", "messages", "entities"}  # the story: optional
        assert set(context["entities"]) == {"active", "retained", "pruned"}
        for entity in (e for group in context["entities"].values() for e in group):
            assert set(entity) == {"ref", "kind", "label", "last_turn", "reason"}
        recount = sum(COUNTER.count(m["content"]) + 4 for m in context["messages"]) + 3
        assert recount <= out["budget_tokens"] == 1400
        for message in context["messages"]:
            assert set(message) - {"section"} == {"role", "content", "sources", "form"}  # section: optional
            assert message["form"] in ("verbatim", "summary", "memory", "system")  # the contract's four
            if message["form"] == "verbatim":
                (source,) = message["sources"]
                if source != "q1":
                    assert message["content"] == originals[source]
    probe_context = out["probes"][0]["context"]
    assert probe_context["messages"][-1] == {
        "role": "user",
        "content": "Where did Maya move, and when?",
        "sources": ["q1"],
        "form": "verbatim",
    }
    # The Maya messages are recalled for the probe, verbatim.
    sent = " ".join(m["content"] for m in probe_context["messages"])
    assert "Maya moved to Lisbon" in sent
    # Not everything fits: the engine had to forget, and said so in the ledger.
    assert any(e["action"] in ("prune", "transform") for e in out["ledger"])


def test_consent_keep_never_changes_user_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    transcript = tmp_path / "t.jsonl"
    rows = write_transcript(transcript)
    code, out, _ = run(capsys, str(transcript), "--context-window", "2000", "--consent", "keep")
    assert code == 0 and out is not None
    user_ids = {str(r["id"]) for r in rows if r["role"] == "user"}
    changed = [e for e in out["ledger"] if e["target"] in user_ids and e["action"] in ("prune", "transform")]
    assert changed == []


def test_consent_summarize_records_consent_for_every_user_item_it_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "t.jsonl"
    rows = write_transcript(transcript)
    code, out, _ = run(capsys, str(transcript), "--context-window", "2000", "--consent", "summarize")
    assert code == 0 and out is not None
    ledger = out["ledger"]
    user_ids = {str(r["id"]) for r in rows if r["role"] == "user"}
    summarized = {e["target"] for e in ledger if e["target"] in user_ids and e["action"] == "transform"}
    consented = {e["target"] for e in ledger if e["kind"] == "consent" and e["action"] == "summarize"}
    assert summarized and summarized <= consented
    summaries = [m for m in out["final"]["messages"] if m["form"] == "summary"]
    assert summaries and all(m["sources"] for m in summaries)


def test_pinned_messages_are_always_sent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript, pinned=(0,))
    code, out, _ = run(capsys, str(transcript), "--context-window", "2000", "--consent", "remove")
    assert code == 0 and out is not None
    sources = [s for m in out["final"]["messages"] for s in m["sources"]]
    assert "u0" in sources


def test_probes_do_not_change_state_and_replay_is_deterministic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript)
    probes = tmp_path / "p.jsonl"
    probes.write_text(
        "".join(json.dumps({"id": f"q{n}", "content": "What about the deploy?"}) + "\n" for n in range(2))
    )
    _, first, _ = run(capsys, str(transcript), "--context-window", "1500", "--probes", str(probes))
    _, again, _ = run(capsys, str(transcript), "--context-window", "1500")
    assert first is not None and again is not None
    one, two = (p["context"] for p in first["probes"])
    # Identical questions get identical contexts (only the probe's own id differs): the first
    # probe changed nothing that the second could see.
    assert one["messages"][:-1] == two["messages"][:-1] and one["entities"] == two["entities"]
    assert first["ledger"] == again["ledger"] and first["final"] == again["final"]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"id": "x", "role": "user"}', "line 2: the field 'content' is missing"),
        ("{not json", "line 2: invalid JSON"),
        ('{"id": "x", "role": "robot", "content": "hi"}', "line 2: role must be one of"),
        ('{"id": "a", "role": "user", "content": "again"}', "line 2: the id 'a' was used before"),
    ],
)
def test_bad_lines_stop_with_the_line_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, said: str
) -> None:
    transcript = tmp_path / "bad.jsonl"
    transcript.write_text('{"id": "a", "role": "user", "content": "hi"}\n' + line + "\n")
    code, _, err = run(capsys, str(transcript), "--context-window", "1000")
    assert code == 2
    assert said in err and str(transcript) in err


def test_invalid_utf8_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    transcript = tmp_path / "bad.jsonl"
    transcript.write_bytes(b'{"id": "a", "role": "user", "content": "hi"}\n{"id": "b", "content": "\xff"}\n')
    code, _, err = run(capsys, str(transcript), "--context-window", "1000")
    assert code == 2 and "line 2: not UTF-8" in err


def test_the_data_dir_keeps_the_replayed_session_when_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript, turns=3)
    code, _, _ = run(capsys, str(transcript), "--context-window", "4000")
    assert code == 0
    conn = sqlite3.connect(tmp_path / "data" / "heedful.db")  # HEEDFUL_DATA_DIR, see conftest
    try:
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 6
    finally:
        conn.close()


def replay_command(transcript: Path, window: int, env: dict[str, str] | None = None) -> Any:
    """``python -m cli replay`` run as the shell would; its output document."""
    output = transcript.with_suffix(".out.json")
    command = ["replay", str(transcript), "--context-window", str(window), "--output", str(output)]
    done = subprocess.run(
        [sys.executable, "-m", "cli", *command],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(output.read_text())


def test_the_installed_command_runs_offline(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript, turns=2)
    assert replay_command(transcript, 4000)["messages"] == 4


def test_tool_results_expire_once_unreferenced_even_with_room_to_spare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"id": "u1", "role": "user", "content": "Search the logs for ConnectionRefusedError"},
        {"id": "t1", "role": "tool", "content": "db/pool.py:88 ConnectionRefusedError: port 5432 closed"},
        {"id": "a1", "role": "assistant", "content": "Postgres on port 5432 refused the connection."},
    ]
    for n in range(2, 6):
        rows.append({"id": f"u{n}", "role": "user", "content": f"Unrelated question {n} about lunch plans"})
        rows.append({"id": f"a{n}", "role": "assistant", "content": "Pasta sounds good."})
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows))
    probes = tmp_path / "p.jsonl"
    probes.write_text(json.dumps({"id": "q", "content": "Which port refused the connection again?"}) + "\n")
    code, out, _ = run(capsys, str(transcript), "--context-window", "100000", "--probes", str(probes))
    assert code == 0 and out is not None
    final_sources = [s for m in out["final"]["messages"] for s in m["sources"]]
    assert "t1" not in final_sources and "u1" in final_sources
    assert any(e["target"] == "t1" and e["action"] == "prune" for e in out["ledger"])
    # Referred to again, it is recalled verbatim.
    probe_sources = [s for m in out["probes"][0]["context"]["messages"] for s in m["sources"]]
    assert "t1" in probe_sources


def test_a_live_model_writes_the_summaries_and_the_calls_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_server: FakeOpenAIServer
) -> None:
    def answer(body: dict[str, object]) -> str:
        if body.get("response_format"):  # the curator: no advice to give
            return json.dumps(
                {"retain": [], "demote": [], "drop": [], "clear_all": False, "resolved": [], "roles": []}
                | {"summary": "nothing to add"}
            )
        return "MODEL SUMMARY: the deploy and the database were discussed at length."

    fake_server.reply = answer
    transcript = tmp_path / "t.jsonl"
    rows = []
    for n in range(12):
        question = f"What did we decide about deploy.sh and db-stage-2? (question {n})"
        reply = (
            f"We decided to deploy the billing service from deploy.sh on Friday {n + 1} March at 02:00 "
            f"UTC. The migration failed with ECONNREFUSED on port {5400 + n} because db-stage-2 was down. "
        ) * 3
        rows += [
            {"id": f"u{n}", "role": "user", "content": question},
            {"id": f"a{n}", "role": "assistant", "content": reply},
        ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    args = [str(transcript), "--context-window", "1200", "--consent", "keep"]
    code, live, _ = run(capsys, *args, "--base-url", fake_server.base_url, "--model", "fake-model")
    assert code == 0 and live is not None
    calls = live["curation_calls"]
    assert calls["model"] == "fake-model" and calls["summaries_written"] > 0
    assert calls["calls"] > calls["summaries_written"] and calls["prompt_tokens"] > 0
    sent = "\n".join(m["content"] for m in live["final"]["messages"])
    assert "MODEL SUMMARY" in sent, "the model's summaries stand in for older replies"
    assert "ECONNREFUSED" in sent and "db-stage-2" in sent, "every entity of a summarized reply is kept"
    users = {str(r["id"]): str(r["content"]) for r in rows if r["role"] == "user"}
    assert not [e for e in live["ledger"] if e["target"] in users and e["action"] != "tag"], (
        "without consent, no user message was touched"
    )
    assert {r["body"]["model"] for r in fake_server.requests} == {"fake-model"}

    # Without --base-url nothing is asked of any model: offline and as before.
    asked = len(fake_server.requests)
    code, offline, _ = run(capsys, *args)
    assert code == 0 and offline is not None and "curation_calls" not in offline
    assert len(fake_server.requests) == asked


NAMES = ("Caroline", "Melanie", "Lisbon", "Oslo", "Priya", "Tomas", "Nairobi", "Quito", "Kenji", "Amara")


def test_replay_is_the_same_whatever_the_interpreters_hash_seed(tmp_path: Path) -> None:
    # Set iteration order changes with PYTHONHASHSEED; nothing of it may reach the output. Many
    # entities coming and going make any such order show in the ledger.
    transcript = tmp_path / "t.jsonl"
    rows = []
    for n in range(40):
        a, b, c = (NAMES[(n * k) % len(NAMES)] for k in (1, 3, 7))
        text = f"{a} met {b} in {c} about deploy-{n % 7}.sh and error E{n % 5}0{n % 3}. " * 3
        rows.append({"id": f"u{n}", "role": "user", "content": text})
        rows.append({"id": f"a{n}", "role": "assistant", "content": f"So {b} and {a} talked in {c}. " * 5})
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    outputs = []
    for seed in ("1", "2"):
        # A throwaway database each: a kept one would give the second run's messages other ids.
        env = {**{k: v for k, v in os.environ.items() if k != "HEEDFUL_DATA_DIR"}, "PYTHONHASHSEED": seed}
        document = replay_command(transcript, 3000, env)
        del document["curate_ms"]  # timings differ between any two runs
        outputs.append(document)
    assert outputs[0]["ledger"] and outputs[0] == outputs[1]
