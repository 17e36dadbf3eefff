"""Actions on one message of the chat: edit it and go on from there, delete it, copy it or its code."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tui.messages import MessageVerb
from tui.screens.chat_parts import ChatPart
from tui.widgets.composer import PASTE_INLINE_CHARS

if TYPE_CHECKING:
    from engine.chat import StoredMessage
    from tui.messages import MessageAction
    from tui.screens.chat_draft import DraftHints
    from tui.screens.chat_host import ChatHost
    from tui.screens.chat_pages import SessionPages


class MessageActions(ChatPart):
    """What the keys of a focused message do (i edit, d delete, y copy, c copy code)."""

    def __init__(self, host: ChatHost, *, draft: DraftHints, pages: SessionPages) -> None:
        super().__init__(host)
        self.draft = draft
        self.pages = pages

    def copy_last_reply(self) -> None:
        self.background(self._copy_last_reply())

    async def _copy_last_reply(self) -> None:
        reply = await self.pages.last_reply()
        if reply is None:
            self.host.notify("There is no reply to copy yet.")
            return
        self.copy_text(reply.sent_text, "the last reply")

    def copy_text(self, text: str, what: str) -> None:
        self.background(self._copy_text(text, what))

    async def _copy_text(self, text: str, what: str) -> None:
        """To the clipboard through the terminal (OSC 52), and through a local tool if there is one."""
        from tui.clipboard import copy_osc52, copy_with_tool, local_tool  # not for the first frame

        copy_osc52(self.host.app, text)
        tool = local_tool()
        handed = tool is not None and await asyncio.to_thread(copy_with_tool, tool, text)
        via = f" (and {tool[0]})" if handed and tool is not None else ""
        self.host.notify(f"Copied {what} ({len(text):,} characters){via}.")

    def on_action(self, event: MessageAction) -> None:
        """Carry out what a focused message was asked to do."""
        view = self.host.message_list.view_for(event.message_id)
        if view is None:
            return
        message = view.message
        text = message.sent_text  # a reply's answer, not its thinking
        if event.action is MessageVerb.COPY:
            self.copy_text(text, f"#{message.id}")
        elif event.action is MessageVerb.COPY_CODE:
            from tui.clipboard import code_blocks  # not for the first frame

            blocks = code_blocks(text)
            if not blocks:
                self.host.notify("This message has no code block; Alt+Y copies all of it.")
                return
            which = f"the last of {len(blocks)} code blocks" if len(blocks) > 1 else "the code block"
            self.copy_text(blocks[-1], f"{which} of #{message.id}")
        elif event.action is MessageVerb.EDIT:
            self._start_edit(message)
        else:
            self._confirm_delete(message)

    def _start_edit(self, message: StoredMessage) -> None:
        if self.host.refused_while_busy():
            return
        if message.role != "user":
            self.host.notify("Only your own messages can be edited; Ctrl+R asks for a reply again.")
            return
        if len(message.content) > PASTE_INLINE_CHARS:
            self.host.notify("This message is too long to edit here; copy it (Alt+Y) and send a new one.")
            return
        self.host.edit(message.id)
        self.host.composer.text = message.content
        self.host.composer.move_cursor(self.host.composer.document.end)
        self.host.composer.focus()
        self.draft.show(
            f"✎ Editing #{message.id}: Enter sends it in its place and the conversation goes on from "
            "there (the old branch stays in the store). Esc cancels."
        )

    def _confirm_delete(self, message: StoredMessage) -> None:
        if self.host.refused_while_busy() or self.host.session is None:
            return
        session_id = self.host.session.id

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self.delete_message(session_id, message.id)

        from tui.screens.dialogs import ConfirmScreen  # a dialog: not for the first frame

        preview = " ".join(message.content.split())[:80]
        self.host.app.push_screen(
            ConfirmScreen(
                f"Delete #{message.id} ({message.role}): “{preview}”?\n\nIt is no longer shown or sent; "
                "it stays in the store and the ledger (F6) records it.",
                confirm="Delete",
                danger=True,
            ),
            answered,
        )

    def delete_message(self, session_id: int, message_id: int) -> None:
        self.background(self._delete_message(session_id, message_id))

    async def _delete_message(self, session_id: int, message_id: int) -> None:
        from engine.turn.conversation_edits import NotEditable  # after the first frame

        try:
            gone = await self.host.services.turns.edits().delete(session_id, message_id)
        except NotEditable as refused:
            self.host.notify(str(refused), severity="warning")
            return
        await self.host.message_list.drop(gone.ids)
        await self.host.refresh_usage()
        self.host.notify(f"Deleted #{message_id}. It stays in the store; the ledger (F6) records it.")

    def confirm_link(self, href: str) -> None:
        """Links in model output open only after the user has seen where they go."""

        def opened(confirmed: bool | None) -> None:
            if confirmed:
                self.host.app.open_url(href)

        from tui.screens.dialogs import ConfirmScreen  # a dialog: not for the first frame

        self.host.app.push_screen(
            ConfirmScreen(f"Open this link in your browser?\n\n{href}", confirm="Open"), opened
        )
