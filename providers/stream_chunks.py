"""What one chunk of a streamed chat completion says, read from its JSON as the server sent it.

The stream is asked of the openai client as plain JSON objects, not its pydantic chunk models,
which cost the event loop a share of a core at a fast stream's rate for three fields. A server may
send any shape: whatever is not as the protocol says is read as absent.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.protocols.models import UsageReport


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str = ""
    """The reply's next words (of its first choice: only one is asked for)."""
    reasoning: str = ""
    """A reasoning model's next words of thinking, sent apart from the reply (see engine.text.thinking)."""
    finish_reason: str = ""
    usage: UsageReport | None = None


def read_chunk(data: object) -> Chunk:
    if not isinstance(data, dict):
        return Chunk()
    text = thinking = reason = ""
    choices = data.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue
        delta = choice.get("delta")
        content = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(content, str):
            text += content
        if isinstance(delta, dict):
            # DeepSeek's API, vLLM, llama.cpp and LM Studio say "reasoning_content"; OpenRouter
            # and newer vLLM "reasoning".
            for field in ("reasoning_content", "reasoning"):
                value = delta.get(field)
                if isinstance(value, str):
                    thinking += value
                    break
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            reason = finish
    return Chunk(text, thinking, reason, _usage_of(data.get("usage")))


def _usage_of(usage: object) -> UsageReport | None:
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    # bool is an int to Python, not a count to anyone.
    if type(prompt) is int and type(completion) is int:
        return UsageReport(prompt_tokens=prompt, completion_tokens=completion)
    return None
