"""Error signatures: what makes two pasted errors "the same error".

An error's signature is its name (``ConnectionRefusedError``, ``error[E0382]``, ``panic``), its
message and its traceback's frames (file and function), each normalised so that what changes from
one run to the next (numbers, addresses, line numbers, timestamps) does not tell them apart. The
error line itself is kept verbatim, for the summaries that name it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
)
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_PATH_LINE = re.compile(r"([\w./\\-]+\.\w{1,8}):\d+(?::\d+)?")
_NUMBER = re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)*(?![A-Za-z_\d])")
"""A number on its own ("port 5432", "[Errno 111]"), not one inside a name ("psycopg2", "mod3.py"),
nor the start of a run of digits that a letter ends ("00x0": its "0x0" would read as an address
next time, and normalising must give the same again)."""
_SPACE = re.compile(r"\s+")

_ERROR_LINE = re.compile(
    # Python and JavaScript: "psycopg2.OperationalError: ...", "Uncaught TypeError: ...", "Error: connect ..."
    r"^[ \t]*(?:Uncaught[ \t]+)?"
    r"(?P<py>(?:[A-Za-z_][\w$]*\.)*(?:[A-Za-z_$][\w$]*)?(?:Error|Exception|Exit|Interrupt))"
    r"(?:[ \t]*\[[\w-]+\])?(?::[ \t]*(?P<pymsg>[^\n]*))?[ \t]*$"
    # Rust's compiler: "error[E0382]: borrow of moved value: `v`"
    r"|^(?P<rust>error(?:\[E\d{4}\])?): (?P<rustmsg>[^\n]+)$"
    # Rust's panic: "thread 'main' panicked at src/main.rs:4:5:" (the message may follow on the next line)
    r"|^thread '[^'\n]{0,100}' panicked at (?:'(?P<panicmsg>[^\n]*)', )?(?P<panicat>[^\s]+?):?[ \t]*$"
    # Go: "panic: runtime error: index out of range [5] with length 3", "fatal error: all goroutines ..."
    r"|^(?P<go>panic|fatal error): (?P<gomsg>[^\n]+)$",
    re.M,
)
_FRAME = re.compile(
    r'^[ \t]*File "(?P<pyfile>[^"\n]{1,500})", line \d+(?:, in (?P<pyfunc>[^\s,]{1,200}))?'  # Python
    # JavaScript and the JVM
    r"|^[ \t]+at (?:(?P<jsfunc>[^\s(]{1,200}) \()?(?P<jsfile>[^\s()]{1,500}?):\d+(?::\d+)?\)?[ \t]*$"
    r"|^[ \t]*--> (?P<rsfile>[^\s:]{1,500}):\d+"  # Rust's compiler
    r"|^[ \t]+(?P<gofile>/[^\s:]{1,500}\.go):\d+"  # Go
    r"|^(?P<gofunc>[\w./*()-]{1,200})\([^\n]{0,200}\)[ \t]*$(?=\n\t)",  # Go's function line above its file
    re.M,
)
_TRACE_LINE = re.compile(
    r"^[ \t]*(?:Traceback \(most recent call last\):|File \"|at |--> |\^+[ \t~]*$|\d*[ \t]*\|"
    r"|= (?:note|help):"
    r"|During handling of the above|The above exception|goroutine \d|exit status|panicked at|note: run with)"
    r"|^\t|^    ",
)
_LIKELY = ("Error", "Exception", "error", "panic", "Interrupt", "Exit")
PASTE_SHARE = 0.5
"""A message whose error block is at least this share of its text is a paste of the error."""


@dataclass(frozen=True, slots=True)
class Signature:
    """What tells one error from another, modulo what changes between runs."""

    name: str
    message: str
    frames: tuple[tuple[str, str], ...] = ()
    """(file, function) of each frame, line numbers left out."""

    @property
    def error(self) -> tuple[str, str]:
        """The error alone (name and message), whatever its frames: a debugging thread's key."""
        return (self.name, self.message)


@dataclass(frozen=True, slots=True)
class Sighting:
    """An error found in a message: its signature, its error line verbatim and the files it names."""

    signature: Signature
    line: str
    """The error line as written ("ConnectionRefusedError: [Errno 111] Connection refused")."""
    files: tuple[str, ...]
    """The files of its frames, as written, the user's own first (no library ones when there are others)."""
    paste: bool
    """The error (its traceback) is most of the message: a paste, not a mention."""


def normalise(text: str) -> str:
    """``text`` with timestamps, addresses, line numbers and numbers made placeholders and spaces
    collapsed: the same error from two runs normalises the same. Idempotent."""
    text = _TIME.sub("<time>", text)
    text = _ADDRESS.sub("<addr>", text)
    text = _PATH_LINE.sub(r"\1:<n>", text)
    text = _NUMBER.sub("<n>", text)
    return _SPACE.sub(" ", text).strip()


_LIBRARY = re.compile(
    r"site-packages|dist-packages|/lib/python\d|node_modules|^node:|^internal/|/rustc/|/go/src/|^<"
)


def sight(text: str) -> Sighting | None:
    """The last error of ``text`` (the one a traceback ends with), or None when it names none."""
    if not any(word in text for word in _LIKELY):
        return None
    last = None
    for found in _ERROR_LINE.finditer(text):
        last = found
    if last is None:
        return None
    name, message = _name_and_message(last, text)
    frames: list[tuple[str, str]] = []
    files: list[str] = []
    for frame in _FRAME.finditer(text):
        path = frame["pyfile"] or frame["jsfile"] or frame["rsfile"] or frame["gofile"] or ""
        function = frame["pyfunc"] or frame["jsfunc"] or frame["gofunc"] or ""
        frames.append((normalise(path), normalise(function)))
        if path and path not in files:
            files.append(path)
    if last["panicat"]:
        files.append(_PATH_LINE.sub(r"\1", last["panicat"]))
    own = [f for f in files if not _LIBRARY.search(f)]
    signature = Signature(name, normalise(message), tuple(frames))
    return Sighting(signature, last[0].strip(), tuple(own or files), _is_paste(text))


def _name_and_message(found: re.Match[str], text: str) -> tuple[str, str]:
    if found["py"]:
        return found["py"], found["pymsg"] or ""
    if found["rust"]:
        return found["rust"], found["rustmsg"]
    if found["go"]:
        return found["go"], found["gomsg"]
    message = found["panicmsg"]
    if message is None:  # the newer format: the message is the next line
        rest = text[found.end() :].lstrip("\n")
        message = rest.split("\n", 1)[0]
    return "panic", message


def _is_paste(text: str) -> bool:
    """Whether the error lines (traceback, frames, the error itself) are most of the text."""
    whole = trace = 0
    for line in text.splitlines():
        size = len(line.strip())
        if not size or line.lstrip().startswith("```"):
            continue
        whole += size
        if _TRACE_LINE.match(line) or _ERROR_LINE.match(line) or _FRAME.match(line):
            trace += size
    return whole > 0 and trace >= whole * PASTE_SHARE
