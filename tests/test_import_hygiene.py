"""The engine and the store never pull in the UI, and start-up never pays for what it doesn't need."""

from __future__ import annotations

import subprocess
import sys

import pytest

UI_MODULES = ("textual", "rich", "tui", "themes")


def printed_by(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter (in this one, earlier tests have long
    imported everything)."""
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout


def imported_after(statement: str) -> set[str]:
    """Top-level module names present in a fresh interpreter after running ``statement``."""
    return set(
        printed_by(
            f"import sys\n{statement}\nprint(' '.join({{m.split('.')[0] for m in sys.modules}}))"
        ).split()
    )


@pytest.mark.parametrize(
    "module",
    [
        "engine.chat",
        "engine.errors",
        "engine.protocols",
        "engine.curation.prompt",
        "engine.text.tokens",
        "engine.turn.service",
        "sessions.paths",
        "sessions.config",
        "sessions.store",
        "providers.offline",
        "providers.openai_chat",
        "providers.resolve",
    ],
)
def test_core_modules_do_not_import_the_ui(module: str) -> None:
    loaded = imported_after(f"import {module}")
    assert not loaded & set(UI_MODULES), f"{module} imported {loaded & set(UI_MODULES)}"


def test_openai_is_imported_only_when_a_request_is_made() -> None:
    """openai costs ~0.3 s to import; the first screen must not wait for it."""
    loaded = imported_after("import cli.main, cli.chat, providers.openai_chat, tui.app")
    assert "openai" not in loaded
    assert "tiktoken" not in loaded


def test_the_curation_engine_is_imported_only_when_first_used() -> None:
    """The entity extractor compiles its patterns on import (~50 ms); the first screen must not
    wait for it: the UI imports only the plain view types."""
    code = (
        "import sys, cli.main, cli.chat, tui.app\n"
        "print(' '.join(m for m in ('engine.entities.extractor', 'engine.curation.session_curation')"
        " if m in sys.modules))"
    )
    assert printed_by(code).split() == []


def test_after_the_warm_up_the_first_message_of_a_process_loads_nothing_more() -> None:
    # A session opened from the store is not read again: without the warm-up, the first turn
    # after opening one imported the entity extractor and the role classifier (25-35 ms).
    code = (
        "import sys\n"
        "from engine.text.analysis import analyse_text, warm_up\n"
        "warm_up()\n"
        "before = set(sys.modules)\n"
        'analyse_text("Is src/db/pool.py:42 still failing since 14 May 2026? I decided: retry.")\n'
        "print(sorted(set(sys.modules) - before))"
    )
    assert printed_by(code).strip() == "[]"
