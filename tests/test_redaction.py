"""The redaction gate: a server's words reach the user and the disk, the key in them does not.

A key is redacted before any quote is cut (an error of 283 characters and then the key, quoted to
300, kept 15 of the key's 17 characters), a key the server itself cut short is still caught, and a
key-shaped text is caught even when it is not the key in use. Every helper's failure goes through
the same gate as the chat's errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.chat import PromptMessage
from engine.errors import ModelError
from engine.text.redaction import clip, forget_secrets, redact, remember_secret
from providers.client_factory import client_factory
from providers.openai_chat import OpenAIChatModel
from tests import fake_openai_errors
from tests.fake_openai import FakeOpenAIServer
from tests.kept_clients import kept

pytestmark = pytest.mark.usefixtures("models_closed")

KEY = "sk-test-SECRET1xyz"
"""17 characters after the ``sk-``: as the key the issue found cut to 15 in ``messages.error``."""
PIECES = {KEY[i : i + 8] for i in range(len(KEY) - 7)}
LONG_LEAD = ("Upstream failure while forwarding the request; the gateway said " + "retry later " * 30)[:283]


def pieces_in(text: str) -> list[str]:
    return sorted(p for p in PIECES if p in text)


def server_says(
    monkeypatch: pytest.MonkeyPatch, server: FakeOpenAIServer, message: str, times: int = 1
) -> None:
    """The next ``times`` chat requests get a 500 whose message is ``message``."""
    body = {**fake_openai_errors.ERRORS["500"][1], "message": message}
    monkeypatch.setitem(fake_openai_errors.ERRORS, "500", (500, body))
    server.faults.extend(["500"] * times)


async def chat_error(server: FakeOpenAIServer, api_key: str | None = KEY) -> str:
    model = OpenAIChatModel(
        model="fake-model", base_url=server.base_url, api_key=api_key, context_window=8192, read_timeout=5
    )
    try:
        with pytest.raises(ModelError) as caught:
            async for _ in model.stream([PromptMessage("user", "hi")]):
                pass
    finally:
        await model.aclose()
    return caught.value.user_message


@pytest.mark.parametrize(
    "message",
    [LONG_LEAD + KEY, LONG_LEAD + KEY[:12], f"cut by the server: {KEY[:9]}"],
    ids=["key-after-283-chars", "key-cut-by-the-server", "short-piece"],
)
async def test_an_error_quoting_the_key_keeps_no_piece_of_it_however_it_is_cut(
    fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, message: str
) -> None:
    server_says(monkeypatch, fake_server, message)
    shown = await chat_error(fake_server)
    assert "Upstream failure" in shown or "cut by the server" in shown  # the server's words are kept
    assert pieces_in(shown) == []


async def test_a_key_shaped_text_is_redacted_even_when_it_is_not_the_key_in_use(
    fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = "sk-proj-Zq81mXv02LkPq9Wt"
    server_says(
        monkeypatch, fake_server, f"Forwarded with Authorization: Bearer a1b2c3d4e5f6g7h8 and {other}"
    )
    shown = await chat_error(fake_server, api_key=None)
    assert "Forwarded with Authorization: Bearer" in shown
    assert "a1b2c3d4e5f6g7h8" not in shown and other[:8] not in shown and "[redacted]" in shown


async def test_every_helper_model_s_failure_is_told_without_the_key(
    fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.advice.advice import AdviceSource
    from providers.memory_assessor import OpenAIMemoryAssessor
    from providers.openai_curator import OpenAICurator
    from providers.openai_summarizer import OpenAISummarizer
    from tests.test_llm_curator import BRIEF
    from tests.test_llm_summarizer import COUNTER, request

    server_says(monkeypatch, fake_server, LONG_LEAD + KEY, times=5)
    clients = client_factory(base_url=fake_server.base_url, api_key=KEY)  # as the app makes them
    outcome = await kept(OpenAICurator(clients, "fake-model", timeout=5)).advise(BRIEF)
    summary = await kept(OpenAISummarizer(clients, "fake-model", counter=COUNTER)).summarize(request())
    assessed = await OpenAIMemoryAssessor(clients, "fake-model", timeout=5).assess(
        [PromptMessage("user", "remember the billing deploys"), PromptMessage("assistant", "Noted.")]
    )
    assert outcome.source is AdviceSource.FALLBACK and summary.text is None and assessed.fallback
    said = [outcome.problem, summary.problem, assessed.fallback]
    assert all("Upstream failure" in reason for reason in said), said
    assert pieces_in(" ".join(said)) == []


def test_the_curator_s_advice_keeps_no_key_in_its_reasons_refs_or_summary() -> None:
    from providers.openai_curator import advice_from

    remember_secret(KEY)
    advice = advice_from(
        {
            "retain": [{"ref": f"#3 {KEY}", "reason": "x" * 190 + KEY}],
            "drop": [KEY],
            "resolved": [{"phrase": f"that {KEY}", "ref": "#2"}],
            "summary": f"kept {KEY}",
        }
    )
    assert pieces_in(repr(advice)) == []


@given(
    before=st.text(max_size=400),
    after=st.text(max_size=40),
    limit=st.integers(min_value=10, max_value=500),
    cut=st.integers(min_value=0, max_value=500),
)
def test_no_cut_of_a_text_holding_the_key_leaves_a_piece_of_it(
    before: str, after: str, limit: int, cut: int
) -> None:
    forget_secrets()
    remember_secret(KEY)
    text = before + KEY + after
    assert pieces_in(clip(text, limit)) == []  # the gate's own cut
    assert pieces_in(redact(text[:cut])) == []  # a cut made before the text reached the gate
    assert pieces_in(redact(text[cut:])) == []


def test_text_without_a_key_passes_unchanged() -> None:
    remember_secret(KEY)
    words: list[Any] = [
        "Bearer authentication is required",
        "task-management-system",
        "Incorrect API key provided: sk-wrong.",
        "OPENAI_API_KEY is not set",
        "call hf_hub_download(repo_id) first",
    ]
    assert [redact(w) for w in words] == words


async def test_a_key_written_where_its_variable_s_name_belongs_is_never_shown() -> None:
    from tests.apphelpers import make_app, toasts, wait_for, write_config

    typed = "sk-proj-Zq81mXv02LkPq9Wt"
    write_config(
        'model = "fake/fake-model"\n'
        f'[providers.fake]\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "{typed}"\n'
    )
    app = make_app(env={})
    async with app.run_test(notifications=True) as pilot:
        await wait_for(pilot, lambda: any("fake/fake-model" in t for t in toasts(app)))
        shown = " ".join(toasts(app))
    assert "must name" in shown and "not hold the key" in shown
    assert "offline" in shown  # and Heedful runs, on the offline model
    assert typed[:8] not in shown and typed[-8:] not in shown


@pytest.mark.parametrize(
    "typed", ["sk-proj-Zq81mXv02LkPq9Wt", "gsk_Zq81mXv02LkPq9WtAb", "a1b2c3d4e5f6a7b8c9d0e1f2"]
)
def test_the_config_names_a_key_in_api_key_env_without_quoting_it(tmp_path: Path, typed: str) -> None:
    from sessions.config import load_config

    path = tmp_path / "config.toml"
    path.write_text(f'[providers.x]\nbase_url = "http://h/v1"\napi_key_env = "{typed}"\n', encoding="utf-8")
    problems = " ".join(load_config(path).problems)
    assert "providers.x.api_key_env holds what looks like an API key" in problems
    assert typed[:8] not in problems and typed[-8:] not in problems
    # A real variable's name is no problem.
    path.write_text(
        '[providers.x]\nbase_url = "http://h/v1"\napi_key_env = "GROQ_API_KEY"\n', encoding="utf-8"
    )
    assert load_config(path).problems == []


def streamed(text: str, cuts: list[int]) -> str:
    """``text`` sent through a :class:`StreamRedactor` in the pieces ``cuts`` makes of it."""
    from engine.text.redaction import StreamRedactor

    redactor, out, at = StreamRedactor(), [], 0
    for cut in sorted(c % (len(text) + 1) for c in cuts):
        out.append(redactor.feed(text[at:cut]))
        at = max(at, cut)
    out += [redactor.feed(text[at:]), redactor.finish()]
    return "".join(out)


@given(
    before=st.text(max_size=60), after=st.text(max_size=60), cuts=st.lists(st.integers(0, 200), max_size=12)
)
def test_a_key_streamed_in_any_pieces_is_redacted_once_and_the_rest_kept(
    before: str, after: str, cuts: list[int]
) -> None:
    forget_secrets()
    remember_secret(KEY)
    text = before + KEY + after
    out = streamed(text, cuts)
    assert pieces_in(out) == [] and "[redacted]" in out
    apart = not (before[-1:] and before[-1] in KEY) and not (after[:1] and after[0] in KEY)
    if apart and not pieces_in(before) and not pieces_in(after):
        assert out == f"{before}[redacted]{after}"  # the key, and nothing else, is taken out
    clean = before + after
    if not pieces_in(clean):
        assert streamed(clean, cuts) == clean  # text without the key comes out as it went in


async def test_a_reply_that_streams_the_key_in_pieces_shows_it_redacted(
    fake_server: FakeOpenAIServer,
) -> None:
    from engine.protocols.models import TextDelta

    fake_server.echo_secret, fake_server.piece_chars = KEY, 3  # the key comes in six pieces
    model = OpenAIChatModel(
        model="fake-model", base_url=fake_server.base_url, api_key=KEY, context_window=8192
    )
    try:
        deltas = [
            e.text async for e in model.stream([PromptMessage("user", "hi")]) if isinstance(e, TextDelta)
        ]
    finally:
        await model.aclose()
    reply = "".join(deltas)
    assert "copied with the credential [redacted], then the rows" in reply
    assert all(pieces_in(prefix) == [] for prefix in ("".join(deltas[:n]) for n in range(len(deltas))))
