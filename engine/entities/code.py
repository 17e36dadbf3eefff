"""Code-shaped entities: symbols and identifiers known by their shape (calls, snake_case, ALL_CAPS,
camelCase), commands in code and shell lines, and configuration keys."""

from __future__ import annotations

import functools
import re

from engine.entities.mentions import EntityKind
from engine.entities.patterns import (
    _CALL,
    _CAMEL,
    _ENV_ASSIGN,
    _ENV_SHAPE,
    _EQ,
    _HUMP,
    _IDENT,
    _LINE_KEY,
    _NAME_PREFIXED,
    _PROMPT,
    _SECTION,
    _SHELL_LINE,
    _SNAKE_SHAPE,
    _UNDERSCORE,
    _WORD_AT,
)
from engine.entities.scan import _is_word, _norm, _run_end, _Scan
from engine.entities.vocabulary import (
    _BRANDS,
    _CONTROL,
    _KEYWORDS,
    _PROG_LANGS,
    _PROGRAMS,
    _SHELL_LANGS,
)
from engine.text.terms import STOPWORDS

K = EntityKind
_CONFIG_LANGS = frozenset(("yaml", "yml", "toml", "ini", "cfg", "conf", "env", "dotenv", "properties"))
_CALL_VALUE = re.compile(r"[ \t]*[A-Za-z_][\w.]{0,127}\(")


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
            elif _IDENT.fullmatch(body) and len(body) > 1 and body.casefold() not in _KEYWORDS:
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
        # "f(since=x)" passes an argument, "rows = load(cfg)" assigns a variable, and a log's
        # "since=2024-03-02" says "since": none is a configuration key.
        before = text[max(0, s - 40) : s].rstrip(" \t")[-1:]
        if (
            before in ("(", ",")
            or _CALL_VALUE.match(text, i + 1)
            or (key.casefold() in STOPWORDS and lang not in _CONFIG_LANGS)
        ):
            continue
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
