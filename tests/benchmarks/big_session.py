"""The long session the benchmarks open: 10,000 messages (or as many as asked) written by the
Zipf-law writer of ``curation_speed.py``, stored with their token counts and curated once, as the
app leaves them, with "summarize, for all of this session" answered to the consent dialog."""

from __future__ import annotations

import random

MODEL = "gpt-4o-mini"
"""The model the app talks to (on the fake server): one whose window Heedful knows (128,000
tokens), the window the session is built and curated for. With a model of unknown window (8,192
assumed), the first turn re-curated the whole session for the smaller budget."""


def build(messages: int) -> None:
    """Write the session into the data dir named by the environment (as the app would find it)."""
    from engine.curation import stored as curation_stored
    from engine.curation.consent import ConsentChoice
    from engine.text.tokens import load_counter
    from providers.windows import known_window
    from sessions import paths
    from sessions.store import SqliteChatStore
    from tests.benchmarks.curation_speed import Writer

    rng = random.Random(8)
    writer = Writer(rng)
    counter = load_counter(MODEL)
    window = known_window(MODEL)
    assert window is not None, f"{MODEL}'s window is not known"
    paths.ensure_private_dir(paths.data_dir())
    store = SqliteChatStore(paths.database_path())
    session = store.create_session("A very long session")
    for n in range(messages):
        if n % 2 == 0:
            text = writer.message()
            role = "user"
        else:
            paragraphs = [" ".join(writer.message() for _ in range(rng.randint(1, 3))) for _ in range(3)]
            if rng.random() < 0.3:
                paragraphs.insert(
                    1, "```python\n" + "\n".join(writer.message()[:70] for _ in range(6)) + "\n```"
                )
            text = "\n\n".join(paragraphs)
            role = "assistant"
        store.add_message(session.id, role, text, tokens=counter.count(text))  # type: ignore[arg-type]
    history = ((message, None) for message in store.messages(session.id))
    curation = curation_stored.rebuild(
        history, store.load_curation(session.id), window=window, counter=counter
    )
    # Whoever kept a session this long has long since answered the consent dialog for all of it.
    answered = curation.answer_consent({}, remember=ConsentChoice.SUMMARIZE)
    curation_stored.save(store, session.id, curation, answered)
    last_user = next(i for i in reversed(curation.items) if i.role == "user")
    delta = curation.apply(curation.plan(last_user))
    curation_stored.save(store, session.id, curation, delta)
    store.close()
