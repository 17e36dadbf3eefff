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
    names: tuple[str, ...] = ()
    """What ``from module import ...`` names (a name may be a module itself)."""


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
            names = tuple(alias.name for alias in node.names)
            found.append(Import(node.module, node.lineno, typing_only, names))
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


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: str) -> dict[str, set[str]]:
    """Which modules of ``package`` each of its modules imports: wherever the import stands, type-only
    (``if TYPE_CHECKING:``) and inside functions included."""
    paths = {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        for found in imports_of(path):
            targets = [f"{found.module}.{n}" for n in found.names if f"{found.module}.{n}" in paths]
            if not targets and found.module in paths:
                targets = [found.module]
            graph[name].update(t for t in targets if t != name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other in a circle (strongly connected, more than one)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            group = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return found


def test_the_ui_modules_import_each_other_in_no_circle() -> None:
    """A part of a screen is read (and changed) without its screen: what it needs comes through a
    narrow interface, never by importing the module that imports it."""
    graph = import_graph("tui")
    assert len(graph) > 40
    assert circles(graph) == []


def test_the_circle_check_sees_type_only_and_package_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tui" / "screens").mkdir(parents=True)
    (tmp_path / "tui" / "__init__.py").write_text("")
    (tmp_path / "tui" / "screens" / "__init__.py").write_text("")
    (tmp_path / "tui" / "screens" / "a.py").write_text("from tui.screens import b\n")
    (tmp_path / "tui" / "screens" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tui.screens.c import C\n"
    )
    (tmp_path / "tui" / "screens" / "c.py").write_text("def f():\n    import tui.screens.a\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert circles(import_graph("tui")) == [["tui.screens.a", "tui.screens.b", "tui.screens.c"]]
    (tmp_path / "tui" / "screens" / "c.py").write_text("import tui.screens\n")
    assert circles(import_graph("tui")) == []


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
