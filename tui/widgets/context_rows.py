"""The context panel's rows: a message (its mark, who, tokens, the start of its text) or an
entity, and the one-line "why" under the list."""

from __future__ import annotations

from textual.content import Content

from engine.curation.context_view import EntityView, ItemView, Mark
from tui.sanitize import inert
from tui.widgets.request_picture import compact

PREVIEW_CHARS = 80
MARK_SYMBOLS = {
    Mark.VERBATIM: "·",
    Mark.PINNED: "📌",
    Mark.RECALLED: "↺",
    Mark.SUMMARIZED: "≈",
    Mark.PRUNED: "✂",
    Mark.LEFT_OUT: "○",
}
MARK_LEGEND = ("📌 pinned  ↺ recalled  ≈ summary sent", "✂ pruned (restorable)  ○ not this time")
"""What the row marks mean, in lines that fit the narrowest panel (shown under the rows)."""
STORY_TAG = "story "
"""Before the text of a message not sent in full that the story so far quotes (F5 shows it)."""
STORY_LEGEND = "story: quoted in the story so far (F5)"
"""The legend's line for the tag, shown when a row has it."""
ROLE_NAMES = {"user": "you", "assistant": "ai", "system": "sys", "tool": "tool"}


def item_row(item: ItemView, *, with_reason: bool = False) -> Content:
    """``≈ ai #12      340  The login fails…``: mark, who, id, tokens, then the start of the text
    (tagged ``story`` when only the story so far quotes it; and, for the user's messages not sent,
    the reason on a line of its own)."""
    preview = inert(item.preview[:PREVIEW_CHARS])
    who = f"{ROLE_NAMES.get(item.role, item.role)} #{item.id}"
    row = Content.assemble(
        f"{MARK_SYMBOLS[item.mark]} ",
        (f"{who:<9}", "bold"),
        f"{compact(item.tokens):>5}  ",
        (f"x{item.repeated} ", "bold") if item.repeated else "",
        (STORY_TAG, "italic") if in_story(item) else "",
        (preview, "" if item.in_prompt else "dim"),
    )
    if not with_reason:
        return row
    return Content.assemble(row, "\n   ", (inert(item.reason[: PREVIEW_CHARS * 2]), "italic"))


def in_story(item: ItemView) -> bool:
    """Not sent in full, but the story so far quotes it: the model reads it in those words."""
    return bool(item.story) and not item.sent_in_full


def entity_row(entity: EntityView) -> Content:
    return Content.assemble(
        "  ",
        (inert(entity.label[:PREVIEW_CHARS]), "bold"),
        (f" {entity.kind} · turn {entity.last_turn}", "dim"),
    )


def item_why(item: ItemView) -> str:
    who = ROLE_NAMES.get(item.role, item.role)
    repeats = f" · {repeats_line(item)}" if item.group else ""
    return f"{who} #{item.id} · {item.tokens:,} tokens{repeats} · {item.placement}: {item.reason}"


def repeats_line(item: ItemView) -> str:
    """The pastes of the same error this message is one of, named (each restorable on its own)."""
    pastes = ", ".join(f"#{i}" for i in item.group)
    if item.repeated:
        return f"the same error was pasted {len(item.group)} times ({pastes}); this latest one stands for all"
    return f"same error as #{item.group[-1]}: pasted {len(item.group)} times ({pastes})"


def entity_why(entity: EntityView) -> str:
    return f"{entity.label} · {entity.kind} · last mentioned in turn {entity.last_turn}: {entity.reason}"


def item_matches(item: ItemView, needle: str) -> bool:
    said = f"#{item.id} {item.role} {item.placement} {item.mark.value} {item.reason} {item.preview}"
    return needle in said.casefold()


def entity_matches(entity: EntityView, needle: str) -> bool:
    return needle in f"{entity.label} {entity.kind} {entity.reason}".casefold()
