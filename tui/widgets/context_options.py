"""The context panel's list as options: its messages by how they are sent, then its entities,
under headings, filtered by the words typed; an option nothing on which changed is reused."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.content import Content
from textual.widgets.option_list import Option

from engine.curation.context_view import (
    SENT_AS_SUMMARY,
    SENT_IN_FULL,
    ContextView,
    EntityView,
    ItemView,
    Mark,
    Section,
)
from tui.filtering import counted, nothing_matches
from tui.widgets.context_rows import (
    MARK_LEGEND,
    STORY_LEGEND,
    entity_matches,
    entity_row,
    in_story,
    item_matches,
    item_row,
)

ROWS_PER_GROUP = 120
"""Rows shown per group (a section's messages, or its entities) unless a filter narrows them: a
long session has thousands of pruned things, and laying out every row would slow each update."""
YOURS_NOT_SENT = "Your messages not sent"
SENT_IN_FULL_TITLE = "Sent in full"
SENT_AS_SUMMARY_TITLE = SENT_AS_SUMMARY.capitalize()
NOT_SENT = "Not sent"


def _by_placement(
    items: Iterable[ItemView],
) -> tuple[list[ItemView], list[ItemView], list[ItemView], list[ItemView]]:
    """The user's messages not sent, then the messages sent in full, as a summary and not sent,
    in one pass (a long session has thousands, and the panel is filled a few times a turn)."""
    yours: list[ItemView] = []
    full: list[ItemView] = []
    summary: list[ItemView] = []
    left_out: list[ItemView] = []
    summarized = Mark.SUMMARIZED
    for item in items:
        mark = item.mark
        if mark in SENT_IN_FULL:
            full.append(item)
        elif mark is summarized:
            summary.append(item)
        elif item.role == "user":
            yours.append(item)
        else:
            left_out.append(item)
    return yours, full, summary, left_out


class ContextOptions:
    """Makes the panel's options from a view, remembering what each row shows."""

    def __init__(self) -> None:
        self.shown: dict[str, ItemView | EntityView] = {}
        """What each row shows, by option id (headings and notes show nothing)."""
        self._options: dict[str, tuple[object, Option]] = {}
        """Each row's option and what its prompt was made from, for reuse by the next update."""
        self._reused: dict[str, tuple[object, Option]] = {}

    def clear(self) -> None:
        """Forget the rows (a session just opened): nothing of the last one is reused."""
        self.shown = {}
        self._options = {}

    def make(self, view: ContextView, typed: str) -> list[Option]:
        """The options for ``view``, narrowed to the rows that match the filter ``typed``."""
        needle = typed.strip().casefold()
        self._reused, self._options = self._options, {}
        self.shown = {}
        options: list[Option] = []
        # Newest first: what changed last is what the user is most likely to look for.
        items: Iterable[ItemView] = reversed(view.items)
        sent: Sequence[EntityView] = (*view.active, *view.retained)
        unsent: Sequence[EntityView] = view.pruned
        if needle:
            items = [i for i in items if item_matches(i, needle)]
            sent = [e for e in sent if entity_matches(e, needle)]
            unsent = [e for e in unsent if entity_matches(e, needle)]
        yours, full, summary, left_out = _by_placement(items)
        groups: list[tuple[str, str, Sequence[ItemView]]] = [
            ("yours", YOURS_NOT_SENT, yours),
            ("full", SENT_IN_FULL_TITLE, full),
            ("summary", SENT_AS_SUMMARY_TITLE, summary),
            ("unsent", NOT_SENT, left_out),
        ]
        for name, title, shown in groups:
            if not shown:
                continue  # an empty heading is one more line to read for nothing
            options.append(self._label(f"head-{name}", f"{title} ({counted(len(shown), 'message')})", "bold"))
            options.extend(self._group(name, shown, with_reason=name == "yours"))
        for name, title, found, sections in (
            ("entities-sent", "Entities in the request", sent, (Section.ACTIVE, Section.RETAINED)),
            ("entities-unsent", "Entities not in the request", unsent, (Section.PRUNED,)),
        ):
            if not found:
                continue
            options.append(self._label(f"head-{name}", f"{title} ({len(found):,})", "bold"))
            options.extend(self._group(name, found))
            if unlisted := sum(view.entities_not_shown.get(section, 0) for section in sections):
                options.append(self._label(f"unlisted-{name}", f"  … {unlisted:,} less relevant", "dim"))
        if needle and not self.shown:
            options.insert(0, self._label("nothing-matches", nothing_matches(typed), "italic"))
        if view.items:
            told = any(m.form == "story" for m in view.messages)  # then some row is tagged
            legend = (*MARK_LEGEND, STORY_LEGEND) if told else MARK_LEGEND
            options.extend(self._label(f"legend-{n}", line, "dim") for n, line in enumerate(legend))
        elif not needle:
            options.append(self._label("no-messages", "No messages yet: only the system prompt.", "dim"))
        self._reused = {}
        return options

    def _group(
        self, name: str, shown: Sequence[ItemView | EntityView], *, with_reason: bool = False
    ) -> list[Option]:
        """A group's rows: up to ROWS_PER_GROUP, and a count of the rest."""
        options = [self._option(row, with_reason=with_reason) for row in shown[:ROWS_PER_GROUP]]
        if len(shown) > ROWS_PER_GROUP:
            hidden = len(shown) - ROWS_PER_GROUP
            options.append(self._label(f"more-{name}", f"  … {hidden:,} more: Ctrl+F filters", "dim"))
        return options

    def _option(self, shown: ItemView | EntityView, *, with_reason: bool = False) -> Option:
        """The row's option: the one shown last time when nothing on it changed.

        Reusing it keeps its laid-out prompt (Content caches its height and render), so an update
        costs the rows that changed, not every row.
        """
        key: object
        if isinstance(shown, EntityView):
            option_id, key = f"entity:{shown.ref}", (shown.kind, shown.label, shown.last_turn)
        else:
            option_id = f"item-{shown.id}"
            key = (
                shown.mark,
                shown.section,
                shown.tokens,
                shown.repeated,
                in_story(shown),
                shown.reason if with_reason else None,
            )
        self.shown[option_id] = shown
        cached = self._reused.get(option_id)
        if cached is not None and cached[0] == key:
            option = cached[1]
        else:
            prompt = (
                entity_row(shown)
                if isinstance(shown, EntityView)
                else item_row(shown, with_reason=with_reason)
            )
            option = Option(prompt, id=option_id)
        self._options[option_id] = (key, option)
        return option

    def _label(self, option_id: str, text: str, style: str) -> Option:
        cached = self._reused.get(option_id)
        option = (
            cached[1]
            if cached is not None and cached[0] == text
            else Option(Content.styled(text, style), id=option_id, disabled=True)
        )
        self._options[option_id] = (text, option)
        return option
