"""Hypothesis strategies for transcript files as tools and people break them: good lines, lines
with a field dropped or of another type, JSON that json.dumps never writes, and raw bytes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

ROLES = ("system", "user", "assistant", "tool")
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
MESSAGES = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["a", "b", "c"]) | st.text(max_size=6),  # some ids repeat
        "role": st.sampled_from(ROLES),
        "content": st.text(max_size=30),
    },
    optional={
        "name": st.none() | st.text(max_size=6),
        "created_at": st.none() | st.text(max_size=6),
        "pinned": st.booleans(),
        "answer": JSON_VALUES,  # an unknown field, ignored
    },
)
FIELDS = ("id", "role", "content", "name", "created_at", "pinned")


def _broken(message: dict[str, Any], field: str, drop: bool, value: object) -> dict[str, Any]:
    broken = dict(message)
    if drop:
        broken.pop(field, None)
    else:
        broken[field] = value
    return broken


BROKEN_MESSAGES = st.builds(_broken, MESSAGES, st.sampled_from(FIELDS), st.booleans(), JSON_VALUES)
# JSON that json.dumps does not write: values past the int() digit limit, deep nesting, NaN, escapes
# of lone surrogates, and so on, as the value of a field.
RAW_VALUES = [
    "1" * 5000,
    "-" + "9" * 4301,
    "1e999",
    "NaN",
    "-Infinity",
    "[" * 5000 + "]" * 5000,
    '{"a":' * 3000 + "1" + "}" * 3000,
    "[" * 50 + "]" * 50,
    '"\\ud800"',
    '"\\udfff\\ud800"',
    '"\\ud83d\\ude00"',  # a pair: one real character
    '"\\u0000\\u001b]52;c;x\\u0007"',
    '"' + "\\\\" * 1000 + '"',
    "true",
    "null",
    "{}",
    '""',
]
RAW_FIELD_LINES = st.builds(
    lambda field, raw, n: (
        "{"
        + ", ".join(
            f'"{f}": {raw if f == field else json.dumps(v)}'
            for f, v in {"id": f"r{n}", "role": "user", "content": "hi"}.items()
        )
        + "}"
    ).encode(),
    st.sampled_from(["id", "role", "content"]),
    st.sampled_from(RAW_VALUES),
    st.integers(0, 3),
)
SPECIAL_LINES = [
    b"",
    b"   ",
    b"\t\r",
    b"\r",
    b"\x00",
    b'{"id": "z", "role": "user", "content": "a\x00b"}',  # a raw NUL in a string
    b"\xef\xbb\xbf{}",  # a byte-order mark
    b"\xff\xfe",
    b"\xed\xa0\x80",  # a surrogate written as UTF-8
    b"[" * 100_000,
    b'{"a":' * 100_000,
    b"1" * 10_000,
    b"{",
    b"[]",
    b"null",
]


def _dump(value: object, ascii_only: bool) -> bytes:
    # surrogatepass: text with lone surrogates becomes bytes that are not UTF-8, as a broken tool writes.
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


LINES = st.lists(
    st.one_of(
        st.builds(_dump, MESSAGES, st.booleans()),
        st.builds(_dump, MESSAGES, st.booleans()),  # twice: most files are mostly right
        st.builds(_dump, BROKEN_MESSAGES | JSON_VALUES, st.booleans()),
        RAW_FIELD_LINES,
        st.sampled_from(SPECIAL_LINES),
        st.binary(max_size=24),
    ).map(lambda line: line.replace(b"\n", b" ")),
    max_size=8,
)
