"""docs/hardening.md lists every fault and bad input with the tests that cover it: every test it
names must exist, so the table cannot drift from the suite."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "hardening.md"
# `test_file.py::test_name[params]`, or `::test_name` for one more test of the file named before it.
_REFERENCE = re.compile(r"`(?:(test_\w+\.py))?::(test_\w+?)(?:\*)?(?:\[[^\]]*\])?`")


def references() -> list[tuple[str, str, bool]]:
    found: list[tuple[str, str, bool]] = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        current: str | None = None
        for match in _REFERENCE.finditer(line):
            current = match.group(1) or current
            assert current is not None, f"{match.group(0)} names no file in: {line}"
            found.append((current, match.group(2), match.group(0).endswith("*`")))
    return found


def test_every_test_the_hardening_table_names_exists() -> None:
    refs = references()
    assert len(refs) > 60
    missing = []
    for file, name, prefix in refs:
        source = (ROOT / "tests" / file).read_text(encoding="utf-8")
        ending = "" if prefix else r"\("
        pattern = rf"^(?:async )?def {re.escape(name)}{ending}"
        if not re.search(pattern, source, re.MULTILINE):
            missing.append(f"{file}::{name}")
    assert not missing, missing
