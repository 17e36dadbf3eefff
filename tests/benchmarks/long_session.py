"""A 10,000-message session: opening it, scrolling to its top, a turn, streaming, a 1 MB reply, RSS.

Builds (in a scratch data dir, or once into ``--reuse DB``) a session of 10,000 messages written by
the same Zipf-law writer as ``curation_speed.py``: short user messages, assistant replies of a few
paragraphs and sometimes a code block, stored with their token counts and curated once, as the app
leaves them, with "summarize, for all of this session" answered to the consent dialog. Then a fresh
process runs the real app headless at 120×40 against the loopback fake server, which runs in the
parent process (driven through its ``/_fake`` controls): the measuring process holds only the
app, so its peak RSS and its CPU time are the app's own. It measures:

* open: from starting the app to the session's last message on screen; then to the context
  panel's figures (the curation built in a worker), and the longest the event loop stalled meanwhile;
* scroll to top: scrolling up as a wheel would, page after page, until the first message is
  mounted (gives up after a minute), and the longest the event loop stalled while each page came
  in; then the Ctrl+End and Ctrl+Home jumps;
* one turn: Enter to the reply settled on screen, minus the server's own time (received → last
  piece written): curation, storage and rendering, split into before the request and after the reply.
  As the product runs by default: the curator model is asked first (answering with advice that
  changes nothing), and the model writes summaries in the background.
  Twice: with models that answer at once (all of Heedful's drawing is then serial: the worst
  case), and with a curator taking 0.3 s and a model 0.4 s to its first piece, as real models
  do, while Heedful draws;
* streaming: 1,000 pieces at 200/s, the app's CPU share of one core and lag after the last piece;
* a 1 MB reply (1,000 pieces of 1 kB, as fast as the server writes): from its last piece to the
  whole reply on screen, and reopening the session with it as the last message;
* peak RSS of the app process; and, in another process, of the same app with an empty session
  after a few turns: what Python, Textual, openai and the tokenizer cost before any history
  (``memory_profile.py`` shows where the memory goes).

Targets (issue 8): open ≤ 1 s, turn overhead ≤ 100 ms, streaming ≤ 50% of a core and ≤ 250 ms
behind, 1 MB reply on screen ≤ 1.5 s, peak RSS ≤ 150 MB.

With ``--brief``, only the figures issue 34 asks of a session of any size (100,000 messages:
``--messages 100000``): the latest message on screen from launch (headless); a message sent as
soon as it is there, to its requests out (the curator's, the reply's) and what the panel said of
it; the curation whole; one turn outside the model once it is; peak RSS.

    .venv/bin/python tests/benchmarks/long_session.py [--messages N] [--reuse DB] [--brief]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.big_session import MODEL, build
from tests.benchmarks.measuring import (
    ServerControl,
    memory,
    page_stalls,
    peak_rss,
    poll,
    replied,
    streamed,
)
from tests.benchmarks.turn_figures import turns

SIZE = (120, 40)
STREAM_PIECES = 1_000
STREAM_DELAY = 0.005
BIG_REPLY_CHARS = 1_000_000
SCROLL_SECONDS = 60
REPLY = " ".join(f"word{n}" for n in range(50))
"""Each turn's reply: 50 pieces."""
CURATION_MODELS = "[curation]\ncurator = true\nmodel_summaries = true\n"
"""As by default (the test helpers turn them off unless asked)."""
FIRST_PIECE_DELAY = 0.4
TURN_PIECE_DELAY = 0.005
"""The second turn measure's model: 0.4 s to its first piece, then 200 pieces a second."""
CURATOR_DELAY = 0.3
"""The second turn measure's curator model: 0.3 s to its answer (a real one, writing a few hundred
tokens of JSON, takes longer)."""


async def measure(server: ServerControl) -> None:
    started = time.perf_counter()
    from sessions import paths
    from sessions.store import SqliteChatStore
    from tests.apphelpers import chat, make_app, write_config
    from tests.curator_answers import NEUTRAL
    from tui.widgets.message_list import PAGE

    store = SqliteChatStore(paths.database_path())
    session = store.latest_session()
    assert session is not None
    last_id = store.message_page(session.id, limit=1).messages[0].id
    first_id = store.message_page(session.id, after=0, limit=1).messages[0].id
    store.close()
    imported = time.perf_counter()

    # As the product runs by default, the curator model is asked before each request (answered at
    # once, with advice that changes nothing), and the model writes summaries in the background.
    write_config(CURATION_MODELS)
    server.settings(json_reply=json.dumps(NEUTRAL))
    app = make_app(base_url=server.base_url, model=MODEL)
    ticks: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
        screen = chat(app)
        shown = await poll(lambda: screen.message_list.view_for(last_id) is not None, 60)
        ready = await poll(lambda: screen.context is not None and not screen.busy, 120)
        stall = max((b - a for a, b in itertools.pairwise(ticks)), default=0.0)
        rss_open = peak_rss()
        print(
            f"open: first screen {1000 * (shown - imported):.0f} ms after start "
            f"(+{1000 * (imported - started):.0f} ms of imports and reading the session id), "
            f"context ready after {1000 * (ready - imported):.0f} ms, "
            f"longest event-loop stall {1000 * stall:.0f} ms; peak RSS so far {rss_open:.0f} MB"
        )

        # Scroll to the top as a user holding the wheel would: up whenever the list is not
        # waiting for a page, until the session's first message is mounted.
        messages = screen.message_list
        began, scrolls = time.perf_counter(), []
        try:
            while messages.view_for(first_id) is None:
                if not messages.paging:
                    messages.scroll_to(y=0, animate=False, immediate=True, force=True)
                    scrolls.append(time.perf_counter())
                await asyncio.sleep(0.005)
                if time.perf_counter() - began > SCROLL_SECONDS:
                    raise TimeoutError
            print(
                f"scroll to top: {time.perf_counter() - began:.2f} s ({len(scrolls)} scrolls to the "
                f"top of what was mounted; {len(messages.mounted)} messages mounted at the end)"
            )
        except TimeoutError:
            print(
                f"scroll to top: not reached after {SCROLL_SECONDS} s: {len(scrolls)} pages of {PAGE} "
                f"({1000 * SCROLL_SECONDS / max(len(scrolls), 1):.0f} ms a page)"
            )
        print(f"  {page_stalls(ticks, scrolls)}")
        print(memory())
        began = time.perf_counter()
        await pilot.press("ctrl+end")
        await poll(lambda: messages.view_for(last_id) is not None and not messages.paging, 30)
        jumped = time.perf_counter()
        await pilot.press("ctrl+home")
        await poll(lambda: messages.view_for(first_id) is not None and not messages.paging, 30)
        print(
            f"Ctrl+End back to the latest: {1000 * (jumped - began):.0f} ms; "
            f"Ctrl+Home to the first message: {1000 * (time.perf_counter() - jumped):.0f} ms"
        )

        print(memory())
        await screen.open_session(session.id).wait()
        await poll(lambda: screen.context is not None and not screen.busy, 120)
        # A model that answers at once: everything Heedful does in a turn is serial, drawing
        # the message and the context included. The worst case, and the measure.
        await turns(screen, server, "one turn, outside the model")
        # Models that think, as every real one does (a prompt of ~100,000 tokens takes a real one
        # seconds to its first piece): Heedful draws the message, the context and the reply's
        # place meanwhile, so only its time before each request and after the last piece adds to
        # the turn.
        server.settings(
            chunk_delay=TURN_PIECE_DELAY, json_delay=CURATOR_DELAY, first_piece_delay=FIRST_PIECE_DELAY
        )
        await turns(
            screen,
            server,
            f"one turn with a curator answering in {1000 * CURATOR_DELAY:.0f} ms and a model taking "
            f"{1000 * FIRST_PIECE_DELAY:.0f} ms to its first piece",
        )
        server.settings(chunk_delay=0.0, json_delay=0.0, first_piece_delay=0.0)

        print(memory())
        # Streaming a fast model.
        server.settings(reply=" ".join(f"piece{n}" for n in range(STREAM_PIECES)), chunk_delay=STREAM_DELAY)
        screen.composer.text = "stream please"

        async def submit() -> None:
            screen.composer.action_submit()

        whole = replied(screen, lambda r: r.content.endswith(f"piece{STREAM_PIECES - 1}"))
        figures = await streamed(server, submit, whole, step=0.02)
        print(f"streaming {STREAM_PIECES} pieces at {1 / STREAM_DELAY:.0f}/s: {figures}")

        print(memory())
        # A 1 MB reply as fast as the server can write it.
        line = "The quick brown fox jumps over the lazy dog, again and again, line {n}.\n"
        big = "".join(line.format(n=n) for n in range(BIG_REPLY_CHARS // len(line) + 1))[:BIG_REPLY_CHARS]
        server.settings(reply=big, chunk_delay=0.0, piece_chars=1_000)
        big_chars = len(big)
        del big  # the app's own copies are what is measured
        screen.composer.text = "a big one"
        ticks.clear()
        sent = time.perf_counter()
        screen.composer.action_submit()
        done = await poll(
            replied(screen, lambda r: len(r.content) == big_chars),
            120,
        )
        stall = max((b - a for a, b in itertools.pairwise(ticks)), default=0.0)
        last_piece = (await server.last_request())["finished_at"]
        print(
            f"1 MB reply: whole on screen {1000 * (done - last_piece):.0f} ms after its last piece "
            f"({done - sent:.2f} s from Enter), longest event-loop stall {1000 * stall:.0f} ms"
        )
        print(memory())
        reopened = time.perf_counter()
        await screen.open_session(session.id).wait()
        print(f"reopening the session with the 1 MB reply last: {time.perf_counter() - reopened:.2f} s")
        print(memory())
    rss = peak_rss()
    print(f"peak RSS: {rss:.0f} MB")


async def measure_brief(server: ServerControl, launched: float) -> None:
    """The few figures issue 34 asks of a session of any size: the latest message on screen from
    launch; a message sent as soon as it is there, to its request out; the curation whole; a turn
    outside the model once it is; peak RSS."""
    from sessions import paths
    from sessions.store import SqliteChatStore
    from tests.apphelpers import chat, make_app, write_config
    from tests.curator_answers import NEUTRAL

    store = SqliteChatStore(paths.database_path())
    session = store.latest_session()
    assert session is not None
    last_id = store.message_page(session.id, limit=1).messages[0].id
    store.close()
    write_config(CURATION_MODELS)
    server.settings(json_reply=json.dumps(NEUTRAL))
    app = make_app(base_url=server.base_url, model=MODEL)
    ticks: list[float] = []
    async with app.run_test(size=SIZE):
        app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
        screen = chat(app)
        shown = await poll(lambda: screen.message_list.view_for(last_id) is not None, 120)
        count = server.count()
        screen.composer.text = "what about the deploy fails, right away"
        sent = time.perf_counter()
        screen.composer.action_submit()
        await poll(lambda: not screen.busy and server.count() > count, 600)
        requests = await server.requests_since(count, ("json", "stream"))
        out = {r["kind"]: r["received_at"] - sent for r in reversed(requests)}
        notes = [n for n in (screen.context.notes if screen.context else ()) if n.startswith("Curating")]
        planned = f" ({notes[0]})" if notes else ""
        ready = await poll(
            lambda: (
                screen.context is not None
                and getattr(screen.context, "building", None) is None
                and screen.settled
            ),
            600,
        )
        stall = max((b - a for a, b in itertools.pairwise(ticks)), default=0.0)
        print(
            f"latest message on screen {shown - launched:.2f} s after launch (headless); a message sent "
            f"then: curator's request out after {1000 * out.get('json', float('nan')):.0f} ms, the reply's "
            f"after {1000 * out.get('stream', float('nan')):.0f} ms{planned}; "
            f"curation whole {ready - launched:.1f} s after launch; longest event-loop stall "
            f"{1000 * stall:.0f} ms; {memory().strip()}"
        )
        await turns(screen, server, "one turn, outside the model")
    print(f"peak RSS: {peak_rss():.0f} MB")


async def measure_empty(server: ServerControl) -> None:
    """The app on an empty data dir, TURNS turns: the peak RSS of the app itself, with no history."""
    from tests.apphelpers import chat, make_app

    app = make_app(base_url=server.base_url, model=MODEL)
    async with app.run_test(size=SIZE):
        screen = chat(app)
        await poll(lambda: screen.context is not None and not screen.busy, 60)
        # As a user takes to type a first message: the model's client loads meanwhile (~0.3 s;
        # a message sent sooner waits for it).
        await asyncio.sleep(1.0)
        await turns(screen, server, "in an empty session, one turn")
    rss = peak_rss()
    print(f"peak RSS of the app with an empty session: {rss:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument(
        "--reuse", type=Path, metavar="DB", help="build the session into DB once, then measure a copy of it"
    )
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--server", help=argparse.SUPPRESS)
    parser.add_argument("--empty", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--brief",
        action="store_true",
        help="only: latest message on screen, a message sent at once, one turn, peak RSS (any size)",
    )
    parser.add_argument("--launched", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        server = ServerControl(args.server)
        if args.brief:
            asyncio.run(measure_brief(server, args.launched))
        else:
            asyncio.run((measure_empty if args.empty else measure)(server))
        return
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HEEDFUL_DATA_DIR"] = f"{scratch}/data"
        os.environ["HEEDFUL_CONFIG"] = f"{scratch}/config/config.toml"
        database = Path(scratch) / "data" / "heedful.db"
        if args.reuse is None or not args.reuse.exists():
            began = time.perf_counter()
            build(args.messages)
            size = database.stat().st_size / 1e6
            took = time.perf_counter() - began
            print(f"built {args.messages:,} messages ({size:.1f} MB database) in {took:.0f} s")
            if args.reuse is not None:
                shutil.copyfile(database, args.reuse)
        else:
            database.parent.mkdir(parents=True)
            shutil.copyfile(args.reuse, database)
        from tests.fake_openai import FakeOpenAIServer

        # Here, not in the measuring process: its threads, the replies it holds and its CPU
        # would count as the app's.
        with FakeOpenAIServer(reply=REPLY) as fake:
            command = [sys.executable, __file__, "--measure", "--server", fake.base_url]
            if args.brief:
                # perf_counter is the system's monotonic clock: the same in both processes.
                subprocess.run([*command, "--brief", "--launched", str(time.perf_counter())], check=True)
                return
            subprocess.run(command, check=True)
            fake.reply, fake.chunk_delay, fake.piece_chars = REPLY, 0.0, None
            empty = {**os.environ, "HEEDFUL_DATA_DIR": f"{scratch}/empty"}
            subprocess.run([*command, "--empty"], check=True, env=empty)


if __name__ == "__main__":
    main()
