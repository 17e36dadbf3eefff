"""The context panel's standing-instructions lines: how many the next request carries, and each in
the user's own words (inert), the replaced ones the new message is about marked so. /standing lists,
edits and removes them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from tui.sanitize import inert
from tui.widgets.laid_out_once import LaidOutStatic

if TYPE_CHECKING:
    from engine.standing.section import StandingSection

SHOWN = 3
"""The newest this-many are shown one a line; /standing lists them all."""


def standing_lines(section: StandingSection | None) -> str:
    """The lines the panel shows for the request's standing section ("" for none)."""
    if section is None:
        return ""
    sent = len(section.sent)
    head = f"Standing instructions: {sent} sent"
    if section.earlier:
        head += f", {len(section.earlier)} replaced one{'s' if len(section.earlier) > 1 else ''} asked about"
    if section.left_out or section.too_long:
        head += f", {section.left_out + section.too_long} not sent"
    lines = [head + " · /standing"]
    lines += [f"• {inert(s.text)}" for s in section.sent[-SHOWN:]]
    lines += [f"↺ {inert(s.text)} (replaced)" for s in section.earlier[-1:]]
    return "\n".join(lines)


class StandingBox(LaidOutStatic):
    """The standing instructions of the next request, a few lines at most; hidden when none."""

    DEFAULT_CSS = """
    StandingBox { height: auto; max-height: 5; color: $text-muted; display: none; text-wrap: nowrap;
        text-overflow: ellipsis; }
    StandingBox.-shown { display: block; }
    """

    def show(self, section: StandingSection | None) -> None:
        text = standing_lines(section)
        shown = self.content
        if not isinstance(shown, Content) or shown.plain != text:
            self.update(Content(text))
        self.set_class(bool(text), "-shown")
