"""Where the app's memory goes: the libraries before any history, then what a long session adds.

The profile behind ``long_session.py``'s peak RSS (issue 8 asks ≤ 150 MB). Each part runs in a
fresh process, so one's memory is not counted in another's:

* the libraries: Python, then Textual, pydantic, openai, Heedful's own modules and the loaded
  tokenizer, each imported on top of the last (resident memory after each);
* the app at rest (context ready, then 2 s for the tokenizer and the model's client to load),
  on an empty data dir and on the session (the same 10,000 messages as ``long_session.py``);
* the same two again under ``tracemalloc``: the session's live Python memory, by the innermost
  of Heedful's frames that asked for it, or else by the library that did.

The app talks to an address where nothing listens: no request is made at rest.

    .venv/bin/python tests/benchmarks/memory_profile.py [--messages N] [--reuse DB]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

MODEL = "gpt-4o-mini"
"""As long_session.py's (its window, 128,000 tokens, is the one the session is curated for)."""
NOWHERE = "http://127.0.0.1:9/v1"
"""The discard port: the model's client is made, and never used."""
TRACE_FRAMES = 25
"""Enough to reach a Heedful frame from most of what Textual allocates for a widget."""
SHOWN = 8
"""Owners shown, largest first; the rest are summed."""


def resident() -> float:
    """The process's resident memory now, in MB, after a full collection.

    Not measuring.py's ``memory()``: importing it loads asyncio, which the first steps of
    :func:`libraries` must not count.
    """
    gc.collect()
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def libraries() -> list[tuple[str, float]]:
    """Resident memory after each library is imported on top of the last."""
    steps = [("Python", resident())]
    import asyncio  # noqa: F401

    steps.append(("asyncio (with ssl and OpenSSL)", resident()))
    import rich.markdown  # noqa: F401
    import textual.app
    import textual.widgets

    steps.append((f"Textual {textual.__version__} and Rich", resident()))
    import pydantic

    steps.append((f"pydantic {pydantic.VERSION}", resident()))
    import openai

    steps.append((f"openai {openai.__version__}", resident()))
    import tui.app  # noqa: F401

    steps.append(("Heedful's modules (and what they import)", resident()))
    from engine.text.tokens import load_counter

    load_counter(MODEL).count("warm")
    steps.append(("the tokenizer, loaded (cl100k)", resident()))
    return steps


def owner(trace: tracemalloc.Traceback) -> str:
    """Who asked for a block: the innermost of Heedful's frames, or else the innermost library
    (the tests' harness, which drives the app, is not Heedful's)."""
    for frame in reversed(trace):
        path = Path(frame.filename)
        if ROOT in path.parents and not {".venv", "tests"} & set(path.parts):
            return path.relative_to(ROOT).parts[0]
    innermost = Path(trace[-1].filename).parts
    return innermost[innermost.index("site-packages") + 1] if "site-packages" in innermost else "Python"


async def at_rest(trace: bool) -> dict[str, object]:
    """The app on the data dir the environment names, at rest: resident MB, and with ``trace``
    the live traced memory by owner."""
    import asyncio

    from tests.apphelpers import chat, make_app
    from tests.benchmarks.long_session import SIZE
    from tests.benchmarks.measuring import poll

    if trace:
        tracemalloc.start(TRACE_FRAMES)
    app = make_app(base_url=NOWHERE, model=MODEL)
    async with app.run_test(size=SIZE):
        screen = chat(app)
        await poll(lambda: screen.context is not None and not screen.busy, 300)
        await asyncio.sleep(2)
        mb = resident()
        if not trace:
            return {"resident": mb}
        by: Counter[str] = Counter()
        for stat in tracemalloc.take_snapshot().statistics("traceback"):
            by[owner(stat.traceback)] += stat.size
        return {"resident": mb, "owners": {name: size / 2**20 for name, size in by.items()}}


def run_part(*args: str, data: Path) -> Any:
    """One part of the profile, in a fresh process over the data dir ``data``."""
    env = {**os.environ, "HEEDFUL_DATA_DIR": str(data), "HEEDFUL_CONFIG": str(data.parent / "config.toml")}
    done = subprocess.run(
        [sys.executable, __file__, *args], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def report(
    floor: list[tuple[str, float]],
    rest: tuple[float, float],
    owners: tuple[dict[str, float], dict[str, float]],
    count: int,
) -> None:
    """Print the profile: ``rest`` and ``owners`` are (empty data dir, session)."""
    print("The libraries, each imported on top of the last, in a fresh interpreter (resident MB):")
    before = 0.0
    for name, mb in floor:
        print(f"  {name:<44} {mb:6.1f}  (+{mb - before:.1f})")
        before = mb
    empty, full = rest
    print(
        f"The app at rest (context ready, 2 s idle): {empty:.0f} MB on an empty data dir, "
        f"{full:.0f} MB with {count:,} messages (+{full - empty:.0f})"
    )
    base, session = owners
    grown = {name: session.get(name, 0.0) - base.get(name, 0.0) for name in session.keys() | base.keys()}
    ranked = sorted(grown.items(), key=lambda item: -item[1])
    print(f"Live Python memory the {count:,} messages add, by who asked for it (tracemalloc, MB):")
    for name, mb in ranked[:SHOWN]:
        print(f"  {name:<12} {mb:6.1f}")
    print(f"  {'the rest':<12} {sum(mb for _, mb in ranked[SHOWN:]):6.1f}")
    print(
        f"  {'in all':<12} {sum(grown.values()):6.1f}  (traced in all: {sum(session.values()):.1f}, "
        f"against {sum(base.values()):.1f} on an empty data dir)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--reuse", type=Path, metavar="DB", help="as long_session.py's --reuse")
    parser.add_argument("--part", choices=["libraries", "rest", "traced"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part == "libraries":
        print(json.dumps(libraries()))
        return
    if args.part is not None:
        import asyncio

        print(json.dumps(asyncio.run(at_rest(trace=args.part == "traced"))))
        return
    with tempfile.TemporaryDirectory() as scratch:
        session, empty = Path(scratch) / "session" / "data", Path(scratch) / "empty" / "data"
        empty.mkdir(parents=True)
        session.mkdir(parents=True)
        os.environ["HEEDFUL_DATA_DIR"] = str(session)
        os.environ["HEEDFUL_CONFIG"] = str(session.parent / "config.toml")
        from tests.benchmarks.big_session import build

        if args.reuse is not None and args.reuse.exists():
            shutil.copyfile(args.reuse, session / "heedful.db")
        else:
            build(args.messages)
            if args.reuse is not None:
                shutil.copyfile(session / "heedful.db", args.reuse)
        floor = [(str(name), float(mb)) for name, mb in run_part("--part", "libraries", data=empty)]
        rest = (
            run_part("--part", "rest", data=empty)["resident"],
            run_part("--part", "rest", data=session)["resident"],
        )
        owners = (
            run_part("--part", "traced", data=empty)["owners"],
            run_part("--part", "traced", data=session)["owners"],
        )
        report(floor, rest, owners, args.messages)


if __name__ == "__main__":
    main()
