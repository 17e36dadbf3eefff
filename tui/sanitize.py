"""Make untrusted text inert before any widget sees it (the rules live in :mod:`engine.text.inert`).

No Textual or Rich render path removes ESC or C1 control codes, so model output such as an OSC 52
sequence would reach the terminal and write the user's clipboard. Every string that came from a
model, a file, a server or the user's clipboard passes through :func:`inert` before display; the
stored text stays as it was, so copying a message copies its exact text.
"""

from __future__ import annotations

from engine.text.inert import inert, inert_controls, replaced_controls

__all__ = ["inert", "inert_controls", "replaced_controls"]
