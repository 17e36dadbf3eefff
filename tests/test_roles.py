"""The heuristic memory roles: what part a message plays in the conversation's story."""

from __future__ import annotations

import pytest

from engine.curation.items import MemoryRole
from engine.text.analysis import analyse_text


def role_of(text: str) -> MemoryRole:
    return analyse_text(text).memory_role


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("The login fails with a KeyError in auth.py:42.", MemoryRole.ERROR),
        ("It crashed again after the upgrade.", MemoryRole.ERROR),
        ("I tried clearing the cache and it still fails.", MemoryRole.ATTEMPT),
        ("Let me try setting PYTHONPATH before running the tests.", MemoryRole.ATTEMPT),
        ("You could try running it with --no-cache.", MemoryRole.ATTEMPT),
        ("As a workaround I pinned requests to 2.31.", MemoryRole.ATTEMPT),
        ("Restarting the worker didn't help.", MemoryRole.ATTEMPT),
        ("That fixed it, the deploy works now!", MemoryRole.RESOLUTION),
        ("I tried the new flag and that fixed it.", MemoryRole.RESOLUTION),
        ("It failed because the token had expired.", MemoryRole.ERROR),
        ("The root cause was a stale lock file.", MemoryRole.CAUSE),
        ("Let's deploy on Fridays from now on.", MemoryRole.DECISION),
        ("I prefer short answers with code.", MemoryRole.PREFERENCE),
        ("The meeting is on 2024-03-14.", MemoryRole.FACT),
        ("thanks!", MemoryRole.NOISE),
        ("Here is the rest of the document you asked about.", MemoryRole.CONTEXT),
    ],
)
def test_each_message_gets_the_role_a_reader_would_give_it(text: str, role: MemoryRole) -> None:
    assert role_of(text) is role
