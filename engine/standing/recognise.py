"""Recognising standing instructions, preferences and decisions in a user's message.

Sentence patterns in English, conservative (precision over recall): an imperative with a standing
marker ("from now on", "always", "never", "don't ... ever"), a stated preference ("I prefer X over
Y", "I'd rather"), a decision ("we decided to use X", "let's go with X", "switch to X"). A question,
a one-off request ("answer this in French"), reported or quoted speech and anything inside code are
not standing. Each statement keeps its sentence verbatim: the user's own words, never rewritten.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from engine.standing.subjects import Subject, subject_of

SCAN_CHARS = 4000
"""Only a message's opening is read: standing instructions are short, and a paste must not cost."""
RECOGNISER_VERSION = 1
"""Bump when what is recognised changes: a long session's stored scan (which of its messages state
something) is then read again from its messages."""


class StandingKind(enum.StrEnum):
    INSTRUCTION = "instruction"
    """How the assistant must behave ("from now on answer in French")."""
    PREFERENCE = "preference"
    """What the user prefers ("I prefer pytest over unittest")."""
    DECISION = "decision"
    """What the user (or the team) has decided ("we decided to use PostgreSQL")."""


@dataclass(frozen=True, slots=True)
class Statement:
    """One standing statement: its sentence as the user wrote it, its kind and what it is about."""

    text: str
    kind: StandingKind
    subject: Subject


# --- what never counts: code, quotes, block quotes -------------------------------------------------------
_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]*)`")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|'(?=[^'\n]*\s)[^'\n]*'(?!\w)")
_BLOCK_QUOTE = re.compile(r"^[ \t]*>.*$", re.M)
_INDENTED_CODE = re.compile(r"^(?: {4}|\t).*$", re.M)
_SENTENCE = re.compile(r"[^.!?;\n]+(?:[.!?;]+|$)", re.M)


def _blank(match: re.Match[str]) -> str:
    """A masked span: same length (positions stay), no words, a sentence break."""
    return "\n" + " " * (len(match.group(0)) - 1) if match.group(0) else ""


def _inline(match: re.Match[str]) -> str:
    """Inline code names one thing ("`pytest`"): its single word stays, anything longer is masked."""
    inner = match.group(1)
    if inner and re.fullmatch(r"[\w.+-]+", inner):
        return " " + inner + " "
    return " " * len(match.group(0))


def masked(text: str) -> str:
    """``text`` with code, quotes and block quotes blanked out (same length, so a sentence found in
    it is cut from the original by position)."""
    text = _FENCE.sub(_blank, text)
    text = _INDENTED_CODE.sub(_blank, text)
    text = _BLOCK_QUOTE.sub(_blank, text)
    text = _INLINE_CODE.sub(_inline, text)
    return _QUOTED.sub(lambda m: " " * len(m.group(0)), text)


# --- the patterns (over one lower-cased sentence, its leading fillers taken off) ----------------------------
_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|so|and|also|oh|actually|alright|all right|right|well|btw|by the way|hey|one more thing"
    r"|note|important|reminder|remember|fyi|just so you know|last thing|new rule|rule)\b[\s,:;!-]*)+"
)
_MARKER = re.compile(
    r"\b(?:from now on|going forward|from here on(?: out)?|from this point (?:on|forward)|henceforth"
    r"|for the rest of (?:this|the|our) (?:conversation|chat|session|project)"
    r"|in (?:all )?(?:your )?future (?:answers|replies|responses|messages)"
    r"|in (?:all|every one of) your (?:answers|replies|responses)|in every (?:answer|reply|response)"
    r"|every time you (?:answer|reply|respond|write))\b"
)
_VERBS = (
    r"(?:use|using|add|include|write|put|answer|reply|respond|give|show|mention|say|apologi[sz]e|explain"
    r"|repeat|start|begin|end|format|call|suggest|recommend|assume|ask|output|print|wrap|make|keep|be|speak"
    r"|talk|translate|remind|refer|bold|cite|quote|comment|prefix|sign|double-check|check|run|test|type"
    r"|respect|follow|stick|avoid|prefer|list|number|summari[sz]e|convert|express|measure|round|show)"
)
_ALWAYS = re.compile(
    rf"^(?:please,? )?(?:always|never(?! mind)(?: ever)?|don'?t ever|do not ever|never again)"
    rf"(?:,? please)? {_VERBS}\b"
)
_DONT = re.compile(
    r"^(?:please,? )?(?:don'?t|do not|stop|quit|no more)(?:,? please)? "
    r"(?=(?:using|use|adding|add|including|include|putting|put|writing|write|apologi[sz]ing|apologi[sz]e"
    r"|saying|mentioning|mention|suggesting|suggest|recommending|recommend|giving|give|asking me)\b)"
)
_WANT = re.compile(
    r"^(?:i|we) (?:want|need|'d like|would like|expect) (?:you )?to (?:always|never)\b"
    r"|^(?:you (?:should|must|need to|have to)|make sure (?:to|you)|be sure to|remember to)"
    r" (?:always|never)\b"
)
_PREFER = re.compile(
    r"^(?:i|we)(?: (?:really|generally|usually|strongly|much|definitely|personally|always))? ?"
    r"(?:prefer|'d prefer|would prefer|'d rather|would rather|like(?= (?:\S+ ){1,4}(?:better|more)\b))"
    r"|^my (?:strong )?preference is\b"
)
_DECISION_VERB = (
    r"(?:use|go with|switch to|switch over to|move to|migrate to|stick with|stay with|adopt|keep using"
    r"|drop|standardi[sz]e on|settle on|build (?:it |this |everything )?(?:with|in|on)|write (?:it |this )?in"
    r"|host (?:it |this )?on|deploy (?:it |this )?(?:on|to)|target|not use|avoid)"
)
_DECISION = re.compile(
    rf"^(?:we|i)(?:'ve| have)? (?:decided|agreed) (?:to {_DECISION_VERB}\b|on\b|that\b)"
    rf"|^(?:we|i)(?:'ve| have)? (?:chosen|chose|picked|settled on|went with|gone with)\b"
    rf"|^(?:we|i)(?:'ll| will|'re going to| are going to|'re| are) (?:go(?:ing)? with|stick(?:ing)? with"
    rf"|switch(?:ing)? to|standardi[sz](?:e|ing) on|us(?:e|ing)|mov(?:e|ing) to|migrat(?:e|ing) to)\b"
    rf"|^let'?s (?:{_DECISION_VERB})\b"
    rf"|^(?:switch|move|migrate|change) (?:everything |it |over )?(?:back )?to\b"
    rf"|^go with\b|^(?:the )?(?:final )?decision(?: is|:)"
)
_QUESTION_START = re.compile(
    r"^(?:what|why|how|when|where|who|which|whose|whom|is|are|was|were|do|does|did|have|has|had|should"
    r"|shall|may|might|if|unless|whether)\b"
)
_POLITE = re.compile(r"^(?:(?:can|could|would|will) you|please)\b")
_ONE_OFF = re.compile(
    r"\b(?:this|that|these|those|here|it|them|this time|for now|just once|right now|today|the above"
    r"|the following|below|above)\b"
)
_DEICTIC_START = re.compile(
    r"^(?:(?:to |not to )?(?:do |use |keep |have )?(?:this|that|these|those|it|them|yours|mine"
    r"|the (?:first|second|third|last|former|latter|other|above|previous)(?: one| option| version)?))\b"
)
_PAST_TIME = re.compile(
    r"\b(?:yesterday|last (?:week|weekend|month|year|night|time)|ago|back then|once upon)\b"
)
_SELF_TALK = re.compile(r"^(?:i|we|you|he|she|they|it|my|our|your)\b")
MAX_SENTENCE_CHARS = 600
"""A "sentence" longer than this is a paragraph without full stops, not one instruction."""


def recognise(text: str) -> list[Statement]:
    """The standing statements of a user's message, in order (none for most messages)."""
    if not _maybe(text):
        return []
    sample = text[:SCAN_CHARS]
    plain = masked(sample)
    found: list[Statement] = []
    for match in _SENTENCE.finditer(plain):
        sentence = match.group(0)
        if not sentence.strip() or len(sentence) > MAX_SENTENCE_CHARS:
            continue
        kind, body = _classify(sentence)
        if kind is None:
            continue
        subject = subject_of(body)
        if not subject.terms and subject.slot is None:
            continue  # nothing it is about ("don't do that")
        start, end = match.span()
        verbatim = sample[start:end].strip()
        found.append(Statement(verbatim, kind, subject))
    return found


_ANY = re.compile(
    r"from now on|going forward|from here on|from this point|henceforth|for the rest of|future|every time"
    r"|always|never|don'?t|do not|stop|quit|no more|prefer|rather|better|more than|decided|decision|agreed"
    r"|chose|chosen|picked|settled|went with|gone with|go with|going with|stick|switch|move|migrat|let'?s"
    r"|we'?ll|we will|we'?re|we are|i'?ll|i will|preference|use"
)
_TURKISH_I = str.maketrans({"ı": "i", "İ": "i"})
"""The two letters that match "i" ignoring case but that ``casefold`` does not make an "i"."""


def _maybe(text: str) -> bool:
    """A quick test most messages fail: no word any pattern starts from. Searched in the folded
    text: a case-blind search of the alternation tried every position letter by letter."""
    sample = text[:SCAN_CHARS]
    if "ı" in sample or "İ" in sample:
        sample = sample.translate(_TURKISH_I)
    return _ANY.search(sample.casefold()) is not None


def _classify(sentence: str) -> tuple[StandingKind | None, str]:
    """The kind of standing statement ``sentence`` makes (None: not one), and the part of it that
    says what it is about."""
    lowered = " ".join(sentence.lower().replace("’", "'").split())
    question = lowered.rstrip().endswith("?")
    body = _LEAD.sub("", lowered).strip(" ,.;:!?-")
    if not body or _PAST_TIME.search(body):
        return None, ""
    marker = _MARKER.search(body)
    if question or _QUESTION_START.match(body):
        # Only a polite request with a standing marker ("could you answer in French from now on?").
        if marker is not None and _POLITE.match(body) and not _QUESTION_START.match(body):
            return StandingKind.INSTRUCTION, body
        return None, ""
    for pattern in (_ALWAYS, _WANT):
        hit = pattern.match(body)
        if hit:
            return StandingKind.INSTRUCTION, body[hit.end() :]
    hit = _DONT.match(body)
    if hit:
        rest = body[hit.end() :]
        return (StandingKind.INSTRUCTION, rest) if not _ONE_OFF.search(rest) or marker else (None, "")
    hit = _PREFER.match(body)
    if hit:
        rest = body[hit.end() :].strip()
        if _DEICTIC_START.match(rest):
            return None, ""  # "I prefer this approach": about what is on screen, not standing
        return StandingKind.PREFERENCE, rest
    hit = _DECISION.match(body)
    if hit:
        rest = body[hit.end() :]
        if (_ONE_OFF.search(_strip_that(rest)) and marker is None) or len(rest.split()) > 24:
            return None, ""
        return StandingKind.DECISION, rest
    if marker is not None:
        if _SELF_TALK.match(body) and not re.match(r"^(?:i|we) (?:want|need|'d like|would like)\b", body):
            # "From now on I'll write the tests first": the user's own standing decision.
            if re.match(r"^(?:i|we)(?:'ll| will| are going to|'re going to| shall)\b", body):
                return StandingKind.DECISION, body
            return None, ""
        return StandingKind.INSTRUCTION, body
    return None, ""


def _strip_that(rest: str) -> str:
    """A decision's object without the "that" that introduces it ("decided that the API ...")."""
    return rest[5:] if rest.startswith("that ") else rest
