"""The helper models' clients (memory assessor, curator, summarizer) are made in a worker thread:
the first one imports openai (~0.4 s) and each loads the CA bundle for TLS (20-40 ms), which held
the screen still when done on the event loop. The memory assessor's is closed after its call; the
curator (asked before every request) and the summarizer (asked for dozens of summaries at a change
of topic) keep theirs, and their connection, until they are closed."""

from __future__ import annotations

import json
import threading

import openai
import pytest

from providers.memory_assessor import OpenAIMemoryAssessor
from providers.openai_curator import OpenAICurator
from providers.openai_summarizer import OpenAISummarizer
from tests import test_llm_curator, test_llm_summarizer, test_memory_llm
from tests.fake_openai import FakeOpenAIServer


class Recording:
    """A client factory that notes in :attr:`made` each client it makes, and whether it made it on
    the event loop's thread."""

    def __init__(self, server: FakeOpenAIServer) -> None:
        self.server = server
        self.made: list[tuple[bool, openai.AsyncOpenAI]] = []

    def __call__(self) -> openai.AsyncOpenAI:
        client = openai.AsyncOpenAI(base_url=self.server.base_url, api_key="k", max_retries=0)
        self.made.append((threading.current_thread() is threading.main_thread(), client))
        return client


@pytest.fixture
def clients(fake_server: FakeOpenAIServer) -> Recording:
    return Recording(fake_server)


async def kept_until_closed(clients: Recording, helper: OpenAICurator | OpenAISummarizer) -> None:
    """One client was made, off the event loop, for all of ``helper``'s calls, and it stays open
    until ``helper.aclose()``."""
    ((on_the_event_loop, client),) = clients.made
    assert not on_the_event_loop
    assert not client.is_closed()
    await helper.aclose()
    assert client.is_closed()


async def test_the_memory_assessors_client_is_made_off_the_event_loop_and_closed_after(
    fake_server: FakeOpenAIServer, clients: Recording
) -> None:
    fake_server.reply = json.dumps(test_memory_llm.GOOD)
    await OpenAIMemoryAssessor(clients, "fake-model").assess(test_memory_llm.MESSAGES)
    assert fake_server.requests, "the helper asked its model"
    ((on_the_event_loop, client),) = clients.made
    assert not on_the_event_loop
    assert client.is_closed()


async def test_the_curators_client_is_made_off_the_event_loop_at_warm_up_and_kept_until_closed(
    fake_server: FakeOpenAIServer, clients: Recording
) -> None:
    fake_server.reply = json.dumps(test_llm_curator.GOOD)
    curator = OpenAICurator(clients, "fake-model")
    await curator.warm_up()  # as the app does once a session is on screen
    assert len(clients.made) == 1 and not fake_server.requests, "made before the first pass, nothing asked"
    for _ in range(2):
        outcome = await curator.advise(test_llm_curator.BRIEF)
        assert outcome.advice is not None, outcome.problem
    await kept_until_closed(clients, curator)  # one client for both passes


async def test_the_summarizers_client_is_made_off_the_event_loop_and_kept_until_closed(
    fake_server: FakeOpenAIServer, clients: Recording
) -> None:
    fake_server.reply = (
        "db-stage-2 backup moved to 02:30 after 2024-03-14 (ECONNREFUSED 5432, deploy.sh kept)."
    )
    summarizer = OpenAISummarizer(clients, "fake-model", counter=test_llm_summarizer.COUNTER)
    for _ in range(2):
        outcome = await summarizer.summarize(test_llm_summarizer.request())
        assert outcome.text is not None, outcome.problem
    await kept_until_closed(clients, summarizer)  # one client for both summaries
