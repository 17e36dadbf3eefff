"""Cross-session memory without a store: which memories a prompt gets, the offline assessment of
a conversation, and the memory settings."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from cli.chat import build_services
from engine.chat import PromptMessage
from engine.memory.assessed import Assessment
from engine.memory.assessment import OfflineAssessor, assess_offline
from engine.memory.memories import MEMORY_HEADER, PROMPT_MEMORIES, memory_section, select_for_prompt
from sessions.config import load_config
from tests.apphelpers import write_config
from tests.memory_helpers import CHIT_CHAT, COUNTER, DECISIONS, T0, memory_at

# --- choosing memories for a prompt ---------------------------------------------------------------


def test_only_important_or_pinned_unexpired_memories_are_eligible() -> None:
    now = T0 + timedelta(days=10)
    memories = [
        memory_at(0.9, T0, id_=1),  # permanent: in
        memory_at(0.69, T0 + timedelta(days=9), id_=2),  # below 0.7: out, however recent
        memory_at(0.1, T0, id_=3, pinned=True),  # pinned: in, and never expired
        memory_at(0.9, T0, id_=4, expires_at=now),  # expired at now (edited by hand): out
    ]
    chosen = select_for_prompt(memories, now, 10_000, COUNTER)
    assert [m.id for m in chosen] == [1, 3]


def test_the_five_most_recent_are_chosen_pinned_first_and_shown_oldest_first() -> None:
    memories = [memory_at(0.8, T0 + timedelta(days=i), id_=i) for i in range(1, 9)]
    memories.append(memory_at(0.2, T0, id_=99, pinned=True))
    chosen = select_for_prompt(memories, T0 + timedelta(days=30), 10_000, COUNTER)
    assert len(chosen) == PROMPT_MEMORIES
    # The pinned one, then the four newest; in the section they read oldest first.
    assert [m.id for m in chosen] == [99, 5, 6, 7, 8]


def test_the_section_fits_its_budget_and_skips_what_does_not_fit() -> None:
    long = memory_at(0.9, T0 + timedelta(days=2), id_=1, summary="word " * 200)
    short = memory_at(0.9, T0 + timedelta(days=1), id_=2, summary="Uses PostgreSQL 16.")
    budget = 60
    chosen = select_for_prompt([long, short], T0 + timedelta(days=3), budget, COUNTER)
    assert [m.id for m in chosen] == [2]
    section = memory_section(chosen)
    assert section.startswith(MEMORY_HEADER)
    assert "Uses PostgreSQL 16." in section
    assert COUNTER.count(section) + 4 <= budget  # + the message's overhead
    assert select_for_prompt([long, short], T0, 5, COUNTER) == []
    assert memory_section([]) == ""


# --- the offline assessment -----------------------------------------------------------------------


def test_the_offline_assessment_is_deterministic_and_rates_decisions_above_chit_chat() -> None:
    decided = assess_offline(DECISIONS)
    assert decided == assess_offline(list(DECISIONS))  # same input, same assessment
    chatted = assess_offline(CHIT_CHAT)
    assert decided.importance >= 0.7 > 0.3 > chatted.importance
    assert "PostgreSQL 16" in decided.summary
    assert "billing/api.py" in decided.tags
    assert "billing" in decided.topics
    assert len(decided.tags) <= 10 and len(decided.topics) <= 5
    assert "decision" in decided.reasoning
    assert chatted.summary.startswith("Small talk")


def test_facts_and_preferences_raise_importance_over_plain_context() -> None:
    context = [PromptMessage("user", "Can you explain how the scheduler picks the next job in this code?")]
    preference = [PromptMessage("user", "I prefer short answers with code first, always.")]
    assert assess_offline(preference).importance > assess_offline(context).importance


def test_assessments_are_clamped_into_range() -> None:
    clamped = Assessment.clamped(
        importance=4.2,
        summary="  a   summary \n",
        tags=[f"Tag{i}" for i in range(20)] + ["tag1"],
        topics=[f"topic {i}" for i in range(9)],
        reasoning=None,
    )
    assert clamped.importance == 1.0
    assert clamped.summary == "a summary"
    assert clamped.tags == tuple(f"tag{i}" for i in range(10))
    assert len(clamped.topics) == 5
    assert Assessment.clamped(importance=-3, summary="x").importance == 0.0
    for bad in ("high", None, True, float("nan")):
        with pytest.raises(ValueError):
            Assessment.clamped(importance=bad, summary="x")
    with pytest.raises(ValueError):
        Assessment.clamped(importance=0.5, summary="  ")


# --- config and wiring ----------------------------------------------------------------------------


def test_memory_settings_default_and_can_be_set(tmp_path: Path) -> None:
    loaded = load_config(tmp_path / "none.toml")
    assert loaded.config.memory.enabled is True
    assert loaded.config.memory.inactivity_minutes == 30
    path = tmp_path / "c.toml"
    path.write_text("[memory]\nenabled = false\ninactivity_minutes = 5\ninactivty = 1\n")
    loaded = load_config(path)
    assert loaded.config.memory.enabled is False
    assert loaded.config.memory.inactivity_minutes == 5
    assert loaded.problems == [
        f"{path}: unknown key 'inactivty' in [memory] — ignored (did you mean 'inactivity_minutes'?)."
    ]
    path.write_text("[memory]\ninactivity_minutes = 0\n")
    assert any("memory.inactivity_minutes" in p for p in load_config(path).problems)


def test_heedful_wires_memory_from_the_config() -> None:
    write_config("[memory]\nenabled = false\ninactivity_minutes = 5\n")
    services, _ = build_services(env={})
    try:
        assert services.memory.enabled is False
        assert services.memory.inactivity_seconds == 300
        assert services.turns.curations.memory_source is services.memory
        assert isinstance(services.memory.assessor, OfflineAssessor)
    finally:
        services.store.close()
