"""Token counting works with no network and says when it is approximate."""

from __future__ import annotations

import threading

import pytest

from engine.text.tokens import CharEstimateCounter, LazyTokenCounter, load_counter


@pytest.fixture(autouse=True)
def no_downloads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt by tiktoken to fetch an encoding over the network fails the test."""
    import tiktoken.load

    real_read_file = tiktoken.load.read_file

    def local_only(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise AssertionError(f"tiktoken tried to download {blobpath}")
        return real_read_file(blobpath)

    monkeypatch.setattr(tiktoken.load, "read_file", local_only)


def test_cl100k_models_are_counted_exactly_offline() -> None:
    counter = load_counter("gpt-4")
    assert counter.exact
    assert counter.count("hello world") == 2


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4o-mini",  # o200k_base, which no offline package ships
        "llama3.2",  # not an OpenAI model: its tokenizer is unknown to tiktoken
    ],
)
def test_other_models_are_marked_approximate(model: str) -> None:
    counter = load_counter(model)
    assert not counter.exact
    assert counter.count("hello world") == 2
    assert "standing in" in counter.description


def test_offline_model_counts_are_exact() -> None:
    assert load_counter("offline", model_is_offline=True).exact


def test_special_token_text_in_a_message_is_counted_not_refused() -> None:
    assert load_counter("gpt-4").count("before <|endoftext|> after") > 3


def test_char_estimate_rounds_up() -> None:
    assert CharEstimateCounter().count("abcde") == 2
    assert CharEstimateCounter().count("") == 0


def test_lazy_counter_loads_once_from_many_threads() -> None:
    loads: list[int] = []

    def factory() -> CharEstimateCounter:
        loads.append(1)
        return CharEstimateCounter()

    lazy = LazyTokenCounter(factory)
    assert not lazy.loaded
    threads = [threading.Thread(target=lazy.count, args=("abcd",)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert loads == [1]
    assert lazy.loaded and lazy.count("abcdefgh") == 2
