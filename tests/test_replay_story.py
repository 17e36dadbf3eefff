"""``heedful replay`` and the story so far: an optional ``story`` field per context, whose lines
name the transcript's ids they quote, and a summary message marked as the story inside the budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main
from engine.text.tokens import load_counter
from tests.test_replay import write_transcript

COUNTER = load_counter("", model_is_offline=True)


def test_the_story_is_an_optional_field_whose_lines_name_the_transcript_ids_they_quote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "t.jsonl"
    rows = write_transcript(transcript, turns=60)
    originals = {str(r["id"]): str(r["content"]) for r in rows}
    probes = tmp_path / "p.jsonl"
    probes.write_text(json.dumps({"id": "q1", "content": "What did we decide about PostgreSQL?"}) + "\n")
    code = main(["replay", str(transcript), "--context-window", "3000", "--probes", str(probes)])
    captured = capsys.readouterr()
    assert code == 0
    out = json.loads(captured.out)
    context = out["probes"][0]["context"]
    story = context["story"]
    assert story
    (message,) = [m for m in context["messages"] if m.get("section") == "story"]
    assert set(message) == {"role", "content", "sources", "form", "section"} and message["role"] == "system"
    assert message["form"] == "summary"  # the contract's forms stay four; the section is optional
    verbatim = {s for m in context["messages"] if m["form"] == "verbatim" for s in m["sources"]}
    named = [s for line in story for s in line["sources"]]
    assert message["sources"] == list(dict.fromkeys(named))
    for line in story:
        assert set(line) == {"sources", "line"}
        assert line["line"] in message["content"]
        for source in line["sources"]:
            assert source in originals and source not in verbatim  # a real message, not sent whole
            assert f"{source}" in line["line"]
    recount = sum(COUNTER.count(m["content"]) + 4 for m in context["messages"]) + 3
    assert recount <= out["budget_tokens"]


def test_standing_instructions_keep_a_contract_form_and_name_their_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "t.jsonl"
    rows = write_transcript(transcript, turns=20)
    rows.insert(2, {"id": "s1", "role": "user", "content": "From now on answer in French, please."})
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = main(["replay", str(transcript), "--context-window", "3000"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    (section,) = [m for m in out["final"]["messages"] if m.get("section") == "standing"]
    assert section["form"] == "memory" and "s1" in section["sources"]
    assert "answer in French" in section["content"]
