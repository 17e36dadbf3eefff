"""When the engine asks the model again by itself, and how long it waits first.

Retries are the engine's, not the HTTP client's: a wait hidden inside the client looks like a hang,
while the engine's wait is an event the UI shows as a countdown the user can cancel.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import ModelError


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and after how long a failed request is sent again unchanged.

    Only errors marked ``retryable`` (429, 5xx, a connection that could not be opened) are retried,
    and only before any of the reply arrived: a reply cut in the middle is the user's to continue.
    """

    retries: int = 2
    """Automatic retries after the first failure (0: none)."""
    base_delay: float = 1.0
    """Seconds before the first retry when the server did not say; doubled for each next one."""
    max_delay: float = 30.0
    """No backoff wait is longer than this."""
    max_wait: float = 120.0
    """A server asking for a longer wait than this (Retry-After) is not waited for by itself: the
    user is told and decides."""

    def delay(self, error: ModelError, retry: int) -> float | None:
        """Seconds to wait before automatic retry number ``retry`` (from 1), or None for "do not".

        Args:
            error: Why the last attempt failed.
            retry: Which retry this would be.
        """
        if not error.retryable or retry > self.retries:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_wait else None
        backoff: float = self.base_delay * 2.0 ** (retry - 1)
        return min(self.max_delay, backoff)


NO_RETRIES = RetryPolicy(retries=0)
