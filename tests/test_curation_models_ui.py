"""The curation models in the running app: typing and sending go on while a summary is written,
curation goes with the model a session switches to, and a stop before the message is drawn."""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any

from tests.curator_answers import NEUTRAL
from tests.fake_openai import FakeOpenAIServer
from tests.test_curation_models import drop_entities, is_curator, is_summary


async def test_typing_and_sending_go_on_while_a_slow_summary_is_being_written(
    fake_server: FakeOpenAIServer,
) -> None:
    from tests.apphelpers import chat, fake_provider, make_app, say, wait_for
    from tui.widgets.composer import Composer

    release = threading.Event()

    def hold_summaries(request: dict[str, Any]) -> None:
        if is_summary(request["body"]):
            release.wait(20)  # a very slow model: the summary takes until the test lets it go

    def long_replies(body: dict[str, Any]) -> str:
        if is_curator(body):  # the curator wants every older message summarized
            brief = "\n".join(str(m["content"]) for m in body["messages"])
            return json.dumps({**NEUTRAL, "demote": sorted(set(re.findall(r'"ref": "(#\d+)"', brief)))})
        return drop_entities(body) if not body.get("stream") else drop_entities(body) * 6

    fake_server.reply = long_replies
    fake_server.on_request = hold_summaries
    fake_provider(fake_server, 700, max_retries=None, tables="[memory]\nenabled = false\n")
    app = make_app(curation_models=True)
    try:
        async with app.run_test(size=(120, 40)) as pilot:

            def summary_in_flight() -> bool:
                return any(is_summary(r["body"]) and r["outcome"] is None for r in fake_server.requests)

            for number in range(12):
                await say(pilot, app, f"Again: edit deploy.sh on db-stage-2 ({number})", keep=True)
                if summary_in_flight():
                    break
            assert summary_in_flight(), "the budget is tight enough that a summary is wanted"
            slow = next(r for r in fake_server.requests if is_summary(r["body"]) and r["outcome"] is None)

            composer = chat(app).query_one(Composer)
            composer.focus()
            await pilot.press(*"still typing")
            assert composer.text == "still typing"
            composer.clear()
            answered = len([r for r in fake_server.requests if r["body"].get("stream")])
            await say(pilot, app, "and sending", keep=True)
            assert len([r for r in fake_server.requests if r["body"].get("stream")]) == answered + 1
            assert slow["outcome"] is None, "the summary was still being written all along"
            release.set()
            await wait_for(pilot, lambda: not summary_in_flight())
            assert slow["outcome"] != "client_disconnected", "a newer turn did not cut the summary short"
    finally:
        release.set()


async def test_curation_goes_with_the_model_a_session_switches_to(fake_server: FakeOpenAIServer) -> None:
    # A session moved to a local model must not have its conversation sent to the first model's
    # server by the curator; the offline model is never asked anything.
    from textual.widgets import Static

    from tests.apphelpers import make_app, make_sessions, say, type_command, wait_for, write_config
    from tui.screens.model_picker import SwitchProviderScreen

    def curator_calls(server: FakeOpenAIServer) -> list[str]:
        return [r["body"]["model"] for r in server.requests if is_curator(r["body"])]

    long_answer = "Set the upstream, reload the proxy, check the logs. " * 25
    make_sessions(("a long chat", [text for n in range(6) for text in (f"Question {n}?", long_answer)]))
    with FakeOpenAIServer() as local:
        for server in (fake_server, local):
            server.reply = lambda body: json.dumps(NEUTRAL) if is_curator(body) else "An answer."
        write_config(
            'model = "cloud/big-model"\n'
            f'[providers.cloud]\nbase_url = "{fake_server.base_url}"\nmodels = {{ big-model = 1000 }}\n'
            f'[providers.local]\nbase_url = "{local.base_url}"\nmodels = {{ small-model = 1000 }}\n'
            "[memory]\nenabled = false\n"
        )
        app = make_app(curation_models=True)
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await say(pilot, app, "First on the default model?", keep=True)
            assert curator_calls(fake_server) == ["big-model"]
            saved = str(app.screen.query_one("#context-saved", Static).render())
            assert "curation calls:" in saved and "(1 call)" in saved, saved
            await type_command(pilot, app, "/model local/small-model")
            await wait_for(pilot, lambda: isinstance(app.screen, SwitchProviderScreen))
            await pilot.press("alt+s")  # another provider: confirmed first
            await wait_for(pilot, lambda: app.services.model_name == "small-model")
            await say(pilot, app, "Now on the local one?", keep=True)
            assert curator_calls(fake_server) == ["big-model"], "nothing more went to the first server"
            assert curator_calls(local) == ["small-model"]
            await type_command(pilot, app, "/model offline")
            await say(pilot, app, "And offline?", keep=True)
            assert len(curator_calls(fake_server)) + len(curator_calls(local)) == 2


async def test_a_stop_before_the_message_is_drawn_shows_it_and_clears_the_composer(
    fake_server: FakeOpenAIServer,
) -> None:
    # The message is drawn once the request is out, or when the curator is slow (after 0.1 s):
    # an Esc before then must not leave it stored but unseen, and still offered to be sent again.
    from tests.apphelpers import (
        asked,
        chat,
        make_app,
        make_sessions,
        say,
        stored_messages,
        wait_for,
        write_config,
    )
    from tui.screens.consent import ConsentScreen
    from tui.widgets.message_view import MessageView

    long_answer = "Set the upstream, reload the proxy, check the logs. " * 25
    make_sessions(("a long chat", [text for n in range(6) for text in (f"Question {n}?", long_answer)]))
    fake_server.reply = lambda body: json.dumps(NEUTRAL) if is_curator(body) else "An answer."
    fake_server.on_request = lambda request: time.sleep(0.5) if is_curator(request["body"]) else None
    write_config(
        'model = "cloud/big-model"\n'
        f'[providers.cloud]\nbase_url = "{fake_server.base_url}"\nmodels = {{ big-model = 1000 }}\n'
        "[memory]\nenabled = false\n"
    )
    app = make_app(curation_models=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = chat(app)
        await say(pilot, app, "Which port does service-1 use?", keep=True)  # the session is open
        if screen.context is not None and screen.context.consent is not None:
            # Keep the user's messages whole, for good: no question comes with the next send.
            await pilot.press("f4")
            await asked(pilot, app, ConsentScreen)
            await pilot.press("alt+m", "enter")  # asked now: the next send does not ask again
            await wait_for(pilot, lambda: app.screen is screen)
        screen.composer.insert("Which port does service-3 use?")
        await pilot.press("enter", "escape")  # at once: the curator has not answered
        await wait_for(pilot, lambda: not screen.busy)
        await pilot.pause()
        assert stored_messages()[-1].content == "Which port does service-3 use?"
        shown = [view.message.content for view in screen.message_list.query(MessageView)]
        assert shown[-1] == "Which port does service-3 use?", "it is shown"
        assert screen.composer.text == "", "not offered to be sent twice"
