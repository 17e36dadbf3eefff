"""The request's standing-instructions section: the current ones verbatim, within a bounded share of
the budget, and the superseded ones only when the new message is about their subject.

Placed after the system prompt and the memory section, so an instruction stays in the model's view
however old its message is, even when the message itself was pruned or summarized.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.standing.book import Standing, StandingBook

STANDING_SHARE = 0.06
"""The share of the budget the section may take; its newest current statements go first."""
STANDING_FLOOR = 120
"""In a small budget the section may take this many tokens, up to :data:`STANDING_MOST` of it."""
STANDING_MOST = 0.15
HEADER = "The user's standing instructions, preferences and decisions in this chat, in their own words:"
EARLIER = "Replaced since (not to follow; the new message is about them):"
SECTION_OVERHEAD = 4
"""The chat format's tokens around the section's message."""


@dataclass(frozen=True, slots=True)
class StandingSection:
    """What one request's section holds."""

    text: str
    tokens: int
    """Its cost, with the chat format's overhead."""
    sent: tuple[Standing, ...]
    """The current statements listed, in conversation order."""
    earlier: tuple[Standing, ...]
    """The superseded statements listed because the new message is about their subject."""
    left_out: int = 0
    """Current statements that did not fit the section's share (the oldest first)."""
    too_long: int = 0
    """Current statements too long to send every turn until the user shortens them."""

    @property
    def sources(self) -> tuple[int, ...]:
        """The messages its statements come from (hand-added ones have none)."""
        return tuple(s.message_id for s in (*self.sent, *self.earlier) if s.message_id is not None)


TOO_LONG_NOTE = (
    "A standing instruction is too long to send with every request: shorten it in /standing "
    "(Heedful never rewrites your words)."
)


def standing_left_out_note(count: int) -> str:
    """The panel's note when the section's share cannot hold every current statement."""
    them = "1 older standing instruction was" if count == 1 else f"{count} older standing instructions were"
    return f"{them} left out: the section's share of the budget is full (/standing lists them)."


def share(budget: int) -> int:
    """The most tokens the section takes in a request of ``budget`` tokens."""
    return int(max(budget * STANDING_SHARE, min(STANDING_FLOOR, budget * STANDING_MOST)))


def line(entry: Standing) -> str:
    """One statement's line: the user's words as they are (the message ids travel as sources)."""
    return f"- {entry.text}"


def section_for(
    book: StandingBook, new_text: str, limit: int, count: Callable[[str], int]
) -> StandingSection | None:
    """:func:`build_section` for the book's statements, remembered while they, the superseded ones
    the message is about and the limit stay the same (a plan per turn, and previews between)."""
    entries = book.entries()
    if not entries:
        return None
    changed = book.changes().about(new_text)
    key = (limit, tuple(s.key for s in changed))
    memo = book.memo
    if key not in memo:
        if len(memo) > 8:
            memo.clear()
        tokens = book.line_tokens

        def counted(text: str) -> int:
            found = tokens.get(text)
            if found is None:
                if len(tokens) > 512:
                    tokens.clear()
                found = tokens[text] = count(text)
            return found

        memo[key] = build_section(entries, changed, limit, counted)
    return memo[key]


def build_section(
    entries: Sequence[Standing], changed: Sequence[Standing], limit: int, count: Callable[[str], int]
) -> StandingSection | None:
    """The section for a request, in at most ``limit`` tokens, the superseded statements its new
    message is about (``changed``) after the current ones (None: nothing to list, or nothing fits)."""
    current = [s for s in entries if s.current]
    if not current or limit <= 0:
        return None
    used = count(HEADER) + SECTION_OVERHEAD + 1
    sent: list[Standing] = []
    left_out = too_long = 0
    for entry in reversed(current):  # the newest first: the latest word on each subject
        if entry.too_long:
            too_long += 1
            continue
        need = count(line(entry)) + 1
        if used + need > limit:
            left_out += 1
            continue
        sent.append(entry)
        used += need
    if not sent:
        return None
    earlier: list[Standing] = []
    if changed:
        used += count(EARLIER) + 1
        for entry in reversed(changed):
            need = count(line(entry)) + 1
            if not entry.too_long and used + need <= limit:
                earlier.append(entry)
                used += need
    order = {s.key: n for n, s in enumerate(entries)}
    sent.sort(key=lambda s: order[s.key])
    earlier.sort(key=lambda s: order[s.key])
    lines = [HEADER, *(line(s) for s in sent)]
    if earlier:
        lines += [EARLIER, *(line(s) for s in earlier)]
    text = "\n".join(lines)
    return StandingSection(
        text, count(text) + SECTION_OVERHEAD, tuple(sent), tuple(earlier), left_out, too_long
    )


KEPT = "kept: standing instruction, sent in the standing section"
EARLIER_KEPT = "kept: a replaced standing instruction, sent because the new message is about its subject"


def standing_reasons(section: StandingSection | None) -> dict[int, str]:
    """What the panel and the why dialog add to the reason of each message the section quotes."""
    if section is None:
        return {}
    reasons = {s.message_id: EARLIER_KEPT for s in section.earlier if s.message_id is not None}
    reasons.update((s.message_id, KEPT) for s in section.sent if s.message_id is not None)
    return reasons
