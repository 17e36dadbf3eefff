"""The panel's picture of the next request (engine.curation.preview) once a reply has come: the
answered message planned again, with its own turn one of the recent turns, as it will be for the
next message (found in a tmux walk: counted before them, three turns were recent at a 1,500-token
window, and their long replies left the user's short messages out and asked about them, while the
real next request sent them)."""

from __future__ import annotations

from engine.chat import Role
from engine.curation.cold_recall import NONE
from engine.curation.context_building import YOURS
from engine.curation.context_service import ContextService
from engine.curation.context_view import ContextView, Mark
from engine.curation.preview import preview_view
from engine.curation.session_curation import SessionCuration
from engine.curation.session_curations import SessionCurations
from engine.text.tokens import load_counter
from sessions.store import SqliteChatStore

COUNTER = load_counter("", model_is_offline=True)
# ~325 tokens: three replies fill the 1,050-token budget, leaving too little for the user's four
# short messages; two leave room for them.
REPLY = " ".join(["Lisbon has many neighbourhoods worth a slow walk: Alfama, Mouraria and Graça."] * 17)
WALK: list[tuple[Role, str]] = [
    ("user", "Hi! I'm planning a trip to Lisbon in March with my sister Ana. We like food markets."),
    ("assistant", "Lovely: March is mild in Lisbon, and its markets are open every morning."),
    ("user", "Also what about day trips to Sintra"),
    ("assistant", REPLY),
    ("user", "My sister is vegetarian, keep that in mind for every food suggestion please."),
    ("assistant", REPLY),
    ("user", "What is the best way to get from the airport to Alfama?"),
    ("assistant", REPLY),
    ("user", "Which tile museum should we visit?"),
]
USERS = [n for n, (role, _) in enumerate(WALK, 1) if role == "user"]


def walked() -> SessionCuration:
    """The walk's turns at a 1,500-token window, each planned and applied as a turn is."""
    curation = SessionCuration(window=1_500, counter=COUNTER)
    for n, (role, text) in enumerate(WALK, 1):
        item = curation.add_message(n, role, text, COUNTER.count(text))
        if role == "user":
            curation.apply(curation.plan(item))
    return curation


def picture(curation: SessionCuration) -> ContextView:
    return preview_view(curation, system_prompt="", guidance=None, cold=lambda _: NONE, calls=None)


def sent_whole(view: ContextView) -> set[int]:
    return {s for m in view.messages if m.form == "verbatim" for s in m.sources}


def test_while_the_reply_is_awaited_the_picture_is_of_the_message_being_answered() -> None:
    curation = walked()
    view = picture(curation)
    (answered,) = [i for i in view.items if i.reason == "the message being answered"]
    assert answered.id == USERS[-1]
    assert set(USERS) <= sent_whole(view)


def test_once_answered_the_picture_keeps_the_users_words_as_the_next_request_will() -> None:
    curation = walked()
    reply = curation.add_message(len(WALK) + 1, "assistant", REPLY, COUNTER.count(REPLY))
    view = picture(curation)
    assert view.consent is None, "nothing of the user's needs asking about"
    assert not view.alerts
    assert set(USERS) <= sent_whole(view)
    assert reply.id in sent_whole(view)  # the reply the next message answers
    assert view.tokens <= view.budget
    # Said why: the older ones are sent as the user's own, not for a score, and the reply of
    # the turn before the last two is not said to be one of them.
    reasons = {i.id: i.reason for i in view.items}
    assert [reasons[n] for n in USERS[:3]] == [YOURS] * 3
    assert "last 2 turns" not in reasons[USERS[2] + 1]
    # What the next message's own request then carries, as pictured.
    text = "And which market first?"
    nxt = curation.add_message(reply.id + 1, "user", text, COUNTER.count(text))
    real = curation.plan(nxt)
    carried = {s for m in real.messages if m.form == "verbatim" for s in m.sources}
    assert set(USERS) | {reply.id} <= carried
    assert real.consent is None


async def test_the_why_dialog_explains_a_message_as_the_panel_shows_it(store: SqliteChatStore) -> None:
    # The inspect dialog plans as the panel does: a message of the user's the panel shows sent
    # whole is not explained as left out.
    curations = SessionCurations(store, COUNTER, window=lambda: 1_500, system_prompt="")
    session = store.create_session("Lisbon").id
    for role, text in [*WALK, ("assistant", REPLY)]:
        curations.take(session, store.add_message(session, role, text, tokens=COUNTER.count(text)))
    first = store.messages(session)[0].id
    panel = curations.preview(session)
    why = await ContextService(curations).inspect(session, first)
    assert panel.item(first) == why.view
    assert why.view.mark is Mark.VERBATIM
