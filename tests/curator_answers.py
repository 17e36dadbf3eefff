"""What a fake curator model answers, for the tests and the benchmarks (no test framework here:
the benchmark's measured process imports it)."""

from __future__ import annotations

NEUTRAL = {
    "retain": [],
    "demote": [],
    "drop": [],
    "clear_all": False,
    "resolved": [],
    "roles": [],
    "summary": "",
}
"""Valid advice that changes nothing: every decision is left to the heuristics."""
