"""One text as the entity extractor scans it: its code regions, and the candidate spans found so far."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

from engine.entities.mentions import EntityKind
from engine.entities.patterns import _FENCE, _INLINE, _RUNS
from engine.entities.traces import Quiet

_PRECEDENCE = "url path env_var error symbol command config_key identifier date quantity title name"
_ORDER = tuple(EntityKind(kind) for kind in _PRECEDENCE.split())  # highest first
_RANK = {kind: rank for rank, kind in enumerate(_ORDER)}
_MAX_MATCHES = 100_000


def _norm(label: str) -> str:
    return " ".join(label.casefold().split())


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _run_end(rx: re.Pattern[str], text: str, pos: int) -> int:
    """Where the run that ``rx`` matches at ``pos`` ends (``pos`` if it does not match)."""
    return m.end() if (m := rx.match(text, pos)) else pos


_Candidate = tuple[int, int, EntityKind, str, bool]  # start, -end (sorts longest first), kind, ref, container


class _Scan:
    """One text, its code regions, and the candidate spans found so far (a list per precedence rank)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.quiet = Quiet(text)
        """Machine-written spans that add no entities (a trace's quoted source lines, library frames)."""
        # Line-anchored patterns start with "\n" (a literal the engine finds fast, where "^" with re.M
        # tests every position); the leading newline lets them match the first line too.
        self.padded = "\n" + text
        # str.lower keeps every length but that of U+0130, which becomes two characters.
        self.low = self.padded.replace("\u0130", "I").lower()
        for mark in '\n\t("“*`':  # so that every keyword follows a space: "(yesterday)", "`def f`"
            self.low = self.low.replace(mark, " ")
        self.cands: list[list[_Candidate]] = [[] for _ in _ORDER]
        self.resume = 0
        self._refs: dict[tuple[EntityKind, str], str] = {}
        self._reversed = ""
        self.fences: list[tuple[int, int, str]] = []  # body start, body end, language
        regions: list[tuple[int, int, str]] = []  # start, end, "`" for inline code or a fence's language
        found, k, gap = list(self.each(_FENCE, self.padded)), 0, 0
        while k < len(found):
            opener, lang = found[k], found[k][2].casefold()
            close = next((j for j in range(k + 1, len(found)) if found[j][1][0] == opener[1][0]), len(found))
            end, body_end = (
                (found[close].end() - 1, found[close].start()) if close < len(found) else (len(text),) * 2
            )
            regions += [(g.start(), g.end(), "`") for g in self.each(_INLINE, text, gap, opener.start())]
            regions.append((opener.start(), end, lang))
            self.fences.append((opener.end(), body_end, lang))
            gap, k = end, close + 1
        regions += [(g.start(), g.end(), "`") for g in self.each(_INLINE, text, gap)]
        self.starts, self.ends, self.langs = (
            [r[0] for r in regions],
            [r[1] for r in regions],
            [r[2] for r in regions],
        )

    def code(self, pos: int) -> str | None:
        """The language of the code region at ``pos`` ("`" for inline code), or None in prose."""
        i = bisect_right(self.starts, pos) - 1
        return self.langs[i] if i >= 0 and pos < self.ends[i] else None

    def add(self, kind: EntityKind, s: int, e: int, norm: str | None = None, container: bool = False) -> None:
        text = self.text
        if self.quiet.starts and s in self.quiet:
            return
        while e > s and text[e - 1].isspace():  # labels are trimmed
            e -= 1
        while s < e and text[s].isspace():
            s += 1
        if norm is not None:
            ref = f"{kind}:{norm}"
        elif (cached := self._refs.get(key := (kind, self.text[s:e]))) is not None:
            ref = cached
        else:
            ref = self._refs[key] = f"{kind}:{_norm(key[1])}"
        if e > s and len(ref) > len(kind) + 1:
            self.cands[_RANK[kind]].append((s, -e, kind, ref, container))

    def each(
        self, rx: re.Pattern[str], text: str = "", pos: int = 0, end: int = 2**62
    ) -> Iterator[re.Match[str]]:
        """The first ``_MAX_MATCHES`` matches of ``rx`` in ``text`` (default: the text scanned).

        A match costs microseconds of Python; a pattern matching more often than this is reading machine
        output ("$a$a$a...", a million "x=1" lines), whose later matches add nothing.
        """
        for count, m in enumerate(rx.finditer(text or self.text, pos, end)):
            if count == _MAX_MATCHES:
                return
            yield m

    def anchored(self, anchor: re.Pattern[str], text: str = "") -> Iterator[int]:
        """Positions of ``anchor``; a handler sets ``resume`` to skip those inside a token it consumed."""
        self.resume = 0
        for m in self.each(anchor, text):
            if m.start() >= self.resume:
                yield m.start()

    def back(self, i: int, chars: str) -> int:
        """Start of the run of word characters (and ``chars``) that ends at ``i``."""
        self._reversed = self._reversed or self.text[::-1]
        run = _RUNS[chars].match(self._reversed, len(self.text) - i)
        return i - (run.end() - run.start()) if run else i
