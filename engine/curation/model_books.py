"""The model's summaries and story lines a session's curation holds: those stored, and books for
those wanted, or none when the model in use writes none (the curation must not wait for them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.curation.curation_state import CurationState
    from engine.protocols.store import ChatStore
    from engine.summaries.model import SummaryLevel


def equip_model_books(
    state: CurationState, store: ChatStore, session_id: int, level: SummaryLevel, *, writes: bool
) -> None:
    """Give ``state`` the books at ``level`` when the model in use ``writes`` summaries (read from
    ``store`` once), or take them away."""
    if not writes:
        state.model_summaries = None
        state.story_book = None
        return
    book = state.model_summaries
    if book is None or book.level is not level:
        from engine.summaries.book import SummaryBook

        book = state.model_summaries = SummaryBook(level)
        book.load(store.load_summaries(session_id))
    if state.story_book is None:
        from engine.summaries.story_book import StoryBook

        state.story_book = StoryBook()
        state.story_book.load(store.load_story_lines(session_id))
