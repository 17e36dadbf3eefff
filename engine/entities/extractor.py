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

Here: the extractors of URLs, paths, env vars, errors, dates, quantities and titles, and the
resolution. Elsewhere: the patterns (``entity_patterns``, from the word lists in
``entity_vocabulary``), the scanned text (``entity_scan``), code-shaped entities (``entity_code``)
and names (``entity_names``).
"""

from __future__ import annotations

import functools

from engine.entities.code import _code_spans, _config_keys, _word_tokens
from engine.entities.mentions import EntityKind, Mention
from engine.entities.names import _names
from engine.entities.patterns import (
    _AGO_HEAD,
    _COLON_AFTER,
    _DOT,
    _DOTFILE_AT,
    _DOTTED_AT,
    _ENV_CALL,
    _ENV_DOLLAR,
    _ENV_PERCENT,
    _ERR_CODE,
    _ERR_SUFFIX,
    _EXT_AT,
    _HTTP_TAIL,
    _KEY_SHAPE,
    _KEYWORD,
    _LINE_NO,
    _MESSAGE,
    _MONTH_DATE,
    _NAME_TAIL,
    _NAMED_FILE,
    _NUMBER,
    _NUMBER_TAIL,
    _PATH_AT,
    _PATH_RUN,
    _PREPOSITION,
    _QUOTES,
    _SCHEMES,
    _SENTENCE_END,
    _SLASH,
    _UNIT_AFTER,
    _URL_ANCHORS,
    _URL_REST,
    _WEEKDAY_DATE,
    _WIN,
    _YEAR_RX,
)
from engine.entities.scan import _RANK, _is_word, _norm, _run_end, _Scan
from engine.entities.vocabulary import (
    _DIRS,
    _ERROR_SUFFIXES,
    _EXTS,
    _KEYWORD_KIND,
    _MESSAGE_HEADS,
    _MONTH_NAMES,
    _NAMED_FILES,
    _NEVER,
    _PROG_LANGS,
    _ROOT_DIRS,
    _TITLE_SMALL,
    _TLDS,
)
from engine.text.terms import STOPWORDS

__all__ = ["EntityKind", "Mention", "extract_entities"]


K = EntityKind
_ONES = memoryview(b"\x01" * 4096)
_LIMIT = 3_000_000


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
                    start = m.start(1)
                    if len(msg) > 2 and msg[0] == msg[-1] and msg[0] in "'\"`" and " " not in msg:
                        start, msg = start + 1, msg[1:-1]  # KeyError: 'amount_cents' names amount_cents
                    messages[start] = start + len(msg)
    last = 0
    for s, e in sorted(messages.items()):
        if s >= last:  # "panic: runtime error: index out of range" holds one message, not two
            sc.add(K.ERROR, s, e, container=True)
            last = e
    for m in sc.each(_ERR_CODE):
        if not (m.start() and _is_word(text[m.start() - 1])):
            sc.add(K.ERROR, *m.span())


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


def _numbers(sc: _Scan) -> None:
    """Dates, HTTP statuses, quantities and money: everything that starts with a digit."""
    text = sc.text
    for m in sc.each(_NUMBER):
        group, (s, e) = m.lastgroup, m.span()
        if group in ("qty", "money", "age"):
            # "3x^2 + 2y", "= 6x": a number times a variable is algebra, not three times something.
            if text[e - 1].isalpha() and text[e - 2].isdigit():
                before = text[max(0, s - 8) : s].rstrip(" \t")[-1:]
                if text.startswith("^", e) or (before and before in "=+-*/^(,"):
                    continue
            sc.add(K.QUANTITY, s - (group == "money"), e)
        elif group == "iso" and m[0][10:11] in ("T", " ") and (not s or text[s - 1] == "\n"):
            continue  # "2024-03-05 02:00:01 INFO ...": a log line's time stamp, one per line
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
    for s, e in sc.quiet.functions:  # a trace's own frames name their functions ("in load_invoices")
        sc.add(K.SYMBOL, s, e)
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
        if ref not in first and occupied.count(0, s, e) == e - s and s not in sc.quiet:
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
        The mentions, each labelled as it first appears; a thing mentioned as two kinds (a call and an
        identifier) is one mention, of the higher-precedence kind. Where spans of different kinds
        overlap, the higher-precedence kind wins: URL > PATH > ENV_VAR > ERROR > SYMBOL > COMMAND >
        CONFIG_KEY > IDENTIFIER > DATE > QUANTITY > TITLE > NAME.
    """
    first: dict[str, tuple[int, int, EntityKind]] = {}
    if len(text) <= _LIMIT:
        _extract(text, 0, first)
    else:
        head_end = text.rfind("\n", 0, _LIMIT // 2) + 1 or _LIMIT // 2
        tail_start = text.find("\n", len(text) - _LIMIT // 2) + 1 or len(text) - _LIMIT // 2
        _extract(text[:head_end], 0, first)
        _extract(text[tail_start:], tail_start, first)
    # One thing, one mention: `load_invoices` and load_invoices() are the same function, whichever
    # kinds their spans were given; the kind of higher precedence names it, where it first appears.
    things: dict[str, tuple[int, str, int, int, EntityKind]] = {}  # first position, then the winner
    for ref, (s, e, kind) in sorted(first.items(), key=lambda item: item[1][0]):
        thing = ref.partition(":")[2]
        held = things.get(thing)
        if held is None:
            things[thing] = (s, ref, s, e, kind)
        elif _RANK[kind] < _RANK[held[4]]:
            things[thing] = (held[0], ref, s, e, kind)
    ordered = [thing[1:] for thing in sorted(things.values())]
    return [Mention(kind, text[s:e], ref) for ref, s, e, kind in ordered]
