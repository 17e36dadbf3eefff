"""Message text for the Markdown export: inert, with tool output and tracebacks fenced as code.

A Markdown export is read with ``cat`` as often as with a renderer, so every control, bidi and
zero-width character is shown as a visible symbol (:func:`engine.text.inert.inert`), and text that
is not prose (a tool's output, an error, a Python traceback) is fenced so a renderer shows it as is.
"""

from __future__ import annotations

import re

from engine.text.inert import inert

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`{3,}")
_TRACEBACK = "Traceback (most recent call last):"


def fenced(text: str) -> str:
    """``text`` (already inert) as a fenced code block whose fence no line of it can close."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def body(content: str, *, role: str) -> str:
    """A message's text as Markdown: a tool's output fenced whole, anyone else's as written with
    each traceback outside a code block fenced, and a code block left open closed."""
    if not content.strip():
        return "*(no text)*"
    text = inert(content.rstrip("\n"))
    if role == "tool":
        return fenced(text)
    lines: list[str] = []
    fence: str | None = None
    trace: list[str] | None = None
    for line in text.split("\n"):
        if trace is not None:
            trace.append(line)
            if line and not line[0].isspace() and not line.startswith(_TRACEBACK):
                lines.append(fenced("\n".join(trace)))  # the exception line ends it
                trace = None
            continue
        found = _FENCE.match(line)
        if found is not None:
            if fence is None:
                fence = found.group(1)
            elif found.group(1).startswith(fence):
                fence = None
        elif fence is None and line.lstrip().startswith(_TRACEBACK):
            trace = [line]
            continue
        lines.append(line)
    if trace is not None:
        lines.append(fenced("\n".join(trace)))
    # An unclosed code fence would swallow every message after it when the file is rendered.
    if fence is not None:
        lines.append(fence)
    return "\n".join(lines)


def error(text: str) -> str:
    """An error under a message: one line in italics, or fenced when it has several (a traceback)."""
    shown = inert(text.strip())
    if "\n" in shown:
        return fenced(shown)
    return f"*{' '.join(shown.split())}*"
