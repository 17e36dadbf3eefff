"""Reading a helper model's JSON answer, asked for either way: structured output
(``chat.completions.parse``) or JSON mode. Each raises ValueError when the answer is unusable, so
the caller can try the next way of asking or fall back to the heuristic."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from engine.text.redaction import clip
from engine.text.thinking import sent_text

if TYPE_CHECKING:
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
