"""Names: capitalised sequences that name people, places and things, told apart from words that are
capitalised only because they open a sentence."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

from engine.entities.mentions import EntityKind
from engine.entities.patterns import _AFTER_LABEL, _CAPWORD, _ITEM_LEAD, _LABEL, _NAME
from engine.entities.scan import _is_word, _norm, _Scan
from engine.entities.vocabulary import (
    _ADVERBS,
    _ARTICLES,
    _COMMON_SUFFIXES,
    _NEVER,
    _OPENERS,
    _SENTENCE_WORDS,
    _TITLE_SMALL,
    _UNITS,
)
from engine.text.terms import STOPWORDS

K = EntityKind


def _sentence_initial(text: str, s: int) -> bool:
    """True when the word at ``s`` starts a sentence, line, list item or quotation."""
    i, low = s, max(0, s - 16)
    while i > low and text[i - 1] in " \t\"'“‘([*_>#-•":
        i -= 1
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] in ",;&–—")


def _is_common(word: str) -> bool:
    """A word that may open a sentence capitalised without being a name: "When", "Hope", "Painting",
    "Attached", "Absolutely", "Consistency": listed, or shaped like a gerund, participle, adverb or
    abstract noun."""
    return word in _SENTENCE_WORDS or (len(word) > 5 and word.endswith(_COMMON_SUFFIXES))


def _opens_sentence(word: str, run: int) -> bool:
    """Whether a common word that starts a capitalised run of ``run`` words is outside the name.

    Function words and adverbs are ("Also Caroline", "Actually New York"); so is a verb before one
    name ("Tell Caroline"). Before two or more a common word starts the name ("Hope Adoption Center").
    """
    if word in STOPWORDS or (len(word) > 5 and word.endswith(_COMMON_SUFFIXES)):  # "Applying Heron"
        return True
    return word in _OPENERS and (run == 2 or word in _ADVERBS or word.endswith("ly"))


def _digit_heavy(word: str) -> bool:
    return sum(c.isdigit() for c in word) * 2 > len(word)  # "E0308", "B12"; not "S3", "Q1"


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
        # One stopword, one unit ("GB", "Miles") or one code-like word ("E0308") is no name.
        alone = len(run) == 1 and folded[run[0]]
        if run and not (alone and (alone in STOPWORDS or alone in _UNITS or _digit_heavy(alone))):
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


def _label_spans(sc: _Scan) -> tuple[list[int], list[int]]:
    """Starts and ends of the headings and labels of the text, in order."""
    starts: list[int] = []
    ends: list[int] = []
    for m in sc.each(_LABEL, sc.padded):
        group = m.lastgroup if m.lastgroup != "em" else "e"
        end = m.end(group or "t") - 1
        if group == "e":  # "**Option 1**: Greek Yogurt with Granola": a value in Title Case is a heading too
            line_end = sc.text.find("\n", end, end + 400)
            line_end = line_end if line_end >= 0 else min(len(sc.text), end + 400)
            rest = sc.text[m.end() - 1 : line_end].split()
            if rest and all(w[0].isupper() for w in rest if w[0].isalpha() and w not in _TITLE_SMALL):
                end = line_end
        starts.append(m.start(group or "t") - 1)
        ends.append(end)
    return starts, ends


def _names(sc: _Scan) -> Iterator[tuple[int, int, str]]:
    """Capitalised sequences that name things, as (start, end, ref).

    A word that is capitalised only where a sentence starts must earn its place: a common word ("When",
    "Hope") needs to appear capitalised mid-sentence too, and an unknown one ("Refactor", "Models")
    must not also be written in lower case nearby. A heading or a bold label
    ("**Set Clear Goals**:", "### Breakfast") is Title Case by convention, so what it holds is a name
    only if the text also names it in running prose.
    """
    text, found, mid, prose = sc.text, [], set[str](), set[str]()
    cache: dict[tuple[str, bool], _Analysis] = {}
    label_starts, label_ends = _label_spans(sc) if any(c in text for c in "#*_:") else ([], [])
    for m in sc.each(_NAME):
        s, match = m.start(), m[0]
        if sc.starts and sc.code(s) is not None:
            continue
        key = (match, _sentence_initial(text, s))
        analysis = cache.get(key) or cache.setdefault(key, _analyse_name(*key))
        k = bisect_right(label_starts, s) - 1
        label = k >= 0 and s < label_ends[k]
        # The first word of a list item, or of a label's value, is a heading word: "- Carrot sticks",
        # "**Option 1**: Greek yogurt". Unknown there, it must also be capitalised in running prose.
        line = text.rfind("\n", max(0, s - 400), s) + 1  # bounded: a huge line is no list
        opens_item = bool(
            (line or s <= 400)
            and (
                _ITEM_LEAD.fullmatch(text, line, s)
                or (k >= 0 and label_ends[k] >= line and _AFTER_LABEL.fullmatch(text, label_ends[k], s))
            )
        )
        if not label:
            mid.update(analysis[0])
            prose.update(ref for _, _, ref, needs in analysis[1] if not needs)
        if analysis[1]:
            found.append((s, label, opens_item, analysis[1]))
    for s, label, item, runs in found:
        for a, b, ref, needs in runs:
            if label and ref not in prose:
                continue
            if needs.startswith("^"):
                if needs[1:] in mid or not (item or _lowercase_nearby(text, needs[1:], s)):
                    yield s + a, s + b, ref
            elif not needs or needs in mid:
                yield s + a, s + b, ref
