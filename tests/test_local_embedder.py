"""The local embedding model: loaded from the files its wheel ships, with no network, and recall by
meaning through ``heedful replay --embeddings local``."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cli.main import main

pytest.importorskip("wordllama")

from providers.local_embedder import load_local_embedder


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("the network is off for this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_the_local_model_loads_offline_and_places_paraphrases_together(no_network: None) -> None:
    embedder = load_local_embedder()
    texts = [
        "How do I repair the engine of my car?",
        "Fixing an automobile motor, step by step",
        "A recipe for lemon cake with fresh berries",
        "",
    ]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, 256) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert not vectors[3].any()  # no words: a row of zeros, not NaN
    similar, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert similar > unrelated + 0.1
    assert embedder.name == "wordllama/l2_supercat"


def test_the_vectors_are_wordllamas_own(tmp_path: Path, no_network: None) -> None:
    import wordllama  # type: ignore[import-untyped]
    from wordllama import WordLlama

    # WordLlama's loader, offline: its tokenizer copied where it looks for it.
    folder = Path(WordLlama.get_file_path("tokenizer", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    shipped = Path(wordllama.__file__).parent / "tokenizers" / "l2_supercat_tokenizer_config.json"
    shutil.copyfile(shipped, folder / shipped.name)
    reference: Any = WordLlama.load(cache_dir=tmp_path, disable_download=True)
    texts = ["The deploy failed on staging", "short", "A much longer message " * 40]
    expected = reference.embed(texts, norm=True)
    assert np.allclose(load_local_embedder().embed(texts), expected, atol=1e-5)


FILLERS = (
    "The deploy script for billing-api needs a retry around the database migration step.",
    "Let's schedule the quarterly budget review for the finance team on Thursday afternoon.",
    "The hiking trail up the ridge was muddy after the storm, so bring boots.",
    "I am learning to bake sourdough bread; the starter needs feeding twice a day.",
    "Our football club won the regional league after a penalty shootout.",
    "The laptop battery drains quickly when the screen brightness is at maximum.",
    "Tomorrow's weather forecast says heavy rain and strong wind along the coast.",
    "The novel I am reading is a mystery set in nineteenth century Edinburgh.",
    "We should rename the variables in the parser module to make the code clearer.",
    "The train to the airport leaves every twenty minutes from platform four.",
)
EVIDENCE = "My sister adopted a little kitten from the animal shelter last spring."


def replay_probe(tmp_path: Path, capsys: pytest.CaptureFixture[str], embeddings: str) -> dict[str, Any]:
    rows = [
        {"id": "u0", "role": "user", "content": EVIDENCE},
        {
            "id": "a0",
            "role": "assistant",
            "content": "How lovely, a kitten from the shelter is a wonderful thing.",
        },
    ]
    for n in range(40):
        filler = FILLERS[n % len(FILLERS)]
        rows.append({"id": f"u{n + 1}", "role": "user", "content": f"{filler} Note number {n}."})
        rows.append({"id": f"a{n + 1}", "role": "assistant", "content": f"Understood: {filler}"})
    transcript, probes = tmp_path / "t.jsonl", tmp_path / "p.jsonl"
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # Not one word in common with the evidence: only its meaning can find it.
    probes.write_text(json.dumps({"id": "q", "content": "Which feline did my sibling take in?"}) + "\n")
    args = [str(transcript), "--context-window", "1000", "--consent", "remove", "--probes", str(probes)]
    assert main(["replay", *args, "--embeddings", embeddings]) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def test_replay_with_local_embeddings_recalls_a_paraphrased_questions_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_network: None
) -> None:
    words_alone = replay_probe(tmp_path, capsys, "off")
    sent = [m["content"] for m in words_alone["probes"][0]["context"]["messages"]]
    assert EVIDENCE not in sent
    assert "embeddings" not in words_alone  # the contract as it was

    by_meaning = replay_probe(tmp_path, capsys, "local")
    sent = [m["content"] for m in by_meaning["probes"][0]["context"]["messages"]]
    assert EVIDENCE in sent
    assert by_meaning["embeddings"] == "wordllama/l2_supercat"
    assert by_meaning["probes"][0]["context"]["tokens"] <= by_meaning["budget_tokens"]


@pytest.mark.parametrize(("setting", "loaded"), [("", False), ('embeddings = "local"\n', True)])
def test_the_embeddings_setting_loads_the_local_model_with_the_engine(
    setting: str, loaded: bool, no_network: None
) -> None:
    from tests.apphelpers import loaded_engine

    with loaded_engine(setting) as (services, engine):
        assert (engine.turns.curations.meaning is not None) is loaded
        assert not engine.notices
        session = services.store.create_session("cats")
        services.store.add_message(session.id, "user", EVIDENCE)
        with engine.turns.curations.held(session.id) as held:
            assert (held.curation.state.dense is not None) is loaded  # each curation takes it up
