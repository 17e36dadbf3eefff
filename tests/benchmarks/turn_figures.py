"""The turns of a long-session measure: each one's time outside the model, split into before the
request and after the reply, and its CPU (see :mod:`tests.benchmarks.long_session`)."""

from __future__ import annotations

import asyncio
import time
from statistics import median
from typing import TYPE_CHECKING

from tests.benchmarks.measuring import ServerControl, poll, replied

if TYPE_CHECKING:
    from engine.chat import StoredMessage
    from tui.screens.chat import ChatScreen

TURNS = 9
"""Turns per measure: enough that one cold or unlucky turn (a collection, the VM's noise) does not
move the median, as it did with five."""


async def turns(screen: ChatScreen, server: ServerControl, label: str) -> None:
    """TURNS turns of a 50-piece reply; prints each one's time outside the model (the curator's
    request and the reply's: a history this long never fits, so the curator is asked first), and
    the median's parts: before the reply's request, and from its last piece to it settled on
    screen. Summaries written meanwhile are the app's own work, not the turn's model time."""
    from tests.benchmarks.turn_probe import probe

    figures: tuple[list[float], ...] = ([], [], [], [], [], [], [])
    overheads, befores, afters, panels, asked, cpus, loop_cpus = figures
    began = server.count()
    with probe(TURNS):
        # CPU a turn (all threads, and the event loop's alone): unlike the times, hardly moved by
        # the machine's other work.
        cpu, loop_cpu = time.process_time(), time.thread_time()
        for n in range(TURNS):
            await turn(screen, server, n, figures)
        cpu, loop_cpu = time.process_time() - cpu, time.thread_time() - loop_cpu
    summaries = sum(request["kind"] == "plain" for request in server.requests()[began:])
    print(
        f"{label}: "
        + ", ".join(f"{o:.0f}" for o in overheads)
        + f" ms (median {median(overheads):.0f}: {median(befores):.0f} from Enter to the "
        f"request, {median(afters):.0f} from the reply's last piece to it settled on screen; "
        f"the panel showed the next request {median(panels):.0f} ms later; the first turn: "
        f"{befores[0]:.0f} and {afters[0]:.0f}; requests a turn: "
        f"{'/'.join(str(k) for k in sorted(set(asked)))}, and {summaries} for summaries in all; "
        f"CPU a turn {1000 * cpu / TURNS:.0f} ms, {1000 * loop_cpu / TURNS:.0f} of them the event "
        f"loop's; the median turn's {median(cpus):.0f} and {median(loop_cpus):.0f}: the first "
        "turns also write the summaries asked for on opening)"
    )


def stuck(screen: ChatScreen, last_id: int | None) -> str:
    """What the screen shows when a turn's reply did not settle: the figures cannot say why."""
    reply = screen.message_list.last_reply()
    said = [str(n.message)[:120] for n in list(screen.app._notifications)[-3:]]
    shown = "none" if reply is None else f"#{reply.id} ({reply.status.value}, error {reply.error!r})"
    return (
        f"busy {screen.busy}, the last reply {shown}, the one before #{last_id}, "
        f"the composer {screen.composer.text[:40]!r}, lately said: {said}"
    )


async def turn(screen: ChatScreen, server: ServerControl, n: int, figures: tuple[list[float], ...]) -> None:
    """One of :func:`turns`' turns: its figures appended to theirs."""
    from engine.chat import MessageStatus

    overheads, befores, afters, panels, asked, cpus, loop_cpus = figures
    count = server.count()
    last = screen.message_list.last_reply()
    # The last turn's reply reads the same as this one's: only a new one will do.
    last_id = last.id if last is not None else None

    def new_and_whole(reply: StoredMessage, last_id: int | None = last_id) -> bool:
        return reply.id != last_id and reply.status == MessageStatus.COMPLETE

    screen.composer.text = f"what about the deploy fails number {n}"
    turn_cpu, turn_loop_cpu = time.process_time(), time.thread_time()
    sent = time.perf_counter()
    screen.composer.action_submit()
    try:
        done = await poll(replied(screen, new_and_whole), 30)
    except TimeoutError as err:
        raise TimeoutError(f"turn {n}: {stuck(screen, last_id)}") from err
    panel = await poll(lambda: screen.settled, 30)
    panels.append(1000 * (panel - done))
    requests = await server.requests_since(count, ("json", "stream"))
    reply = requests[-1]
    model_time = sum(request["finished_at"] - request["received_at"] for request in requests)
    curator_time = model_time - (reply["finished_at"] - reply["received_at"])
    overheads.append(1000 * (done - sent - model_time))
    befores.append(1000 * (reply["received_at"] - sent - curator_time))
    afters.append(1000 * (done - reply["finished_at"]))
    asked.append(len(requests))
    await asyncio.sleep(0.2)  # as a user reads the reply: the panel settles, the loop goes idle
    cpus.append(1000 * (time.process_time() - turn_cpu))
    loop_cpus.append(1000 * (time.thread_time() - turn_loop_cpu))
