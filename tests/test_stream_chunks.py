"""Reading a streamed chunk's JSON as a server sent it: the protocol's shape, and any other."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.protocols.models import UsageReport
from providers.stream_chunks import Chunk, read_chunk


def test_a_chunk_gives_its_words_its_finish_reason_and_its_usage() -> None:
    assert read_chunk(
        {"choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}]}
    ) == Chunk("Hel")
    assert read_chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}) == Chunk(
        finish_reason="stop"
    )
    usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    assert read_chunk({"choices": [], "usage": usage}) == Chunk(usage=UsageReport(12, 3))


def test_only_the_first_choice_is_read() -> None:
    chunk = {
        "choices": [{"index": 1, "delta": {"content": "other"}}, {"index": 0, "delta": {"content": "mine"}}]
    }
    assert read_chunk(chunk).text == "mine"


def test_what_is_not_as_the_protocol_says_reads_as_absent() -> None:
    for data in (
        None,
        "text",
        [1, 2],
        {"choices": None},
        {"choices": ["x"]},
        {"choices": [{"delta": None, "finish_reason": ""}]},
        {"choices": [{"delta": {"content": 5}}]},
        {"usage": {"prompt_tokens": True, "completion_tokens": 3}},
        {"usage": {"prompt_tokens": "12", "completion_tokens": 3}},
    ):
        assert read_chunk(data) == Chunk(), data


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "index",
                    "delta",
                    "content",
                    "finish_reason",
                    "usage",
                    "prompt_tokens",
                    "completion_tokens",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(json_values)
def test_any_json_reads_without_an_error(data: object) -> None:
    chunk = read_chunk(data)
    assert isinstance(chunk.text, str) and isinstance(chunk.finish_reason, str)


def test_a_reasoning_models_thinking_is_read_from_either_field_it_comes_in() -> None:
    for field in ("reasoning_content", "reasoning"):
        delta = {field: "Weighing it.", "content": None}
        assert read_chunk({"choices": [{"index": 0, "delta": delta}]}) == Chunk(reasoning="Weighing it.")
    assert read_chunk({"choices": [{"index": 0, "delta": {"reasoning": {"effort": "high"}}}]}) == Chunk()
