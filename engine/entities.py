"""Offline, fast entity extraction: the things a conversation keeps referring to.

Speed comes from anchoring. Every pattern starts with a literal (a slash, a quote, a digit, a
keyword), so the regex engine finds candidates with a fast scan instead of trying every position;
left context is read by a bounded backward scan instead of a leading look-behind; and the many
lower-case keywords (dates, number words, error phrases) are found in one pass of a prefix-tree
pattern over a lower-cased copy. Quantifiers are bounded or possessive, so nothing backtracks across
more than one token and the cost is linear in the length of the text.

Spans found by different extractors are resolved by precedence (URL > PATH > ... > NAME): a span is
dropped when it overlaps one of higher precedence. Commands and titles may contain higher-precedence
spans whole (``curl https://x -o out.json``), and an error message may contain anything but a name
("Error: cannot open src/a.py in load()").
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Iterator

from engine.entity_vocabulary import (
    _ADVERBS,
    _ARTICLES,
    _BRANDS,
    _CONTROL,
    _DIRS,
    _ERRNOS,
    _ERROR_SUFFIXES,
    _EXTS,
    _HTTP_REASONS,
    _KEYWORD_KIND,
    _KEYWORDS,
    _MESSAGE_HEADS,
    _MONTH_ABBR,
    _MONTH_NAMES,
    _MONTHS,
    _NAMED_FILES,
    _NEVER,
    _NOT_IDENTIFIERS,
    _NUMBER_WORDS,
    _OPENERS,
    _PROG_LANGS,
    _PROGRAMS,
    _ROOT_DIRS,
    _SENTENCE_WORDS,
    _SHELL_LANGS,
    _TITLE_SMALL,
    _TLDS,
    _UNITS,
    _alt,
    _set,
    _trie,
)
from engine.mentions import EntityKind, Mention
from engine.text import STOPWORDS

__all__ = ["EntityKind", "Mention", "extract_entities"]


K = EntityKind
_PRECEDENCE = "url path env_var error symbol command config_key identifier date quantity title name"
_ORDER = tuple(EntityKind(kind) for kind in _PRECEDENCE.split())  # highest first
_RANK = {kind: rank for rank, kind in enumerate(_ORDER)}


# --- Patterns. -------------------------------------------------------------------------------------------
_U = "A-Z" + "".join(re.escape(c) for c in map(chr, range(0xC0, 0x530)) if c.isupper() or c.istitle())
_MON = _alt(f"{_MONTHS} {_MONTH_ABBR}".split())
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:1[6-9]|2\d)\d\d"
_NUM = r"(?:\d{0,2}(?:,\d{3}){1,8}+|\d{0,24}+)(?:\.\d{1,24}+)?"  # after a first digit: 1,000 / 12 / 3.5
_UNIT = rf"(?i:{_trie(_UNITS)})(?![\w/])"
_UNIT_TAIL = rf"(?:[ \t]?%|[kKMB]?[ \t]?{_UNIT}|[smhdwykKMBGxWV](?!\w))"
_MONTH_FIRST = rf"(?:{_MON})\.?(?:[ \t]+{_DAY}(?![\w:]|\.\d)(?:,?[ \t]+{_YEAR})?|,?[ \t]+{_YEAR})(?!\w)"
_DAY_FIRST = rf"{_DAY}[ \t]+(?:of[ \t]+)?(?:{_MON})\.?(?:,?[ \t]+{_YEAR})?(?!\w)"
_KEYWORD = re.compile(rf" (?:{_trie(_KEYWORD_KIND)})(?!\w)")
_MONTH_DATE = re.compile(_MONTH_FIRST)
_WEEKDAY_DATE = re.compile(rf",?[ \t]+(?:{_MONTH_FIRST}|{_DAY_FIRST})")
_PREPOSITION = re.compile(r"(?<!\w)(?i:on|since|until|till|by|before|after|every|from|in|during)[ \t]+\Z")
_AGO_HEAD = re.compile(
    rf"(?<!\w)(?i:\d+|an?|one|{_alt(_NUMBER_WORDS.split())}|a few|a couple of|several)[ \t]+"
    r"(?i:second|minute|hour|day|week|month|year|decade)s?[ \t]+\Z"
)
_NUMBER_TAIL = re.compile(rf"[ \t]+{_UNIT}")
# Possessive: with "[ \t]*:?[ \t]*" the two runs could split a long run of blanks every way (quadratic).
_HTTP_TAIL = re.compile(
    r"(?i:http(?:/\d(?:\.\d)?)?|status(?:[ \t]++code)?|error|code)[ \t]*+(?::[ \t]*+)?([1-5]\d\d)(?!\d)"
)
_NAME_TAIL = re.compile(r"[ \t]+([A-Za-z_]\w{0,127}+)(?!\w)")
_NUMBER = re.compile(  # everything that starts with a digit: dates, HTTP statuses, quantities, money
    r"\d(?<![\w.,/:#+-]\d)(?:(?P<iso>\d{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?)(?!\d)"
    r"|(?P<dmy>\d?/\d\d?/(?:\d{4}|\d\d)|\d?\.\d\d?\.\d{4})(?![\d/.]\d)"
    rf"|(?P<dm>\d?(?:st|nd|rd|th)?[ \t]+(?:of[ \t]+)?(?:{_MON})\.?(?:,?[ \t]+{_YEAR})?)(?!\w)"
    rf"|(?P<http>\d\d)(?<=[45]\d\d)[ \t]+(?:{_HTTP_REASONS})(?!\w)"
    rf"|(?P<money>(?<=[$€£¥]\d){_NUM}(?:[ \t]?(?:[kKMB]|bn|million|billion|thousand)(?!\w))?)"
    rf"|(?P<qty>{_NUM}{_UNIT_TAIL})"
    r"|(?P<year>\d{3})(?!\w))"
)
_YEAR_RX = re.compile(_YEAR)
_UNIT_AFTER = re.compile(_UNIT_TAIL)
_SCHEMES = _set("http https ftp ftps ws wss file")
_URL_ANCHORS = (re.compile("://"), re.compile(r"www\."))
_URL_REST = re.compile(r"[^\s<>\"'`{}|\\^]{1,2000}")
_SLASH = re.compile(r"/(?=[\w.@+-])")
_PATH_AT = re.compile(
    r"(?:~|\.\.?)?(?:/[\w.@+-]{1,255}+){1,64}+/?|[\w.@+-][\w.@+-]{0,254}+(?:/[\w.@+-]{1,255}+){1,64}+/?"
)
_PATH_RUN = re.compile(r"[\w.@+~/-]*+")
_LINE_NO = re.compile(r"(?::\d{1,9}+){1,2}")
_EXT_AT = re.compile(rf"\.(?i:{_trie(_EXTS)})(?![\w@+-]|\.\w|/|\()")
_DOTFILE_AT = re.compile(r"\.[a-z][\w-]{1,64}+(?:\.[\w-]{1,64}+){0,4}+(?![\w./(-])")
_WIN = re.compile(r":\\(?:[^\s\\:*?\"<>|,;']{1,255}+\\?){1,64}+")
_NAMED_FILE = re.compile("file")
_ENV_DOLLAR = re.compile(
    r"\$(?:\{([A-Za-z_]\w{0,127}+)(?:[:?+=-][^}\n]{0,200})?\}|([A-Za-z_]\w{0,127}+)(?!\w))"
)
_ENV_PERCENT = re.compile(r"%([A-Z_][A-Z0-9_]{0,127}+)%")
_ENV_CALL = re.compile(
    r"env(?:iron(?:\[|\.get\()|(?<=getenv)\(|::var\(|(?<=process\.env)\.)[ \t]*['\"]?(\w+)"
)
_ENV_SHAPE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_ENV_ASSIGN = re.compile(r"[A-Z][A-Z0-9_]+")
_ERR_SUFFIX = [re.compile(suffix) for suffix in _ERROR_SUFFIXES]
_ERR_CODE = re.compile(rf"E(?:{_alt(e[1:] for e in _ERRNOS)})(?!\w)")
_MESSAGE = re.compile(r"[ \t]*:[ \t]+([^\s`][^\n`]{0,199})")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_WORD_AT = re.compile(r"\w{0,256}+")
_DOT = re.compile(r"\.(?=[A-Za-z_])")
_DOTTED_AT = re.compile(r"[A-Za-z_]\w{0,127}+(?:\.[A-Za-z_]\w{0,127}+){1,16}+(?!\w|\.\w)")
_CALL = re.compile(r"\((?<=\w\()")
_UNDERSCORE = re.compile("_")
_CAMEL = re.compile(r"[A-Z](?:(?<=[a-z][A-Z])|(?<=[A-Z][A-Z])(?=[a-z]))")
_HUMP = re.compile(r"[A-Z][a-z]+")
_NAME_PREFIXED = re.compile(r"(?:Mc|Mac|De|Di|Da|Du|Le|La|Van|Von|O)[A-Z][a-z]+")
_SNAKE_SHAPE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_IDENT = re.compile(r"[A-Za-z_]\w{0,127}(?:\.[A-Za-z_]\w{0,127}){0,16}")
_EQ = re.compile(r"=(?![=>~])(?<![=!<>:+*/%&|^~-]=)")
_LINE_KEY = re.compile(r"\n[ \t]*(?:-[ \t]+)?([A-Za-z_][\w.-]{0,127}+)[ \t]*:(?=[ \t\n]|\Z)")
_SECTION = re.compile(r"\n[ \t]*\[\[?([A-Za-z_][\w.-]{0,127}+)\]\]?[ \t]*(?=\n|\Z)")
_KEY_SHAPE = re.compile(r"[A-Za-z_][\w.-]{0,127}")
_COLON_AFTER = re.compile(r"[ \t]*:(?![:/])")
_FENCE = re.compile(r"\n[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*")
_INLINE = re.compile(r"`([^`\n]+)`")
_PROMPT = re.compile(r"\n[ \t]*\$[ \t]+(\S[^\n]*)")
_SHELL_LINE = re.compile(rf"\n[ \t]*(?:\$[ \t]+)?((?:{_alt(_PROGRAMS)})(?=[ \t\n]|\Z)[^\n]*)")
# One pattern per opening quote: a literal first character is found by a fast scan, a class is not.
# Possessive: what the quoted part may hold never includes a closing quote, so giving characters back
# cannot find one; it would only cost up to 120 steps per opening quote ("‘‘‘‘...").
_QUOTED = r"((?:[^'’\n]|['’](?=\w)){1,120}+)['’](?![\w'’])"  # inner apostrophes: "Charlotte's Web"
_QUOTES = [re.compile(r"“([^”\n]{1,120}+)”"), re.compile(r"«([^»\n]{1,120}+)»")]
_QUOTES += [
    re.compile(r"\"(?<![\w\"]\")([^\"\n]{1,120}+)\"(?![\w\"])"),
    re.compile(rf"'(?<![\w'’]'){_QUOTED}"),
]
_QUOTES += [re.compile(rf"‘(?<![\w'’]‘){_QUOTED}")]
_CAP_REST = rf"\w{{0,63}}+(?:['’-][{_U}]\w{{0,63}}+){{0,3}}+(?!\w)"  # "Jean-Luc", "O'Brien"
_CAP = rf"[{_U}]{_CAP_REST}"
_CONNECTOR = r"(?:(?:of|de|da|di|del|du|van|von|der|den|al|bin)[ \t]+)?"
_NAME = re.compile(rf"[{_U}](?<![\w.@#$/\\][{_U}]){_CAP_REST}(?:(?:['’]s)?[ \t]+{_CONNECTOR}{_CAP}){{0,5}}+")
_CAPWORD = re.compile(_CAP)
# Runs of token characters, matched in the reversed text: a backward scan at C speed, at most 256 long.
_RUNS = {
    chars: re.compile(rf"[{cls}]{{0,256}}+") for chars, cls in [("", r"^\W_"), ("_", r"\w"), ("_.", r"\w.")]
}
_RUNS |= {chars: re.compile(rf"[\w{re.escape(chars[1:])}]{{0,256}}+") for chars in ("_.-", "_.@+-", "_.@+~-")}
_ONES = memoryview(b"\x01" * 4096)
_MAX_MATCHES = 100_000
_LIMIT = 3_000_000


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


def _keywords(sc: _Scan) -> None:
    """Lower-case keywords: dates, number words, error phrases, HTTP statuses, definitions, exports."""
    text = sc.text
    for m in sc.each(_KEYWORD, sc.low):
        s, e = m.start(), m.end() - 1  # text offsets: the match starts at the space before the keyword
        word = sc.low[s + 1 : e + 1]
        kind = _KEYWORD_KIND[word]
        if kind in ("date", "error"):
            sc.add(K.DATE if kind == "date" else K.ERROR, s, e)
        elif kind == "number" and (tail := _NUMBER_TAIL.match(text, e)):
            sc.add(K.QUANTITY, s, tail.end())
        elif (kind == "weekday" and (full := _WEEKDAY_DATE.match(text, e))) or (
            kind == "month" and text[s].isupper() and (full := _MONTH_DATE.match(text, s))
        ):
            sc.add(K.DATE, s, full.end())
        elif kind == "weekday" or (kind == "month" and text[s].isupper() and word in _MONTH_NAMES):
            # A bare weekday needs a preposition to be a date ("on Monday"); so does "May", a verb too.
            if (kind == "month" and word != "may") or _PREPOSITION.search(text, max(0, s - 10), s):
                sc.add(K.DATE, s, e)
        elif kind == "ago" and (head := _AGO_HEAD.search(text, max(0, s - 40), s)):
            sc.add(K.DATE, head.start(), e)
        elif kind == "http" and (status := _HTTP_TAIL.match(text, s)):
            sc.add(K.ERROR, s, status.end(), f"http {status[1]}")
        elif kind in ("def", "export") and (name := _NAME_TAIL.match(text, e)):
            if kind == "def" and sc.code(s) is not None:
                sc.add(K.SYMBOL, *name.span(1))
            elif kind == "export" and (sc.code(s) is not None or text.startswith("=", name.end())):
                sc.add(K.ENV_VAR, *name.span(1))


def _urls(sc: _Scan) -> None:
    text = sc.text
    for anchor in _URL_ANCHORS:
        for i in sc.anchored(anchor):
            scheme = anchor is _URL_ANCHORS[0]
            s = sc.back(i, "") if scheme else i
            if (scheme and text[s:i].casefold() not in _SCHEMES) or (s and _is_word(text[s - 1])):
                continue
            e = sc.resume = _run_end(_URL_REST, text, s)
            # Sentence punctuation and an unmatched closing bracket follow a URL; they are not in it.
            while e > s and (
                text[e - 1] in ".,;:!?*'\"_~"
                or (
                    text[e - 1] in ")]}>"
                    and text.count("([{<"[")]}>".index(text[e - 1])], s, e) < text.count(text[e - 1], s, e)
                )
            ):
                e -= 1
            if e - s > 7:
                sc.add(K.URL, s, e, _norm(text[s:e]).rstrip("/") or None)


@functools.lru_cache(maxsize=4096)
def _path_ok(core: str) -> bool:
    segs = [p for p in core.split("/") if p not in ("", ".", "..", "~")]
    if not segs or not any(c.isalpha() for c in core):
        return False
    if core.startswith(("./", "../", "~/")):
        return True
    ext = "." in segs[-1][1:] and segs[-1].rsplit(".", 1)[1].casefold() in _EXTS
    if core.startswith("/"):
        return ext or len(segs) >= 2 or segs[0] in _ROOT_DIRS
    # "and/or", "km/h", "he/him/his" are not paths; "src/auth", "a/b/c.py", "usr/local/lib" are.
    return ext or segs[0] in _DIRS or (len(segs) >= 3 and not any(p.casefold() in STOPWORDS for p in segs))


def _add_path(sc: _Scan, s: int, e: int) -> None:
    while e > s and sc.text[e - 1] in ".-":
        e -= 1
    line = _LINE_NO.match(sc.text, e)  # "auth.py:42" shares its ref with "auth.py"
    sc.add(K.PATH, s, line.end() if line else e, _norm(sc.text[s:e]).removeprefix("./"))


def _paths(sc: _Scan) -> None:
    """Paths with a slash, Windows paths and well-known extension-less files (file names are in _dots)."""
    text = sc.text
    for i in sc.anchored(_SLASH):
        s = sc.back(i, "_.@+~-")
        if (m := _PATH_AT.match(text, s)) and m.end() > i and not (s and text[s - 1] in "/\\:"):
            sc.resume = _run_end(_PATH_RUN, text, m.end())
            if sc.resume == m.end() and _path_ok(text[s : m.end()].rstrip(".-")):  # else too long for a path
                _add_path(sc, s, m.end())
    for m in sc.each(_WIN):
        s = m.start() - 1
        if (
            s >= 0
            and text[s].isascii()
            and text[s].isalpha()
            and not (s and (text[s - 1] == "\\" or _is_word(text[s - 1])))
        ):
            _add_path(sc, s, m.end())
    for i in sc.anchored(_NAMED_FILE, sc.low):  # "Dockerfile", "Makefile"; positions in low are one ahead
        s, e = sc.back(i - 1, ""), i + 3
        if (
            text[s:e] in _NAMED_FILES
            and not (s and text[s - 1] in "./-_")
            and not _is_word(text[e : e + 1] or " ")
        ):
            _add_path(sc, s, e)


def _env_vars(sc: _Scan) -> None:
    for m in sc.each(_ENV_DOLLAR):
        sc.add(K.ENV_VAR, *m.span(), (m[1] or m[2]).casefold())
    for rx in (_ENV_PERCENT, _ENV_CALL):
        for m in sc.each(rx):
            sc.add(K.ENV_VAR, *m.span(1))


def _errors(sc: _Scan) -> None:
    """Exception types (JWTError), errno names (ENOENT) and the message after "Error:"."""
    text, messages = sc.text, dict[int, int]()
    for suffix, rx in zip(_ERROR_SUFFIXES, _ERR_SUFFIX, strict=True):
        for i in sc.anchored(rx, sc.low):
            i, e = i - 1, i - 1 + len(suffix)  # positions in low are one ahead
            s, after = sc.back(i, "_"), text[e : e + 1] or " "
            typed = s < i and text[i].isupper() and text[s].isupper() and text[s].isascii()
            if typed and suffix != "fatal" and not _is_word(after) and not text[s:e].isupper():
                sc.add(K.ERROR, s, e)
            if (text[s:e] in _MESSAGE_HEADS or typed) and (m := _MESSAGE.match(text, e)):
                msg = m[1][: end.start()] if (end := _SENTENCE_END.search(m[1])) else m[1]
                msg = msg.rstrip(" \t.,;:!?")
                if len(msg) > 160:
                    msg = msg[: msg.rfind(" ", 0, 160)] if " " in msg[:160] else msg[:160]
                if any(c.isalpha() for c in msg):
                    messages[m.start(1)] = m.start(1) + len(msg)
    last = 0
    for s, e in sorted(messages.items()):
        if s >= last:  # "panic: runtime error: index out of range" holds one message, not two
            sc.add(K.ERROR, s, e, container=True)
            last = e
    for m in sc.each(_ERR_CODE):
        if not (m.start() and _is_word(text[m.start() - 1])):
            sc.add(K.ERROR, *m.span())


@functools.lru_cache(maxsize=4096)
def _is_camel_symbol(tok: str) -> bool:
    """True for code-shaped camelCase ("getUser", "TokenCounter", "HTTPServer"), not brands or names."""
    if tok in _BRANDS or _NAME_PREFIXED.fullmatch(tok):
        return False
    if tok[0].islower():
        return len(tok) - len(tok.lstrip("abcdefghijklmnopqrstuvwxyz0123456789")) >= 2
    humps = _HUMP.findall(tok)
    if len(humps) == 1:
        return tok[:2].isupper() and tok.index(humps[0]) >= 3  # an acronym, then a word: "HTTPServer"
    return len(humps) >= 2 and any(len(h) >= 3 for h in humps)  # "PhDs" has two humps but no word


def _dotted(sc: _Scan, s: int, e: int) -> None:
    text, tok = sc.text, sc.text[s:e]
    segs, after, lang = tok.split("."), text[e : e + 1], sc.code(s)
    if after == "(":
        sc.add(K.SYMBOL, s, e + 2 if text.startswith(")", e + 1) else e, _norm(tok))
    elif after in ("/", "@", "\\") or segs[-1].casefold() in _TLDS:
        return
    elif after == "[" and lang is None:
        sc.add(K.IDENTIFIER, s, e)  # os.environ[...]: an object, indexed
    elif all(seg == seg.casefold() for seg in segs):
        if lang in _PROG_LANGS or segs[0] in ("self", "this", "cls"):
            if lang is not None:
                sc.add(K.IDENTIFIER, s, e)
        # All-single-letter segments are abbreviations ("e.g"); a stopword at either end is a missing space.
        elif max(map(len, segs)) > 1 and segs[0] not in STOPWORDS and segs[-1] not in STOPWORDS:
            sc.add(K.CONFIG_KEY, s, e)
    elif segs[0][0].isupper() and not segs[0].isupper() and all(seg[0].islower() for seg in segs[1:]):
        sc.add(K.SYMBOL, s, e)
    elif lang is not None:
        sc.add(K.IDENTIFIER, s, e)


def _dots(sc: _Scan) -> None:
    """Everything with a dot before a letter: file names, dotfiles, dotted names and method calls."""
    text = sc.text
    for i in sc.anchored(_DOT):
        before = text[i - 1] if i else " "
        if _is_word(before) and (ext := _EXT_AT.match(text, i)):
            s = sc.back(i, "_.@+-")
            if text[s] != "." and not (s and text[s - 1] in "/\\:~$%"):
                sc.resume = ext.end()
                _add_path(sc, s, ext.end())
                continue
        if _is_word(before):
            s = sc.back(i, "_.")
            if (m := _DOTTED_AT.match(text, s)) and m.end() > i and not (s and text[s - 1] in "/\\@$%-:"):
                sc.resume = m.end()
                _dotted(sc, s, m.end())
        elif (before.isspace() or before in "\"'`([") and (m := _DOTFILE_AT.match(text, i)):
            _add_path(sc, *m.span())


def _word_tokens(sc: _Scan) -> None:
    """Symbols, identifiers and env vars known by their shape: calls, snake_case, ALL_CAPS, camelCase."""
    text = sc.text
    for i in sc.anchored(_CALL):
        s = sc.back(i, "_")
        tok = text[s:i]
        if len(tok) < 2 or not (tok[0].isalpha() or tok[0] == "_") or (s and text[s - 1] in ".$@#"):
            continue
        # "file(s)" is a plural, not a call; "if (" and "while(" are syntax.
        if tok.casefold() not in _CONTROL and not text.startswith(("s)", "es)"), i + 1):
            sc.add(K.SYMBOL, s, i + 2 if text.startswith(")", i + 1) else i, _norm(tok))
    for anchor in (_UNDERSCORE, _CAMEL):
        for i in sc.anchored(anchor):
            s, e = sc.back(i, "_" if anchor is _UNDERSCORE else ""), _run_end(_WORD_AT, text, i)
            sc.resume, tok, after, in_code = e, text[s:e], text[e : e + 2], sc.code(s) is not None
            # Part of a bigger token (a path, a dotted name, a call) or too long to be an identifier.
            if (
                (s and text[s - 1] in "._$%{@#/\\-")
                or after[:1] in ("(", "/", "_")
                or _is_word(after[:1] or " ")
            ):
                continue
            if after[:1] == "." and after[1:].isalpha():
                continue
            core = tok.strip("_")
            if anchor is _CAMEL:
                if tok.isascii() and _is_camel_symbol(tok):
                    sc.add(K.SYMBOL, s, e)
                elif in_code:
                    sc.add(K.IDENTIFIER, s, e)
            elif _ENV_SHAPE.fullmatch(tok):
                sc.add(K.ENV_VAR, s, e)
            elif _SNAKE_SHAPE.fullmatch(tok) or (
                in_code and len(core) > 1 and core.casefold() not in _KEYWORDS
            ):
                sc.add(K.IDENTIFIER, s, e)


def _add_command(sc: _Scan, s: int, e: int) -> None:
    if (comment := sc.text.find(" #", s, e)) > s:  # a shell comment is not part of the command
        e = comment
    if e - s > 300:
        e = s + 300 if (cut := sc.text.rfind(" ", s, s + 300)) <= s else cut
    sc.add(K.COMMAND, s, e, container=True)


def _code_spans(sc: _Scan) -> None:
    """Commands (inline, in shell blocks, after a "$ " prompt) and the identifiers of inline code."""
    text = sc.text
    for s, e, lang in zip(sc.starts, sc.ends, sc.langs, strict=True):
        if lang == "`":
            body = text[s + 1 : e - 1].strip()
            if body and body.split(maxsplit=1)[0] in _PROGRAMS:
                b = text.index(body, s)
                sc.add(K.COMMAND, b, b + len(body), container=True)
            # `max_retries`: the span is the identifier. Words of longer spans are left to the shape
            # scanners, which know snake_case, dotted.names and calls from plain English.
            elif _IDENT.fullmatch(body) and len(body) > 1 and body.casefold() not in _NOT_IDENTIFIERS:
                b = text.index(body, s)
                sc.add(K.IDENTIFIER, b, b + len(body))
    for s, e, lang in sc.fences:
        if lang in _SHELL_LANGS or not lang:
            for m in sc.each(_SHELL_LINE, sc.padded, s, e + 1):
                _add_command(sc, m.start(1) - 1, m.end(1) - 1)
    for m in sc.each(_PROMPT, sc.padded):
        _add_command(sc, m.start(1) - 1, m.end(1) - 1)


def _config_keys(sc: _Scan) -> None:
    """Keys in ``key = value`` and ``key: value`` lines, and ``[section]`` headers (quoted keys: _quotes)."""
    text = sc.text
    for i in sc.anchored(_EQ):
        j = i
        while j > max(0, i - 8) and text[j - 1] in " \t":
            j -= 1
        s = sc.back(j, "_.-")
        key, value = text[s:j].rstrip(".-"), text[i + 1 : i + 80].lstrip(" \t")[:1]
        if len(key) < 2 or not (key[0].isalpha() or key[0] == "_") or value in ("", "\n"):
            continue
        if s and text[s - 1] in "-./$@\\:?&":  # "--flag=x", "?page=2": arguments, not keys
            continue
        lang = sc.code(i)
        if j == i and _ENV_ASSIGN.fullmatch(key):
            sc.add(K.ENV_VAR, s, s + len(key))  # FOO=bar, with no spaces, is the shell's syntax
        # In a program an assignment is a variable; in prose "Total = 5" is arithmetic.
        elif (
            lang not in _PROG_LANGS
            and key.casefold() not in _KEYWORDS
            and (lang is not None or key.islower() or any(c in key for c in "_.-"))
        ):
            sc.add(K.CONFIG_KEY, s, s + len(key))
    for m in sc.each(_LINE_KEY, sc.padded):
        s, key = m.start(1) - 1, m[1].rstrip(".-")
        lang, structured = sc.code(s), "_" in key or "." in key
        if key.casefold() in _KEYWORDS or len(key) < 2 or (lang in _PROG_LANGS and not structured):
            continue
        # "Note: ..." in prose is not a key; "max_retries: 3" is, and so is anything in a YAML block.
        if lang in ("yaml", "yml", "") or (structured and max(map(len, key.split("."))) > 1):
            sc.add(K.CONFIG_KEY, s, s + len(key))
    for m in sc.each(_SECTION, sc.padded):
        if sc.code(m.start(1) - 1) not in _PROG_LANGS:
            sc.add(K.CONFIG_KEY, m.start(1) - 1, m.end(1) - 1)


def _numbers(sc: _Scan) -> None:
    """Dates, HTTP statuses, quantities and money: everything that starts with a digit."""
    text = sc.text
    for m in sc.each(_NUMBER):
        group, (s, e) = m.lastgroup, m.span()
        if group in ("qty", "money"):
            sc.add(K.QUANTITY, s - (group == "money"), e)
        elif group == "http":
            sc.add(K.ERROR, s, e, f"http {text[s : s + 3]}")
        # A bare year needs a preposition ("in 2022") and no unit after it ("in 2000 ms").
        elif group != "year" or (
            _YEAR_RX.fullmatch(m[0])
            and _PREPOSITION.search(text, max(0, s - 10), s)
            and not _UNIT_AFTER.match(text, e)
        ):
            sc.add(K.DATE, s, e)


def _quotes(sc: _Scan) -> None:
    """Quoted titles ("The Hobbit", “Becoming Nicole”) and quoted keys ("timeout": 30)."""
    text = sc.text
    for rx in _QUOTES:
        for m in sc.each(rx):
            s, e = m.span(1)
            lang = sc.code(s)
            if _COLON_AFTER.match(text, e + 1) and _KEY_SHAPE.fullmatch(m[1]):
                if lang not in _PROG_LANGS and (lang is not None or m[1][0].islower() or "_" in m[1]):
                    sc.add(K.CONFIG_KEY, s, e)
                continue
            while e > s and (text[e - 1] in ",.;:" or text[e - 1].isspace()):
                e -= 1
            while s < e and text[s].isspace():
                s += 1
            words = text[s:e].split()
            if not 1 <= len(words) <= 8 or not text[s].isupper() or lang is not None:
                continue
            # Title Case and prose characters: a quoted sentence is speech, a quoted "Thanks" no title.
            if any(c in "/\\_=<>{}[]()@#$%^*|~`;" for c in text[s:e]):
                continue
            if len(words) == 1 and (words[0].casefold() in _NEVER or words[0].casefold() in STOPWORDS):
                continue
            if all(w[0].isupper() for w in words if w[0].isalpha() and w.casefold() not in _TITLE_SMALL):
                sc.add(K.TITLE, s, e, container=True)


def _sentence_initial(text: str, s: int) -> bool:
    """True when the word at ``s`` starts a sentence, line, list item or quotation."""
    i, low = s, max(0, s - 16)
    while i > low and text[i - 1] in " \t\"'“‘([*_>#-•":
        i -= 1
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] in ",;&–—")


def _is_common(word: str) -> bool:
    """A word that may open a sentence capitalised without being a name: "When", "Hope", "Painting"."""
    return word in _SENTENCE_WORDS or (len(word) > 5 and word.endswith("ing"))  # gerunds open sentences


def _opens_sentence(word: str, run: int) -> bool:
    """Whether a common word that starts a capitalised run of ``run`` words is outside the name.

    Function words and adverbs are ("Also Caroline", "Actually New York"); so is a verb before one
    name ("Tell Caroline"). Before two or more a common word starts the name ("Hope Adoption Center").
    """
    return word in STOPWORDS or (word in _OPENERS and (run == 2 or word in _ADVERBS or word.endswith("ly")))


def _digit_heavy(word: str) -> bool:
    return sum(c.isdigit() for c in word) * 2 >= len(word)


# A name's start and end in its match, its ref, and what it must still show: nothing (""), a common
# word's capitalisation mid-sentence ("hope"), or for an unknown sentence-initial word either that or no
# lower-case use nearby ("^refactor").
_NameRun = tuple[int, int, str, str]
_Analysis = tuple[tuple[str, ...], list[_NameRun]]  # the words capitalised mid-sentence, the names


def _analyse_name(match: str, initial: bool) -> _Analysis:
    """The names in one capitalised sequence, and the words it shows capitalised mid-sentence."""
    spans = [t.span() for t in _CAPWORD.finditer(match)]
    folded = [match[a:b].casefold() for a, b in spans]
    mids = tuple(f for k, f in enumerate(folded) if k or not initial)
    runs: list[_NameRun] = []
    run: list[int] = []
    for k, word in enumerate([*folded, "i"]):  # "i" is in _NEVER: it closes the last run
        if word not in _NEVER and len(word) > 1 and "_" not in word:
            run.append(k)
            continue
        lead = initial and run[:1] == [0]
        while run and (folded[run[0]] in _ARTICLES or (lead and _opens_sentence(folded[run[0]], len(run)))):
            run.pop(0)
        # One stopword, or one code-like word ("E0308"), is no name.
        if run and not (len(run) == 1 and (folded[run[0]] in STOPWORDS or _digit_heavy(folded[run[0]]))):
            a, b, word = spans[run[0]][0], spans[run[-1]][1], folded[run[0]]
            opens = initial and run == [0]
            needs = "" if len(run) > 1 else word if _is_common(word) else "^" + word if opens else ""
            runs.append((a, b, f"{K.NAME}:{_norm(match[a:b])}", needs))
        run = []
    return mids, runs


def _lowercase_nearby(text: str, word: str, s: int) -> bool:
    """True when ``word`` is also written in lower case within 2,000 characters of ``s``."""
    i, end = text.find(word, max(0, s - 2000), s + 2000), s + 2000
    for _ in range(32):  # bounded: a word hidden in many longer ones is given up on
        if i < 0:
            return False
        if not (i and _is_word(text[i - 1])) and not _is_word(text[i + len(word) : i + len(word) + 1] or " "):
            return True
        i = text.find(word, i + 1, end)
    return False


def _names(sc: _Scan) -> Iterator[tuple[int, int, str]]:
    """Capitalised sequences that name things, as (start, end, ref).

    A word that is capitalised only where a sentence starts must earn its place: a common word ("When",
    "Hope") needs to appear capitalised mid-sentence too, and an unknown one ("Refactor", "Models")
    must not also be written in lower case nearby.
    """
    text, found, mid = sc.text, [], set[str]()
    cache: dict[tuple[str, bool], _Analysis] = {}
    for m in sc.each(_NAME):
        s, match = m.start(), m[0]
        if sc.starts and sc.code(s) is not None:
            continue
        key = (match, _sentence_initial(text, s))
        analysis = cache.get(key) or cache.setdefault(key, _analyse_name(*key))
        mid.update(analysis[0])
        if analysis[1]:
            found.append((s, analysis[1]))
    for s, runs in found:
        for a, b, ref, needs in runs:
            if needs.startswith("^"):
                if needs[1:] in mid or not _lowercase_nearby(text, needs[1:], s):
                    yield s + a, s + b, ref
            elif not needs or needs in mid:
                yield s + a, s + b, ref


def _mark(occupied: bytearray, s: int, e: int) -> None:
    occupied[s] = 2
    occupied[s + 1 : e] = _ONES[: e - s - 1] if e - s <= len(_ONES) else b"\x01" * (e - s - 1)


def _extract(text: str, offset: int, first: dict[str, tuple[int, int, EntityKind]]) -> None:
    """Record in ``first`` the first accepted span of each ref in ``text`` (positions plus ``offset``)."""
    sc = _Scan(text)
    for extract in (_urls, _paths, _dots, _env_vars, _errors, _keywords, _word_tokens, _code_spans):
        extract(sc)
    for extract in (_config_keys, _numbers, _quotes):
        extract(sc)
    occupied = bytearray(len(text))  # 1 inside an accepted span, 2 at its first character
    ends: dict[int, int] = {}
    messages: list[tuple[int, int]] = []
    for candidates in sc.cands:
        candidates.sort()  # earliest first, then longest
        for s, neg_e, kind, ref, container in candidates:
            e = -neg_e
            if container:
                # A container may hold accepted spans whole, but not cut through one or repeat it.
                if occupied[s] == 1 or (e < len(text) and occupied[e] == 1) or ends.get(s) == e:
                    continue
            elif occupied.count(0, s, e) < e - s:
                continue
            ends[s] = e
            if container and kind is K.ERROR:
                messages.append((s, e))  # what a message mentions stays visible, but for names (below)
            else:
                _mark(occupied, s, e)
            if ref not in first or first[ref][0] > s + offset:
                first[ref] = (s + offset, e + offset, kind)
    for s, e in messages:  # "Error: Signature has expired": the capital starts a message, not a name
        _mark(occupied, s, e)
    for s, e, ref in _names(sc):  # NAME comes last: nothing below it needs its spans marked
        if ref not in first and occupied.count(0, s, e) == e - s:
            first[ref] = (s + offset, e + offset, K.NAME)


def extract_entities(text: str) -> list[Mention]:
    """Every entity mentioned in text, one Mention per ref, in order of first appearance.

    Deterministic and total: any ``str`` is accepted (control characters, lone surrogates, megabytes).
    Beyond 3 million characters only the first and last 1.5 million are scanned, cut at line breaks:
    a paste that large is a log or a dump, whose context is at its start and whose failure is at its
    end, and scanning all of it would cost seconds on every turn.

    Args:
        text: A chat message, a pasted log, code, or any other text.

    Returns:
        The mentions, each labelled as it first appears. Where spans of different kinds overlap, the
        higher-precedence kind wins: URL > PATH > ENV_VAR > ERROR > SYMBOL > COMMAND > CONFIG_KEY >
        IDENTIFIER > DATE > QUANTITY > TITLE > NAME.
    """
    first: dict[str, tuple[int, int, EntityKind]] = {}
    if len(text) <= _LIMIT:
        _extract(text, 0, first)
    else:
        head_end = text.rfind("\n", 0, _LIMIT // 2) + 1 or _LIMIT // 2
        tail_start = text.find("\n", len(text) - _LIMIT // 2) + 1 or len(text) - _LIMIT // 2
        _extract(text[:head_end], 0, first)
        _extract(text[tail_start:], tail_start, first)
    ordered = sorted(first.items(), key=lambda item: item[1][0])
    return [Mention(kind, text[s:e], ref) for ref, (s, e, kind) in ordered]
