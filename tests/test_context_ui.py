"""The curation UI, driven with Pilot: the consent dialog, pin / restore / forget / inspect from the
context panel, with a model whose window is small enough that curation has to forget."""

from __future__ import annotations

import contextlib
import functools

from textual.pilot import Pilot
from textual.widgets import Static

from engine.curation.context_view import ContextView, Mark, Section
from engine.curation.items import ItemState
from sessions import paths
from sessions.store import open_store
from tests.apphelpers import (
    Reply,
    asked,
    chat,
    make_app,
    new_views,
    refreshed,
    running_on_fake_model,
    say,
    send,
    wait_for,
)
from tests.fake_openai import FakeOpenAIServer
from tui.app import HeedfulApp
from tui.screens.chat import ChatScreen
from tui.screens.consent import ConsentScreen
from tui.screens.inspect import InspectScreen
from tui.widgets.context_panel import ContextPanel, compact
from tui.widgets.message_view import MessageView

REPLY = "Noted, thanks. " * 25
"""About 125 tokens: a few replies fill the 490-token budget of a 700-token window."""


def small_window(
    server: FakeOpenAIServer, reply: Reply = REPLY
) -> contextlib.AbstractAsyncContextManager[tuple[HeedfulApp, Pilot[None]]]:
    """The app on a 700-token window, run by Pilot; the model answers ``reply`` (by default,
    replies that fill the window in a few turns)."""
    return running_on_fake_model(server, 700, reply)


def context(app: HeedfulApp) -> ContextView:
    view = chat(app).context
    assert view is not None
    return view


def sent(view: ContextView) -> set[int]:
    return {s for m in view.messages if m.form == "verbatim" for s in m.sources}


def sent_and_settled(screen: ChatScreen, before: set[int]) -> bool:
    """A message and its reply were added since ``before`` (the views' ids then), and the turn is over."""
    return new_views(screen, before) >= 2 and screen.settled


async def highlight(app: HeedfulApp, item_id: int) -> ContextPanel:
    """Focus the panel's rows and put the cursor on a message's row, as the arrow keys would."""
    panel = chat(app).context_panel
    panel.rows.focus()
    panel.rows.highlighted = panel.rows.get_option_index(f"item-{item_id}")
    return panel


PASTE = "Turn one: the invoice service timed out at step nine again. " * 34
"""About 420 tokens: it fits while it is recent, and no longer once two more turns are."""


async def paste_then_chat_until_asked(pilot: Pilot[None], app: HeedfulApp) -> ConsentScreen:
    """Paste the big message, then send short ones until the consent dialog opens by itself."""
    await send(pilot, PASTE)
    for n in range(4):
        dialog = await say(pilot, app, f"Short question {n} about the weekend.")
        if dialog is not None:
            await asked(pilot, app, ConsentScreen)
            return dialog
    raise AssertionError("the consent dialog never opened")


def badge(app: HeedfulApp) -> Static:
    """The header's "3 of your messages · F4" badge."""
    return chat(app).header.query_one("#header-asking", Static)


def ledger(item_id: int) -> list[tuple[str, str, str]]:
    store = open_store(paths.database_path()).store
    try:
        session = store.latest_session()
        assert session is not None
        return [(e.kind.value, e.action, e.reason) for e in store.ledger(session.id, target=str(item_id))]
    finally:
        store.close()


async def test_a_large_paste_asks_first_and_summarize_is_shown_and_logged(
    fake_server: FakeOpenAIServer,
) -> None:
    async with small_window(fake_server, "Noted.") as (app, pilot):
        dialog = await paste_then_chat_until_asked(pilot, app)
        asked = [i.item_id for i in dialog.request.items]
        assert len(asked) == 1
        pasted = asked[0]
        await pilot.press("alt+s")  # summarize all
        await wait_for(pilot, lambda: context(app).item(pasted).state is ItemState.SUMMARIZED)  # type: ignore[union-attr]
        panel_row = chat(app).context_panel.rows.get_option(f"item-{pasted}")
        assert str(panel_row.prompt).startswith("≈")
        assert ("consent", "summarize", "answered by you") in ledger(pasted)
        # The summary, not the paste, is what the next request carries.
        assert pasted not in sent(context(app))
        assert any(pasted in m.sources for m in context(app).messages if m.form == "summary")


async def test_escape_keeps_the_users_messages_whole(fake_server: FakeOpenAIServer) -> None:
    async with small_window(fake_server, "Noted.") as (app, pilot):
        item = (await paste_then_chat_until_asked(pilot, app)).request.items[0]
        pasted = item.item_id
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ConsentScreen))
        if item.left_out:  # it cannot fit: Esc answers nothing, it stays asked about, nothing done to it
            await wait_for(pilot, lambda: chat(app).settled)
            assert not [entry for entry in ledger(pasted) if entry[0] not in ("overflow",)]
            assert pasted in {i.item_id for i in context(app).consent.items}  # type: ignore[union-attr]
            assert badge(app).display
            return
        await wait_for(pilot, lambda: ("consent", "keep", "answered by you") in ledger(pasted))
        assert context(app).item(pasted).state is ItemState.ACTIVE  # type: ignore[union-attr]
        # Kept, and nothing else: never summarized or removed (left out of a full request at most).
        assert {kind for kind, action, _ in ledger(pasted) if action != "keep"} <= {"overflow"}
        await wait_for(pilot, lambda: context(app).consent is None)  # a kept message is not asked again
        assert not badge(app).display


async def test_a_turn_that_ends_under_an_open_consent_dialog_never_stacks_or_opens_another(
    fake_server: FakeOpenAIServer,
) -> None:
    """F4 while replies land opens one dialog; the turns' ends never stack a second over it, nor
    open one by themselves once it is answered: what became askable is asked at the next send."""
    async with small_window(fake_server, "Noted.") as (app, pilot):
        screen = chat(app)
        first = (await paste_then_chat_until_asked(pilot, app)).request.items[0].item_id
        # Turns sent while the dialog is up end under it (sent as the composer sends them: the
        # dialog's Enter is its own).
        for n in range(6):
            before = {v.message.id for v in screen.query(MessageView)}
            screen.composer.text = PASTE.replace("one", "two") if n == 0 else f"Short question {n}."
            screen.composer.action_submit()
            await wait_for(pilot, functools.partial(sent_and_settled, screen, before))
            assert sum(isinstance(s, ConsentScreen) for s in app.screen_stack) == 1
            pending = screen.context.consent if screen.context else None
            if pending is not None and any(i.item_id != first for i in pending.items):
                break
        else:
            raise AssertionError("the second paste never became askable")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen and screen.settled)
        await refreshed(pilot)  # the answer acted on and drawn: nothing opened by itself
        assert not any(isinstance(s, ConsentScreen) for s in app.screen_stack)
        assert badge(app).display and "of your message" in str(badge(app).render()), "an answer is wanted"
        dialog = await say(pilot, app, "And one more thing.")
        assert dialog is not None, "the next send asks what became askable"
        asked_now = {i.item_id for i in dialog.request.items}
        assert asked_now - {first}


async def test_pin_from_the_panel_keeps_a_reply_that_would_have_been_pruned(
    fake_server: FakeOpenAIServer,
) -> None:
    async with small_window(fake_server) as (app, pilot):
        await send(pilot, "First: the billing deploy fails.")
        first_reply = context(app).items[1].id
        await highlight(app, first_reply)
        await pilot.press("alt+p")
        await wait_for(pilot, lambda: context(app).item(first_reply).pinned)  # type: ignore[union-attr]
        for n in range(4):
            await say(pilot, app, f"Turn {n}: something else about the garden.", keep=True)
        view = context(app)
        assert first_reply in sent(view)
        assert view.item(first_reply).mark is Mark.PINNED  # type: ignore[union-attr]
        # Its unpinned neighbour, the second reply, was forgotten by the same turns.
        assert view.items[3].state is not ItemState.ACTIVE


async def test_restore_and_inspect_from_the_panel(fake_server: FakeOpenAIServer) -> None:
    short = "Noted, thanks. " * 12  # short enough that a restored one fits again
    async with small_window(fake_server, short) as (app, pilot):
        for n in range(7):
            text = f"Turn {n}: the billing-api deploy fails with ConnectionRefusedError again."
            await say(pilot, app, text, keep=True)
        pruned = next(i for i in context(app).items if i.state is not ItemState.ACTIVE)
        await highlight(app, pruned.id)
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, InspectScreen) and app.screen.is_mounted
        )  # composed
        why = str(app.screen.query_one("#inspect-ledger", Static).render())
        assert "no longer fits the budget" in why
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, InspectScreen))

        await highlight(app, pruned.id)
        await pilot.press("alt+r")
        await wait_for(pilot, lambda: context(app).item(pruned.id).state is ItemState.ACTIVE)  # type: ignore[union-attr]
        assert pruned.id in sent(context(app))  # verbatim again in the next request
        assert ledger(pruned.id)[-1][:2] == ("operation", "restore")


async def test_the_panel_keys_move_and_forget(fake_server: FakeOpenAIServer) -> None:
    async with small_window(fake_server) as (app, pilot):
        await send(pilot, "Remember: the staging password rotates on Fridays.")
        await send(pilot, "And the cat is called Miso.")
        question = context(app).items[0].id
        panel = await highlight(app, question)
        await pilot.press("alt+k", "alt+j")
        assert panel.highlighted_item() == question
        await pilot.press("alt+f")
        await wait_for(pilot, lambda: context(app).item(question).state is ItemState.PRUNED)  # type: ignore[union-attr]
        assert question not in sent(context(app))
        assert [row[:2] for row in ledger(question)] == [("consent", "remove"), ("operation", "prune")]
        # The note names the key that undoes it (a plain r would be typing, in the composer).
        said = [n.message for n in app._notifications]
        assert f"Forgot #{question}. It stays in the store; Alt+R restores it." in said


async def test_messages_in_the_chat_show_their_state_and_take_the_same_keys(
    fake_server: FakeOpenAIServer,
) -> None:
    async with small_window(fake_server, "Noted, thanks. " * 12) as (app, pilot):
        for n in range(7):
            text = f"Turn {n}: the billing-api deploy fails with ConnectionRefusedError again."
            await say(pilot, app, text, keep=True)
        screen = chat(app)
        summarized = next(i for i in context(app).items if i.mark is Mark.SUMMARIZED)
        summarized_view = screen.message_list.view_for(summarized.id)
        assert summarized_view is not None
        assert "≈ summarized" in str(summarized_view.query_one(".meta", Static).render())

        reply = next(i for i in context(app).items if i.role == "assistant" and i.mark is Mark.VERBATIM)
        reply_view = screen.message_list.view_for(reply.id)
        assert reply_view is not None and not reply_view.has_class("-forgotten")
        reply_view.focus()
        await pilot.press("alt+f")
        await wait_for(pilot, lambda: reply_view.has_class("-forgotten"))  # dimmed, still readable
        assert "✂ pruned" in str(reply_view.query_one(".meta", Static).render())
        assert context(app).item(reply.id).section is Section.PRUNED  # type: ignore[union-attr]

        question = context(app).items[0].id
        question_view = screen.message_list.view_for(question)
        assert question_view is not None
        question_view.focus()
        await pilot.press("alt+p")
        await wait_for(pilot, lambda: "📌 pinned" in str(question_view.query_one(".meta", Static).render()))
        assert context(app).item(question).pinned  # type: ignore[union-attr]


async def test_a_summarized_message_expands_to_show_its_summary(fake_server: FakeOpenAIServer) -> None:
    async with small_window(fake_server, "Noted.") as (app, pilot):
        dialog = await paste_then_chat_until_asked(pilot, app)
        pasted = dialog.request.items[0].item_id
        await pilot.press("alt+s")
        await wait_for(pilot, lambda: context(app).item(pasted).state is ItemState.SUMMARIZED)  # type: ignore[union-attr]
        view = chat(app).message_list.view_for(pasted)
        assert view is not None
        assert not view.has_class("-expanded")
        view.focus()
        await pilot.press("alt+e")
        await wait_for(pilot, lambda: view.has_class("-expanded"))
        await refreshed(pilot)  # laid out
        summary = view.query_one(".summary", Static)
        assert "Summary sent instead" in str(summary.render())
        assert summary.region.height > 0, "the summary is on screen"
        await pilot.press("alt+e")
        await wait_for(pilot, lambda: not view.has_class("-expanded"))
        await refreshed(pilot)
        assert not summary.display or summary.region.height == 0, "collapsed again"
        await pilot.press("alt+e")
        await wait_for(pilot, lambda: view.has_class("-expanded"))
        await refreshed(pilot)
        assert view.query_one(".summary", Static).region.height > 0


async def test_a_draft_says_what_it_would_bring_back(fake_server: FakeOpenAIServer) -> None:
    async with small_window(
        fake_server, lambda body: "About that: " + body["messages"][-1]["content"] * 4
    ) as (app, pilot):
        await say(pilot, app, "The aquarium filter pump rattles at night.", keep=True)
        for n in range(6):
            await say(
                pilot, app, f"Turn {n}: the billing deploy fails with ConnectionRefusedError.", keep=True
            )
        screen = chat(app)
        pump_reply = context(app).items[1]
        assert pump_reply.state is not ItemState.ACTIVE and "aquarium" in pump_reply.preview
        screen.composer.focus()
        await pilot.press(*"aquarium pump?")
        await wait_for(pilot, lambda: f"#{pump_reply.id}" in str(screen.draft_hint.render()))
        assert screen.draft_hint.display
        await pilot.press("enter")  # sent: the hint goes
        await wait_for(pilot, lambda: not screen.draft_hint.display)


async def test_between_turns_the_panel_says_its_saving_is_the_next_requests(
    fake_server: FakeOpenAIServer,
) -> None:
    async with small_window(fake_server) as (app, pilot):
        for n in range(4):
            await say(pilot, app, f"Turn {n}: the billing deploy fails again, now at step {n}.", keep=True)
        view = context(app)
        assert view.upcoming and view.saved_tokens > 0
        saved = str(chat(app).context_panel.query_one("#context-saved", Static).render())
        # Not "this turn": the last turn saved something else, and is already in the total.
        assert f"next request leaves out {compact(view.saved_tokens)}" in saved.replace("~", ""), saved
        assert f"{compact(view.session_saved_tokens)} saved so far in this session" in saved.replace("~", "")


async def test_a_panel_filter_that_matches_nothing_says_so() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "The cat is called Miso.")
        panel = chat(app).context_panel
        panel.rows.focus()
        await pilot.press("ctrl+f", *"zebra")

        def shown() -> list[str]:
            return [str(panel.rows.get_option_at_index(i).prompt) for i in range(panel.rows.option_count)]

        await wait_for(pilot, lambda: "Nothing matches “zebra”." in shown())
        for _ in range(len("zebra")):
            await pilot.press("backspace")
        await wait_for(pilot, lambda: not any("Nothing matches" in row for row in shown()))
        assert any("Miso" in row for row in shown())
