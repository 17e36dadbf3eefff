"""Machine-written parts of a text that name nothing the user would track: the source lines quoted
under a stack trace's frames, library frames, and the size in the app's own attachment header.

A stack trace names its frames' files and functions, then quotes each frame's source line, whose
variables and calls ("rows = load(cfg)", "meth(*args)") would each become an entity; a library's
frames (site-packages, node_modules, the JDK) are not the user's code at all. What the trace is
about stays: the user's files, the functions of their frames and the exception.
"""

from __future__ import annotations

import re
from bisect import bisect_right

_PY_FRAME = re.compile(r'^[ \t]*File "([^"\n]{1,1000})", line \d+(?:, in ([^\s,]{1,200}))?[ \t]*$', re.M)
_FRAME_BODY = re.compile(r"(?:\n(?![ \t]*File \")[ \t]+[^\n]*)+")  # the indented lines under a frame
_LIBRARY = re.compile(r"site-packages|dist-packages|/lib/python\d|^<|\\Lib\\|node_modules|^node:|^internal/")
_AT_FRAME = re.compile(r"^[ \t]+at [^\n]{1,1000}$", re.M)  # JavaScript and JVM frames
_JVM_LIBRARY = re.compile(r"[ \t]+at (?:(?:java|javax|jdk|sun|kotlin|scala|org\.junit)\.|[^\n]*\(?node:)")
# engine.turn.attachments words an attached file as "Attached file NAME (N bytes):"; the size is the app's.
_ATTACHED = re.compile(r"^Attached file .{1,300}?( \([\d,]{1,20} bytes\)):$", re.M)


class Quiet:
    """Spans of a text that add no entities, and the functions named by its user-code frames."""

    def __init__(self, text: str) -> None:
        spans: list[tuple[int, int]] = []
        self.functions: list[tuple[int, int]] = []
        """Spans of the function names in the user's own Python frames ("in load_invoices")."""
        if 'File "' in text:
            for m in _PY_FRAME.finditer(text):
                body = _FRAME_BODY.match(text, m.end())
                end = body.end() if body else m.end()
                if _LIBRARY.search(m[1]):
                    spans.append((m.start(), end))
                    continue
                if body:
                    spans.append((m.end(), end))
                if m[2] and not m[2].startswith("<"):
                    self.functions.append(m.span(2))
        if " at " in text:
            for m in _AT_FRAME.finditer(text):
                if _LIBRARY.search(m[0]) or _JVM_LIBRARY.match(m[0]):
                    spans.append(m.span())
        if "Attached file " in text:
            spans.extend(m.span(1) for m in _ATTACHED.finditer(text))
        spans.sort()
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]

    def __contains__(self, pos: int) -> bool:
        i = bisect_right(self.starts, pos) - 1
        return i >= 0 and pos < self.ends[i]
