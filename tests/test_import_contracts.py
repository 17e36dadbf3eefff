"""Every module keeps the direction of dependency docs/architecture.md draws: read from the source
(each import statement, wherever it stands), so a module no test imports is checked too."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("engine", "sessions", "providers", "tui", "themes", "cli")

FORBIDDEN: dict[str, frozenset[str]] = {
    "engine": frozenset(
        {"sessions", "providers", "tui", "themes", "cli", "textual", "rich", "openai", "sqlite3"}
    ),
    "sessions": frozenset({"tui", "providers", "cli", "themes", "textual", "openai"}),
    "providers": frozenset({"tui", "cli", "themes", "textual"}),
    "themes": frozenset({"engine", "sessions", "providers", "tui", "cli"}),
}
"""What each package may never import, even for type names."""

RUN_TIME_ONLY: dict[str, frozenset[str]] = {"tui": frozenset({"providers", "sessions", "cli"})}
"""What a package may name for types (under ``if TYPE_CHECKING:``) but never import at run time:
``cli/chat.py`` hands the app what it needs."""


@dataclass(frozen=True)
class Import:
    module: str
    line: int
    typing_only: bool


def imports_of(path: Path) -> list[Import]:
    """Every module ``path`` imports, and whether the import stands under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []

    def visit(node: ast.AST, typing_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for part in child.body:
                    visit_one(part, True)
                for part in child.orelse:
                    visit_one(part, typing_only)
            else:
                visit_one(child, typing_only)

    def visit_one(node: ast.AST, typing_only: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(alias.name, node.lineno, typing_only) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.append(Import(node.module, node.lineno, typing_only))
        visit(node, typing_only)

    visit(tree, False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def modules() -> list[Path]:
    return sorted(p for package in PROJECT for p in (ROOT / package).rglob("*.py"))


def breaches(path: Path) -> list[str]:
    package = path.relative_to(ROOT).parts[0]
    never = FORBIDDEN.get(package, frozenset())
    not_at_run_time = RUN_TIME_ONLY.get(package, frozenset())
    said = []
    for found in imports_of(path):
        top = found.module.split(".")[0]
        if top in never or (top in not_at_run_time and not found.typing_only):
            said.append(f"{path.relative_to(ROOT)}:{found.line} imports {found.module}")
    return said


def test_every_module_of_the_project_keeps_the_direction_of_dependency() -> None:
    checked = modules()
    assert len(checked) > 150  # the whole tree, not a list kept by hand
    assert [b for path in checked for b in breaches(path)] == []


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("from tui.app import HeedfulApp\n", ["engine/x.py:1 imports tui.app"]),
        ("def f():\n    import sqlite3\n", ["engine/x.py:2 imports sqlite3"]),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sessions.store import S\n",
            ["engine/x.py:3 imports sessions.store"],
        ),
    ],
)
def test_the_check_finds_an_import_wherever_it_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, said: list[str]
) -> None:
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "x.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert breaches(tmp_path / "engine" / "x.py") == said


def test_the_ui_may_name_the_stores_types_but_not_import_it_at_run_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tui").mkdir()
    module = tmp_path / "tui" / "x.py"
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    module.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sessions.store import S\n"
    )
    assert breaches(module) == []
    module.write_text("from sessions.store import S\n", "utf-8")
    assert breaches(module) == ["tui/x.py:1 imports sessions.store"]
