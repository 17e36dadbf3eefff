"""Files the user attaches to a conversation (/attach): what is accepted, and how it is worded.

An attachment becomes a ``tool`` item: the engine sends it while the conversation refers to it and
lets it expire once nobody does (see engine/curation/forgetting.py). Binary and oversized files are refused
with a sentence saying why; reading the file is the caller's job (I/O stays at the edges).
"""

from __future__ import annotations

import re

MAX_ATTACHMENT_BYTES = 1_000_000
"""Larger files are refused: a 1 MB text is already about 250,000 tokens."""
_SNIFF_BYTES = 8_192
_HEAD = re.compile(r"(Attached file [^\n]* \([\d,]+ bytes\):)\n\n")


class AttachmentRefused(Exception):
    """The file cannot be attached; ``user_message`` says why."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


def attachment_text(name: str, data: bytes, *, size: int | None = None) -> str:
    """The tool item's text for file ``name`` whose bytes are ``data``.

    Args:
        name: The file's name as the user wrote it.
        data: Its content (at most MAX_ATTACHMENT_BYTES + 1 bytes need be read).
        size: Its full size on disk, if known (to refuse without reading it all).

    Raises:
        AttachmentRefused: The file is too large, binary, or not UTF-8 text.
    """
    total = size if size is not None else len(data)
    if total > MAX_ATTACHMENT_BYTES:
        raise AttachmentRefused(
            f"{name} is {total / 1_000_000:.1f} MB; files up to {MAX_ATTACHMENT_BYTES // 1_000_000} MB "
            "can be attached. Paste the part that matters instead."
        )
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise AttachmentRefused(f"{name} looks like a binary file: only text files can be attached.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise AttachmentRefused(
            f"{name} is not UTF-8 text (byte {err.start:,} cannot be read): only text files can be attached."
        ) from None
    return f"Attached file {name} ({total:,} bytes):\n\n{text}"


def split_attachment(text: str) -> tuple[str, str] | None:
    """An attachment's text as its heading line and the file's own text (None: not an attachment)."""
    found = _HEAD.match(text)
    return (found.group(1), text[found.end() :]) if found else None
