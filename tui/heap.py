"""Keep the cyclic garbage collector off a loaded session's objects.

A long session holds hundreds of thousands of long-lived objects (items, their term counts, index
postings). CPython's full collections re-scan all of them, which at 10,000 items is a ~70 ms pause
that lands on whatever turn happens to trigger it. Freezing the heap once a session is on screen
moves those objects out of the collector's sight (reference counting still frees them).
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect what earlier sessions left behind, then freeze everything that is alive now.

    Unfreezing first lets the collection reach the cycles of a session that was closed since the
    last call (widgets and their DOM), which would otherwise stay frozen for good.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
