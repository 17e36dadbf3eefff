"""The same error pasted again and again competes for the budget once: the latest paste stands for
the others (an assistant's or tool's copy that does not fit is pruned "same error as #N (xK)", the
user's only ever asked about), and the debugging thread is one sourced line in the request."""

from __future__ import annotations

import pytest

from engine.chat import Role
from engine.curation.consent import ConsentChoice
from engine.curation.items import Item, ItemState
from engine.curation.ledger import EntryKind, LedgerEntry
from engine.curation.repeats import THREADS_HEADER
from engine.curation.result import CurationResult
from engine.curation.session_curation import SessionCuration
from engine.text.tokens import load_counter

COUNTER = load_counter("gpt-4o-mini")
FRAMES = "".join(
    f'  File "/home/ana/.venv/lib/python3.11/site-packages/psycopg2/pool_{k}.py", line {k}, in get_{k}\n'
    f"    return self._connect_{k}(dsn, timeout=timeout)\n"
    for k in range(6)
)


def trace(run: int) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/home/ana/shop/app/db.py", line {12 + run}, in connect\n'
        "    conn = pool.get(dsn)\n" + FRAMES + "ConnectionRefusedError: [Errno 111] Connection refused: "
        f"127.0.0.1:5432 (attempt {run}, 2025-03-01 10:0{run}:00)"
    )


FIXES = [
    "Try `sudo service postgresql start` so that PostgreSQL listens before the shop starts.",
    "Check that DATABASE_URL in .env uses port 5432 and host 127.0.0.1 rather than localhost.",
    "Set `listen_addresses = '*'` in postgresql.conf and restart the server.",
    "Run `docker compose up -d db` to start the database container before the app.",
    "Add a retry loop around pool.get in app/db.py so the app waits for the database.",
]


class Chat:
    def __init__(self, window: int = 2000) -> None:
        self.curation = SessionCuration(window=window, counter=COUNTER)
        self.next_id = 1
        self.ledger: list[LedgerEntry] = []

    def say(self, role: Role, text: str, apply: bool = True) -> Item:
        item = self.curation.add_message(self.next_id, role, text, COUNTER.count(text))
        self.next_id += 1
        if role == "user" and apply:
            self.ledger.extend(self.curation.apply(self.curation.plan(item)).ledger)
        return item


def debugging_chat(paster: Role, window: int = 2000) -> tuple[Chat, list[Item], CurationResult]:
    """Five runs of the same failing start-up, each pasted by ``paster``, a fix after each, some
    talk about something else, then a question about the error."""
    chat = Chat(window)
    pastes = []
    for run in range(5):
        if paster == "user":
            pastes.append(chat.say("user", "still failing:\n" + trace(run)))
        else:
            chat.say("user", "Run the shop again please, still failing?")
            pastes.append(chat.say(paster, trace(run)))
        chat.say("assistant", FIXES[run])
    chat.say("user", "That worked! The db container was not running after the reboot.")
    for turn in range(4):
        chat.say("user", f"Unrelated: what is a good name for the newsletter, take {turn}?")
        chat.say("assistant", f"For take {turn}: 'Shop Notes', 'The Cart' or 'Fresh Stock' would all work.")
    new = chat.say("user", "Why did the ConnectionRefusedError on port 5432 happen in app/db.py?", False)
    return chat, pastes, chat.curation.plan(new)


def verbatim(result: CurationResult) -> set[int]:
    return {s for m in result.messages if m.form == "verbatim" for s in m.sources}


@pytest.mark.parametrize("paster", ["tool", "assistant"])
def test_a_repeated_traceback_is_recalled_once(paster: Role) -> None:
    _chat, pastes, result = debugging_chat(paster)
    ids = [p.id for p in pastes]
    assert verbatim(result) & set(ids) == {ids[-1]}  # the latest paste stands for the others
    assert result.tokens <= result.budget_tokens


def test_an_assistant_s_copies_of_a_traceback_stand_aside_with_the_reason() -> None:
    chat, pastes, _result = debugging_chat("assistant")
    copies = [p.id for p in pastes[:-1]]
    pruned = {int(e.target): e.reason for e in chat.ledger if e.action == "prune" and int(e.target) in copies}
    assert set(pruned) == set(copies)  # each stood aside once the next paste came, with the reason
    assert all(reason.startswith("same error as #") for reason in pruned.values())
    assert all(chat.curation.by_id[i].state is ItemState.PRUNED for i in copies)  # restorable
    assert pastes[-1].state is ItemState.ACTIVE


def test_the_debugging_thread_is_one_line_naming_its_sources() -> None:
    _chat, pastes, result = debugging_chat("tool")
    (section,) = [m for m in result.messages if m.content.startswith(THREADS_HEADER)]
    assert section.form == "summary"
    assert "ConnectionRefusedError: [Errno 111] Connection refused" in section.content
    assert "/home/ana/shop/app/db.py" in section.content and "x5" in section.content
    assert "docker compose up -d db" in section.content
    assert "resolved at" in section.content and "db container was not running" in section.content
    assert {p.id for p in pastes} <= set(section.sources)  # every copy is named: restorable from it


def test_the_user_s_repeated_pastes_are_never_left_out_without_being_asked() -> None:
    _chat, pastes, result = debugging_chat("user", window=1400)
    sent = verbatim(result)
    asked = {i.item_id for i in result.consent.items} if result.consent else set()
    for paste in pastes:
        assert paste.id in sent or paste.id in asked or paste.id in result.left_out
        assert paste.state is ItemState.ACTIVE
    assert not [o for o in result.operations if o.target in {p.id for p in pastes} and o.after is not None]
    # Their copies are the ones that give way first, the latest paste kept.
    assert pastes[-1].id in sent
    assert asked and asked <= {p.id for p in pastes[:-1]}


def test_with_the_user_s_answer_for_the_session_their_copies_follow_it_with_the_reason() -> None:
    chat = Chat(1400)
    chat.curation.state.policy = ConsentChoice.REMOVE
    for run in range(5):
        chat.say("user", "still failing:\n" + trace(run))
        chat.say("assistant", FIXES[run])
    for turn in range(3):
        chat.say("user", f"Unrelated: a name for the newsletter, take {turn}?")
        chat.say("assistant", f"For take {turn}: 'Shop Notes' would work.")
    new = chat.say("user", "What about the ConnectionRefusedError in app/db.py?", apply=False)
    result = chat.curation.plan(new)
    entries = [*chat.ledger, *map(LedgerEntry.of, result.operations)]
    by_id = chat.curation.by_id
    moved = [
        e
        for e in entries
        if e.kind is EntryKind.OPERATION and e.after is not None and by_id[int(e.target)].role == "user"
    ]
    assert moved and all(e.requires_consent for e in moved)  # all by the user's answer
    assert any(e.reason.startswith("same error as #") and "you chose to remove" in e.reason for e in moved)


def test_a_copy_the_user_restores_is_not_set_aside_again() -> None:
    chat, pastes, _ = debugging_chat("assistant")
    copy = pastes[0]
    assert copy.state is ItemState.PRUNED
    chat.curation.restore(copy.id)
    chat.say("user", "Show me that first ConnectionRefusedError traceback again?")
    chat.say("assistant", "Here it is: the first run's ConnectionRefusedError came from app/db.py.")
    new = chat.say("user", "And the ConnectionRefusedError of that first run in app/db.py?", False)
    result = chat.curation.plan(new)
    assert not [e for e in chat.ledger if e.target == str(copy.id) and e.turn > 6 and e.action == "prune"]
    assert not [o for o in result.operations if o.target == copy.id and o.reason.startswith("same error")]
    assert chat.curation.by_id[copy.id].state is ItemState.ACTIVE
