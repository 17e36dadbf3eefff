"""Fuzzing the readers of untrusted files: the transcript importer and the config loader.

No exception escapes: the importer raises only TranscriptError, naming the first bad line; the config
loader never raises and falls back to the defaults with problems in words. (The entity extractor's
fuzzing, and every regex's worst case, are in test_extractor_fuzzing.py.)
"""

from __future__ import annotations

import datetime
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cli.main import main
from engine.text.redaction import looks_like_key
from sessions.config import FALLBACK, Config, load_config
from sessions.transcript import TranscriptError, read_probes, read_transcript
from tests.config_documents import TOML_TEXT, Doc, config_documents
from tests.transcript_lines import LINES

# Hypothesis writes one file per example into the test's tmp_path, always before reading it, so the
# function-scoped fixture holds no state between examples.
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# --- The transcript importer -------------------------------------------------------------------------

Reader = Callable[[Path], list[Any]]
READERS = [pytest.param(read_transcript, id="transcript"), pytest.param(read_probes, id="probes")]


def read(reader: Reader, path: Path, lines: list[bytes]) -> list[Any] | TranscriptError:
    path.write_bytes(b"\n".join(lines))
    try:
        return reader(path)
    except TranscriptError as err:  # anything else escapes and fails the test
        return err


@pytest.mark.parametrize("reader", READERS)
@FUZZ
@given(lines=LINES)
@example(lines=[b'{"id": "a", "role": "user", "content": "hi"}', b"", b"[" * 100_000])
@example(lines=[b'{"id": "a", "role": "user", "content": ' + b"1" * 5000 + b"}"])
@example(lines=[b'{"id": "a", "role": "user", "content": "\\ud800"}'])
def test_importer_reads_every_line_or_names_the_first_bad_one(
    tmp_path: Path, reader: Reader, lines: list[bytes]
) -> None:
    path = tmp_path / "fuzz.jsonl"
    outcome = read(reader, path, lines)
    if isinstance(outcome, TranscriptError):
        said = str(outcome)
        named = re.escape(f"'{path}'")  # the path, quoted
        where = re.match(rf"{named}, line (\d+): .", said)
        assert where, said
        number = int(where[1])
        assert 1 <= number <= len(lines) and lines[number - 1].strip(), said
        # The first bad line: everything before it reads, and the error is the same without what follows.
        assert isinstance(read(reader, path, lines[: number - 1]), list), said
        assert str(read(reader, path, lines[:number])) == said
        return
    given_lines = [json.loads(line) for line in lines if line.strip()]
    assert [record.content for record in outcome] == [line["content"] for line in given_lines]
    assert [record.id for record in outcome] == [line["id"] for line in given_lines]
    for record in outcome:  # what reaches the store and the terminal can be encoded
        record.id.encode("utf-8")
        record.content.encode("utf-8")


HOSTILE_LINES = {  # a bad third line, and what the error says about it
    "deep_array": (b"[" * 100_000, "nested too deeply"),  # was: RecursionError
    "deep_object": (b'{"a":' * 100_000, "nested too deeply"),  # was: RecursionError
    "long_number_in_extra_field": (
        b'{"id": "x", "role": "user", "content": "hi", "n": ' + b"1" * 5000 + b"}",
        "too many digits",  # was: ValueError
    ),
    "long_number_as_id": (
        b'{"id": ' + b"9" * 4301 + b', "role": "user", "content": "hi"}',
        "too many digits",
    ),
    "lone_surrogate_in_content": (
        b'{"id": "x", "role": "user", "content": "a \\ud800 b"}',
        "content holds a lone surrogate (\\ud800)",  # was: accepted, then failed in the store
    ),
    "lone_surrogate_in_id": (
        b'{"id": "x\\udc00", "role": "user", "content": "hi"}',
        "id holds a lone surrogate (\\udc00)",  # was: accepted, then a traceback printing the output
    ),
    "bad_byte": (b'{"id": "x", "role": "user", "content": "hi\xff"}', "not UTF-8"),
    "raw_nul": (b'{"id": "x", "role": "user", "content": "a\x00b"}', "invalid JSON"),
    "nan_content": (b'{"id": "x", "role": "user", "content": NaN}', "content"),
    "missing_content": (b'{"id": "x", "role": "user"}', "'content' is missing"),
    "byte_order_mark": (b"\xef\xbb\xbf{}", "invalid JSON"),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("bad", "said"), HOSTILE_LINES.values(), ids=HOSTILE_LINES.keys())
def test_importer_names_the_line_of_hostile_input(
    tmp_path: Path, reader: Reader, bad: bytes, said: str
) -> None:
    good = b'{"id": "ok", "role": "user", "content": "fine"}'
    outcome = read(reader, tmp_path / "t.jsonl", [good, b"  ", bad, good])
    assert isinstance(outcome, TranscriptError)
    assert ", line 3: " in str(outcome) and said in str(outcome)


def test_importer_accepts_an_escaped_surrogate_pair(tmp_path: Path) -> None:
    outcome = read(
        read_transcript, tmp_path / "t.jsonl", [b'{"id": "a", "role": "user", "content": "\\ud83d\\ude00"}']
    )
    assert not isinstance(outcome, TranscriptError) and outcome[0].content == "😀"


@pytest.mark.parametrize(
    "content",
    [b'"a \\ud800 b"', b"[" * 100_000, b"1" * 5000],
    ids=["lone_surrogate", "deep_array", "long_number"],
)
def test_replay_stops_on_hostile_lines_with_the_line_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    # Before: a lone surrogate failed in the store ("'utf-8' codec can't encode") or, in an id, crashed
    # the JSON output with a traceback; deep nesting raised RecursionError.
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(
        b'{"id": "a", "role": "user", "content": "hi"}\n{"id": "b", "role": "user", "content": '
        + content
        + b"}\n"
    )
    code = main(["replay", str(transcript), "--context-window", "1000"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"'{transcript}', line 2: " in err and "Traceback" not in err


# --- The config loader -------------------------------------------------------------------------------


def dotted(path: tuple[str, ...]) -> str:
    """A path as the loader names it: bare keys as they are, others quoted ('providers."my server"')."""
    return ".".join(
        key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False) for key in path
    )


def load(tmp_path: Path, data: bytes) -> tuple[Path, Any]:
    path = tmp_path / "config.toml"
    path.write_bytes(data)
    return path, load_config(path)  # never raises: anything raised fails the test


def check_common(path: Path, loaded: Any) -> None:
    assert loaded.exists
    assert all(problem.startswith(f"{path}: ") and problem.endswith(".") for problem in loaded.problems)
    if any(FALLBACK in problem for problem in loaded.problems):
        assert loaded.config == Config()


@FUZZ
@given(doc=config_documents())
def test_config_loader_keeps_good_settings_and_names_each_bad_key(tmp_path: Path, doc: Doc) -> None:
    path, loaded = load(tmp_path, tomli_w.dumps(doc.data).encode())
    check_common(path, loaded)
    config, problems = loaded.config, loaded.problems
    if doc.bad or doc.soft:
        assert problems and all(FALLBACK in problem for problem in problems)
        assert config == Config()
        named = {problem.removeprefix(f"{path}: ") for problem in problems}
        suspects = doc.bad | doc.soft
        for said in named:  # every problem names a key that is wrong (or the table holding it)
            assert any(
                said.startswith((dotted(bad[:k]) + ": ", dotted(bad[:k]) + " is required"))
                for bad in suspects
                for k in range(1, len(bad) + 1)
            ), (said, suspects)
        for bad in doc.bad:  # and every wrong value is named
            assert any(
                said.startswith((dotted(bad) + ": ", dotted(bad) + " is required")) for said in named
            ), (bad, named)
        return
    # A usable file: every value is kept, each unknown key is one warning, and so is each key
    # written where its variable's name belongs (random text often looks like one).
    data = doc.data
    providers = data.get("providers", {})
    keys_written = [
        name
        for name, provider in providers.items()
        if isinstance(provider.get("api_key_env"), str) and looks_like_key(provider["api_key_env"])
    ]
    assert len(problems) == len(doc.unknown) + len(keys_written)
    for key in doc.unknown:
        assert any(f"unknown key '{key}'" in problem for problem in problems), key
    for name in keys_written:
        assert any(
            f"{dotted(('providers', name, 'api_key_env'))} holds what looks like an API key" in problem
            for problem in problems
        ), name
    assert config.model == data.get("model")
    assert config.system_prompt == data.get("system_prompt", Config().system_prompt)
    assert config.max_retries == data.get("max_retries", 2)
    assert config.profile == data.get("profile", "balanced")
    assert config.keys == data.get("keys", {})
    timeouts = data.get("timeouts", {})
    assert (config.timeouts.connect, config.timeouts.read) == (
        timeouts.get("connect", 10.0),
        timeouts.get("read", 60.0),
    )
    assert {name: (p.base_url, p.models) for name, p in config.providers.items()} == {
        name: (p["base_url"], p["models"]) for name, p in data.get("providers", {}).items()
    }


EDITS = st.lists(
    st.tuples(
        st.floats(0, 1),
        st.sampled_from(["insert", "delete", "replace"]),
        st.sampled_from(list("[]{}=\"'.,\n#\\ x1\t\x00")),
    ),
    min_size=1,
    max_size=3,
)


@FUZZ
@given(doc=config_documents(), edits=EDITS)
def test_config_loader_names_the_line_of_a_syntax_error(
    tmp_path: Path, doc: Doc, edits: list[tuple[float, str, str]]
) -> None:
    text = tomli_w.dumps(doc.data)
    for where, how, char in edits:
        at = int(where * len(text))
        text = text[:at] + (char if how != "delete" else "") + text[at + (how != "insert") :]
    path, loaded = load(tmp_path, text.encode())
    check_common(path, loaded)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        assert loaded.config == Config() and len(loaded.problems) == 1
        said = loaded.problems[0].removeprefix(f"{path}: ")
        line = re.match(r"line (\d+), column (\d+): \S", said)
        assert said.startswith("at the end of the file: ") or (
            line and 1 <= int(line[1]) <= text.count("\n") + 1
        ), said


@FUZZ
@given(
    data=st.binary(max_size=200)
    | TOML_TEXT.map(str.encode)
    | st.text(max_size=60).map(lambda t: t.encode("utf-8", "surrogatepass"))
)
@example(data=b"\xef\xbb\xbfmax_retries = 0\r\n")
def test_config_loader_survives_any_bytes(tmp_path: Path, data: bytes) -> None:
    path, loaded = load(tmp_path, data)
    check_common(path, loaded)
    if data == b"\xef\xbb\xbfmax_retries = 0\r\n":  # a byte-order mark and CRLF, as Windows editors write
        assert loaded.problems == [] and loaded.config.max_retries == 0


HOSTILE_CONFIGS = {  # a file, and what one of its problems says
    "deep_array": ("max_retries = " + "[" * 5000, "nested too deeply"),  # was: RecursionError
    "deep_inline_table": ("x = " + "{a = " * 5000, "nested too deeply"),  # was: RecursionError
    "long_number": ("max_retries = " + "1" * 5000, "too many digits"),  # was: ValueError
    "long_window": (
        "[providers.p]\nbase_url = 'http://x'\nmodels = {m = " + "9" * 4301 + "}",
        "too many digits",
    ),
    "lone_surrogate_escape": ('model = "\\ud800"', "line 1, column"),
    "raw_nul": ("model = '\x00'", "line 1, column"),
    "nan_and_inf": ("[timeouts]\nread = nan\nconnect = -inf", "timeouts.read"),
    "datetime_for_int": ("max_retries = 1979-05-27T07:32:00Z", "max_retries"),
    "provider_without_url": ("[providers.p]\nmodels = {m = 1}", "providers.p.base_url is required"),
    "quoted_provider_name": (
        '[providers."a b"]\nbase_url = "ftp://x"',
        'providers."a b".base_url: should start with http',
    ),
}


@pytest.mark.parametrize(("text", "said"), HOSTILE_CONFIGS.values(), ids=HOSTILE_CONFIGS.keys())
def test_config_loader_reports_hostile_files(tmp_path: Path, text: str, said: str) -> None:
    _, loaded = load(tmp_path, text.encode())
    assert loaded.config == Config() and loaded.problems
    assert all(FALLBACK in problem for problem in loaded.problems)
    assert any(said in problem for problem in loaded.problems)


def test_datetime_values_are_reported_by_kind(tmp_path: Path) -> None:
    # tomli_w writes what the fuzzer draws; a datetime where a string belongs is named, not crashed on.
    _, loaded = load(tmp_path, tomli_w.dumps({"model": datetime.datetime(2020, 1, 1)}).encode())
    assert (
        loaded.config == Config() and "model" in loaded.problems[0] and "(got datetime)" in loaded.problems[0]
    )
