"""The entity extractor's regular expressions (see :mod:`engine.entities.extractor` for how they stay fast).

Every pattern starts with a literal (a slash, a quote, a digit, a keyword) so that the regex engine
finds candidates with a fast scan; quantifiers are bounded and what follows a run can never be
found by giving part of it back, so nothing backtracks across more than one token. No possessive
repeats or atomic groups: early CPython 3.11 releases (3.11.2) match some of them wrongly.
"""

from __future__ import annotations

import re

from engine.entities.vocabulary import (
    _ERRNOS,
    _ERROR_SUFFIXES,
    _EXTS,
    _HTTP_REASONS,
    _KEYWORD_KIND,
    _MONTH_ABBR,
    _MONTHS,
    _NUMBER_WORDS,
    _PROGRAMS,
    _UNITS,
    _alt,
    _set,
    _trie,
)

_U = "A-Z" + "".join(re.escape(c) for c in map(chr, range(0xC0, 0x530)) if c.isupper() or c.istitle())
_MON = _alt(f"{_MONTHS} {_MONTH_ABBR}".split())
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:1[6-9]|2\d)\d\d"
_NUM = r"(?:\d{0,2}(?:,\d{3}){1,8}|\d{0,24})(?:\.\d{1,24})?"  # after a first digit: 1,000 / 12 / 3.5
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
# Not "[ \t]*:?[ \t]*": the two runs could split a long run of blanks every way (quadratic).
_HTTP_TAIL = re.compile(
    r"(?i:http(?:/\d(?:\.\d)?)?|status(?:[ \t]+code)?|error|code)[ \t]*(?::[ \t]*)?([1-5]\d\d)(?!\d)"
)
_NAME_TAIL = re.compile(r"[ \t]+([A-Za-z_]\w{0,127})(?!\w)")
_NUMBER = re.compile(  # everything that starts with a digit: dates, HTTP statuses, quantities, money
    r"\d(?<![\w.,/:#+-]\d)(?:(?P<iso>\d{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?)(?!\d)"
    r"|(?P<dmy>\d?/\d\d?/(?:\d{4}|\d\d)|\d?\.\d\d?\.\d{4})(?![\d/.]\d)"
    rf"|(?P<dm>\d?(?:st|nd|rd|th)?[ \t]+(?:of[ \t]+)?(?:{_MON})\.?(?:,?[ \t]+{_YEAR})?)(?!\w)"
    rf"|(?P<http>\d\d)(?<=[45]\d\d)[ \t]+(?:{_HTTP_REASONS})(?!\w)"
    rf"|(?P<money>(?<=[$€£¥]\d){_NUM}(?:[ \t]?(?:[kKMB]|bn|million|billion|thousand)(?!\w))?)"
    rf"|(?P<qty>{_NUM}{_UNIT_TAIL})"
    r"|(?P<age>\d?[- ]years?[- ]old)(?!\w)"  # "a 38-year-old psychologist"
    r"|(?P<year>\d{3})(?!\w))"
)
_YEAR_RX = re.compile(_YEAR)
_UNIT_AFTER = re.compile(_UNIT_TAIL)
_SCHEMES = _set("http https ftp ftps ws wss file")
_URL_ANCHORS = (re.compile("://"), re.compile(r"www\."))
_URL_REST = re.compile(r"[^\s<>\"'`{}|\\^]{1,2000}")
_SLASH = re.compile(r"/(?=[\w.@+-])")
_PATH_AT = re.compile(
    r"(?:~|\.\.?)?(?:/[\w.@+-]{1,255}){1,64}/?|[\w.@+-][\w.@+-]{0,254}(?:/[\w.@+-]{1,255}){1,64}/?"
)
_PATH_RUN = re.compile(r"[\w.@+~/-]*")
_LINE_NO = re.compile(r"(?::\d{1,9}){1,2}")
_EXT_AT = re.compile(rf"\.(?i:{_trie(_EXTS)})(?![\w@+-]|\.\w|/|\()")
_DOTFILE_AT = re.compile(r"\.[a-z][\w-]{1,64}(?:\.[\w-]{1,64}){0,4}(?![\w./(-])")
_WIN = re.compile(r":\\(?:[^\s\\:*?\"<>|,;']{1,255}\\?){1,64}")
_NAMED_FILE = re.compile("file")
_ENV_DOLLAR = re.compile(
    r"\$(?:\{([A-Za-z_]\w{0,127})(?:[:?+=-][^}\n]{0,200})?\}|([A-Za-z_]\w{0,127})(?!\w))"
)
_ENV_PERCENT = re.compile(r"%([A-Z_][A-Z0-9_]{0,127})%")
_ENV_CALL = re.compile(
    r"env(?:iron(?:\[|\.get\()|(?<=getenv)\(|::var\(|(?<=process\.env)\.)[ \t]*['\"]?(\w+)"
)
_ENV_SHAPE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_ENV_ASSIGN = re.compile(r"[A-Z][A-Z0-9_]+")
_ERR_SUFFIX = [re.compile(suffix) for suffix in _ERROR_SUFFIXES]
_ERR_CODE = re.compile(rf"E(?:{_alt(e[1:] for e in _ERRNOS)})(?!\w)")
_MESSAGE = re.compile(r"[ \t]*:[ \t]+([^\s`][^\n`]{0,199})")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_WORD_AT = re.compile(r"\w{0,256}")
_DOT = re.compile(r"\.(?=[A-Za-z_])")
_DOTTED_AT = re.compile(r"[A-Za-z_]\w{0,127}(?:\.[A-Za-z_]\w{0,127}){1,16}(?!\w|\.\w)")
_CALL = re.compile(r"\((?<=\w\()")
_UNDERSCORE = re.compile("_")
_CAMEL = re.compile(r"[A-Z](?:(?<=[a-z][A-Z])|(?<=[A-Z][A-Z])(?=[a-z]))")
_HUMP = re.compile(r"[A-Z][a-z]+")
_NAME_PREFIXED = re.compile(r"(?:Mc|Mac|De|Di|Da|Du|Le|La|Van|Von|O)[A-Z][a-z]+")
_SNAKE_SHAPE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_IDENT = re.compile(r"[A-Za-z_]\w{0,127}(?:\.[A-Za-z_]\w{0,127}){0,16}")
_EQ = re.compile(r"=(?![=>~])(?<![=!<>:+*/%&|^~-]=)")
_LINE_KEY = re.compile(r"\n[ \t]*(?:-[ \t]+)?([A-Za-z_][\w.-]{0,127})[ \t]*:(?=[ \t\n]|\Z)")
_SECTION = re.compile(r"\n[ \t]*\[\[?([A-Za-z_][\w.-]{0,127})\]\]?[ \t]*(?=\n|\Z)")
_KEY_SHAPE = re.compile(r"[A-Za-z_][\w.-]{0,127}")
_COLON_AFTER = re.compile(r"[ \t]*:(?![:/])")
_FENCE = re.compile(r"\n[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*")
_INLINE = re.compile(r"`([^`\n]+)`")
_PROMPT = re.compile(r"\n[ \t]*\$[ \t]+(\S[^\n]*)")
# A shell line starts with a program, maybe after a prompt and variable assignments ("FOO=1 python x").
_SHELL_LINE = re.compile(
    rf"\n[ \t]*(?:\$[ \t]+)?((?:[A-Z_][A-Z0-9_]{{0,63}}=[^\s]{{0,200}}[ \t]+){{0,4}}"
    rf"(?:{_alt(_PROGRAMS)}|[\w.~-]{{0,64}}/[\w./-]{{1,200}})(?=[ \t\n]|\Z)[^\n]*)"
)
# One pattern per opening quote: a literal first character is found by a fast scan, a class is not.
# What the quoted part may hold never includes a closing quote, so giving characters back cannot find
# one. The single quotes' part is taken whole in a lookahead and matched again by reference (an atomic
# group any 3.11 gets right): backtracking it would double the cost of "‘‘‘‘...", the slowest case.
_QUOTED = r"(?=((?:[^'’\n]|['’](?=\w)){1,120}))\1['’](?![\w'’])"  # inner apostrophes: "Charlotte's Web"
_QUOTES = [re.compile(r"“([^”\n]{1,120})”"), re.compile(r"«([^»\n]{1,120})»")]
_QUOTES += [
    re.compile(r"\"(?<![\w\"]\")([^\"\n]{1,120})\"(?![\w\"])"),
    re.compile(rf"'(?<![\w'’]'){_QUOTED}"),
]
_QUOTES += [re.compile(rf"‘(?<![\w'’]‘){_QUOTED}")]
# "Jean-Luc", "O'Brien": up to three more parts, each a whole run of at most 64 word characters. A part
# that is longer fails the word rather than ending it early, hence the nesting instead of "{0,3}".
_CAP_PART = rf"['’-][{_U}]\w{{0,63}}(?!\w)"
_NO_PART = rf"(?!['’-][{_U}])"
_CAP_REST = rf"\w{{0,63}}(?!\w)(?:{_CAP_PART}(?:{_CAP_PART}(?:{_CAP_PART}|{_NO_PART})|{_NO_PART})|{_NO_PART})"
_CAP = rf"[{_U}]{_CAP_REST}"
_CONNECTOR = r"(?:(?:of|de|da|di|del|du|van|von|der|den|al|bin)[ \t]+)?"
_NAME = re.compile(rf"[{_U}](?<![\w.@#$/\\][{_U}]){_CAP_REST}(?:(?:['’]s)?[ \t]+{_CONNECTOR}{_CAP}){{0,5}}")
_CAPWORD = re.compile(_CAP)
# Headings and labels, Title Case by convention: a "#" heading, a bold lead ("1. **Set Goals**:",
# "**Option 1:**") and a list item's "Label:" lead. Group "t" is the label's text.
_LIST_MARK = r"(?:[-*+•]|\d{1,3}[.)])[ \t]+"
_ITEM_LEAD = re.compile(rf"[ \t>]*{_LIST_MARK}[*_]{{0,2}}")  # a list item's line up to its first word
_AFTER_LABEL = re.compile(r"[*_]{0,2}[ \t]*[:\-–—]?[*_]{0,2}[ \t]+")  # from a label to its value
_LABEL = re.compile(
    r"\n[ \t>]*(?:#{1,6}[ \t]+(?P<t>[^\n]{1,200})"
    rf"|(?:{_LIST_MARK})?(?P<em>\*\*|__)(?P<e>[^\n*_]{{1,200}}?)(?:(?P=em)[ \t]*(?:[:\-–—]|$)|:(?P=em))"
    rf"|{_LIST_MARK}(?P<l>[^\n:*]{{1,60}}):)",
    re.M,
)  # Runs of token characters, matched in the reversed text: a backward scan at C speed, at most 256 long.
_RUNS = {
    chars: re.compile(rf"[{cls}]{{0,256}}") for chars, cls in [("", r"^\W_"), ("_", r"\w"), ("_.", r"\w.")]
}
_RUNS |= {chars: re.compile(rf"[\w{re.escape(chars[1:])}]{{0,256}}") for chars in ("_.-", "_.@+-", "_.@+~-")}
