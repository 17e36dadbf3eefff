"""Reading a helper model's JSON answer, asked for either way: structured output
(``chat.completions.parse``) or JSON mode. Each raises ValueError when the answer is unusable, so
the caller can try the next way of asking or fall back to the heuristic."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from engine.text.redaction import clip
from engine.text.thinking import sent_text
from providers.failures import describe

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion, ParsedChatCompletion

_T = TypeVar("_T")


def parsed_answer(completion: ParsedChatCompletion[_T], what: str) -> _T:
    """The structured answer of ``completion``; ``what`` names it in the error when there is none.

    Raises:
        ValueError: The model refused, or its answer held nothing parsed.
    """
    message = completion.choices[0].message
    if message.refusal:
        raise ValueError(f"the model refused: {clip(message.refusal, 100)}")
    if message.parsed is None:
        raise ValueError(f"the answer held no {what}")
    return message.parsed


def json_answer(completion: ChatCompletion) -> Any:
    """The JSON of a JSON-mode answer, read without a reasoning model's thinking.

    Raises:
        ValueError: The answer was empty or is not JSON.
    """
    content = sent_text("assistant", completion.choices[0].message.content or "")
    if not content:
        raise ValueError("the answer was empty")
    return json.loads(content)


@dataclass(frozen=True, slots=True)
class Asked(Generic[_T]):
    """What asking both ways gave: the answer (None: neither way worked), whether JSON mode gave it,
    and what failed on the way ("; "-joined, empty when structured output worked)."""

    answer: _T | None
    by_json: bool
    problems: str


async def ask_both_ways(
    client: AbstractAsyncContextManager[openai.AsyncOpenAI],
    seconds: float,
    structured: Callable[[openai.AsyncOpenAI], Awaitable[_T]],
    json_mode: Callable[[openai.AsyncOpenAI], Awaitable[_T]],
) -> Asked[_T]:
    """Structured output first, then JSON mode, all within ``seconds``; never raises (but
    may be cancelled), so the caller can fall back to its heuristic on None."""
    problems: list[str] = []
    try:
        async with asyncio.timeout(seconds), client as opened:
            try:
                return Asked(await structured(opened), False, "")
            except Exception as err:  # any failure: the next way of asking may work
                problems.append(f"structured output failed ({describe(err)})")
            try:
                return Asked(await json_mode(opened), True, problems[0])
            except Exception as err:
                problems.append(f"JSON mode failed ({describe(err)})")
    except TimeoutError:
        problems.append(f"no answer within {seconds:g} s")
    except Exception as err:  # the client could not even be made or closed
        problems.append(f"the model could not be asked ({describe(err)})")
    return Asked(None, False, "; ".join(problems))
