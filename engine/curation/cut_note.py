"""The panel's note on how much of a long session is curated, or how much is read so far."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.curation.session_curation import SessionCuration


def cut_note(curation: SessionCuration) -> tuple[str, ...]:
    """The panel's note on a session too long to curate whole, or still being read (else none)."""
    if (building := curation.building) is not None:
        return (
            f"Curating: {building.read:,} of {building.total:,} messages read; this request was "
            f"planned from the latest {building.read:,}.",
        )
    if (cut := curation.cut) is None:
        return ()
    pinned_before = next((n for n, i in enumerate(curation.items) if i.id > cut.after), len(curation.items))
    told = curation.state.told_earlier.told
    story = f" are told in the story so far (the latest {told:,})," if told else ""
    return (
        f"Only the latest {cut.kept:,} messages of this session, and those you pinned, are curated and sent "
        f"from: the {cut.earlier - pinned_before:,} others stay in the store (scroll up or search to read "
        f"them),{story} are recalled when a message names what only they hold, and their standing "
        "instructions hold.",
    )
