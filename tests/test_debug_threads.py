"""Repeated errors and debugging threads (engine.debugging): the same error pasted again is
recognised whatever the run changed, and a thread reads cause -> fixes -> result -> learning."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.debugging.signatures import normalise, sight
from engine.debugging.threads import DebugTracker

PYTHON = """Traceback (most recent call last):
  File "/home/ana/shop/app/db.py", line {line}, in connect
    conn = psycopg2.connect(dsn)
  File "/home/ana/.venv/lib/python3.11/site-packages/psycopg2/__init__.py", line 122, in connect
    conn = _connect(dsn, connection_factory=connection_factory, **kwasync)
ConnectionRefusedError: [Errno 111] Connection refused: 127.0.0.1:{port} at {time}"""

NODE = """/srv/api/server.js:{line}
    throw err;
    ^

Error: connect ECONNREFUSED 127.0.0.1:{port}
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:{line}:16)
    at Client.connect (/srv/api/node_modules/pg/lib/client.js:{line}:9)
    at main (/srv/api/server.js:{line}:5)"""

RUST = """error[E0382]: borrow of moved value: `config`
  --> src/main.rs:{line}:20
   |
{line} |     let config = load();
   |         ------ move occurs because `config` has type `Config`
{port} |     run(config);
   |         ------ value moved here
   = note: this error originates in the macro"""

GO = """panic: runtime error: index out of range [{port}] with length 3

goroutine 1 [running]:
main.lookup(...)
\t/home/ana/tool/main.go:{line} +0x1d
main.main()
\t/home/ana/tool/main.go:{port} +0x{line}
exit status 2"""


@pytest.mark.parametrize(
    ("trace", "name", "line", "files"),
    [
        (
            PYTHON,
            "ConnectionRefusedError",
            "ConnectionRefusedError: [Errno 111]",
            ("/home/ana/shop/app/db.py",),
        ),
        (NODE, "Error", "Error: connect ECONNREFUSED 127.0.0.1:5432", ("/srv/api/server.js",)),
        (RUST, "error[E0382]", "error[E0382]: borrow of moved value: `config`", ("src/main.rs",)),
        (GO, "panic", "panic: runtime error: index out of range [5432]", ("/home/ana/tool/main.go",)),
    ],
)
def test_each_language_s_error_is_named_with_its_files(
    trace: str, name: str, line: str, files: tuple[str, ...]
) -> None:
    found = sight(trace.format(line=42, port=5432, time="2025-03-01 10:00:01"))
    assert found is not None
    assert found.signature.name == name
    assert found.line.startswith(line)
    assert found.files == files  # the user's own files, verbatim; no library ones
    assert found.paste


@pytest.mark.parametrize("trace", [PYTHON, NODE, RUST, GO])
def test_two_runs_of_the_same_error_are_the_same_and_another_error_is_not(trace: str) -> None:
    first = sight(trace.format(line=42, port=5432, time="2025-03-01 10:00:01"))
    again = sight("still failing:\n" + trace.format(line=47, port=5433, time="2025-03-01T11:20:09Z"))
    other = sight(
        trace.format(line=42, port=5432, time="x").replace("main", "serve").replace("app/db", "app/cache")
    )
    assert first is not None and again is not None and other is not None
    assert first.signature == again.signature
    assert first.signature != other.signature


def test_an_error_named_in_a_reply_is_not_a_paste() -> None:
    reply = (
        "Your traceback ends with\nConnectionRefusedError: [Errno 111] Connection refused\n"
        "which means nothing listens on the port. Start the database first, then run the app again; "
        "if it persists, check the host in settings.py and the port in docker-compose.yml."
    )
    found = sight(reply)
    assert found is not None and not found.paste
    assert sight("Thanks, that makes sense. What about the cache?") is None


def conversation() -> list[tuple[str, str]]:
    def paste(n: int) -> str:
        return PYTHON.format(line=12 + n, port=5432, time=f"2025-03-01 10:0{n}:00")

    return [
        ("user", "Getting this when I start the shop:\n```\n" + paste(0) + "\n```"),
        (
            "assistant",
            "PostgreSQL is probably not running. Try `sudo service postgresql start` and run it again.",
        ),
        ("user", "still failing\n" + paste(1)),
        ("assistant", "Check that DATABASE_URL in .env uses port 5432 and host 127.0.0.1."),
        ("user", paste(2)),
        ("assistant", "Run `docker compose up -d db` to start the database container first."),
        ("user", "That worked! The db container wasn't running after the reboot."),
        ("assistant", "Great. You could add `restart: always` to the db service."),
    ]


def tracked(messages: list[tuple[str, str]]) -> DebugTracker:
    tracker = DebugTracker()
    for n, (role, text) in enumerate(messages):
        tracker.observe(n, role, text, f"#{n}")
    return tracker


def test_the_same_traceback_pasted_three_times_is_one_group_of_three() -> None:
    (group,) = tracked(conversation()).repeats()
    assert group.ids == (0, 2, 4)
    assert group.representative == 4  # the latest paste stands for the others
    assert group.reason() == "same error as #4 (x3)"


def test_a_debugging_thread_reads_cause_fixes_result_learning_with_sources() -> None:
    (thread,) = tracked(conversation()).threads()
    line = thread.line()
    cause, tried, result, learning = line.split(" -> ")
    assert "ConnectionRefusedError: [Errno 111] Connection refused" in cause
    assert "/home/ana/shop/app/db.py" in cause and "x3" in cause
    assert '#5 "Run `docker compose up -d db` to start the database container first."' in tried
    assert "#1" in tried and "#3" in tried
    assert result.startswith("result: resolved at #6")
    assert "db container wasn't running after the reboot" in learning
    assert thread.sources == (0, 1, 2, 3, 4, 5, 6)  # the reply after it is not part of it


def test_an_unresolved_thread_says_so_and_another_error_closes_it() -> None:
    messages = conversation()[:4]
    messages.append(("user", "Now a different one:\n" + NODE.format(line=9, port=6379, time="")))
    first, second = tracked(messages).threads()
    assert "moved on to Error (#4)" in first.line()
    assert "no outcome reported yet" in second.line()
    assert "unresolved so far" in second.line()


# --- properties ---------------------------------------------------------------------------------

noise = st.text(alphabet=st.sampled_from("abc019:/._- x\n\tT0e+Z"), max_size=60)


@given(noise)
@example("00x0")  # was "<n>0x0", then "<n><addr>"
@example("123abc 1.5x")
def test_normalising_is_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once


def test_a_number_inside_a_name_tells_errors_apart() -> None:
    first = sight(PYTHON.format(line=1, port=1, time="t").replace("app/db.py", "app/db1.py"))
    second = sight(PYTHON.format(line=1, port=1, time="t").replace("app/db.py", "app/db2.py"))
    assert first is not None and second is not None
    assert first.signature != second.signature


@given(noise, st.integers(0, 99_999), st.integers(0, 99_999))
def test_numbers_do_not_tell_errors_apart(text: str, a: int, b: int) -> None:
    assert normalise(f"{text} port {a} line {a}") == normalise(f"{text} port {b} line {b}")


pieces = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant", "tool"]),
        st.sampled_from(
            [
                PYTHON.format(line=1, port=1, time="t"),
                PYTHON.format(line=2, port=9, time="2025-01-01"),
                NODE.format(line=3, port=4, time=""),
                RUST.format(line=5, port=6, time=""),
                GO.format(line=7, port=8, time=""),
                "still failing",
                "That worked, thanks!",
                "Try restarting the server with `make run`.",
                "Hello there",
            ]
        ),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(pieces)
def test_grouping_is_a_partition_of_the_repeated_pastes(messages: list[tuple[str, str]]) -> None:
    tracker = tracked(messages)
    groups = tracker.repeats()
    members = [i for g in groups for i in g.ids]
    assert len(members) == len(set(members))  # a message is in one group at most
    for group in groups:
        assert group.count == len(group.ids) == len(group.labels) >= 2
        assert list(group.ids) == sorted(group.ids)
        assert {tracker.sightings[i][1].signature for i in group.ids} == {group.signature}
    pasted = [i for i, (_, found) in tracker.sightings.items() if found.paste]
    repeated = {s for s in (tracker.sightings[i][1].signature for i in pasted)}
    assert sum(g.count for g in groups) == sum(
        1
        for i in pasted
        if sum(tracker.sightings[j][1].signature == tracker.sightings[i][1].signature for j in pasted) > 1
    )
    assert len(groups) <= len(repeated)
    for thread in tracker.threads():
        assert set(thread.sources) <= set(range(len(messages)))
        assert thread.line().count(" -> ") >= 3
