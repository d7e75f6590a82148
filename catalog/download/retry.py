"""When to try a URL again, and how long to wait first.

A file's URLs are tried in rounds: each round tries every URL still worth trying, in order,
so a dead host costs no waiting when a mirror has the file. A URL stays in the next round
only after a transient failure (see :class:`~catalog.download.resource.Failure`): a 403, 404,
an HTML page or wrong bytes drop it at once. Between rounds the manager waits
:meth:`Backoff.delay`: capped exponential backoff with jitter, at least what a server asked
for with ``Retry-After`` (capped too).

>>> import random
>>> b = Backoff(base=1.0, cap=5.0, rng=random.Random(0))
>>> [round(b.delay(n), 2) for n in range(4)]
[0.92, 1.76, 2.84, 3.15]
>>> b.delay(0, retry_after=4.0)
4.0
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from urllib3.exceptions import InvalidHeader
from urllib3.util.retry import Retry

__all__ = ["Backoff", "is_transient_status", "parse_retry_after"]

_PARSER = Retry(0)  # only for its Retry-After parser (seconds or an HTTP date)


def is_transient_status(status: int) -> bool:
    """HTTP statuses worth retrying later: 408 (timeout), 425, 429 (rate limit), 5xx."""
    return status in (408, 425, 429) or 500 <= status <= 599


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date); None if absent/bad.

    >>> parse_retry_after("7"), parse_retry_after("soon"), parse_retry_after(None)
    (7.0, None, None)
    """
    if value is None:
        return None
    try:
        return max(0.0, float(_PARSER.parse_retry_after(value)))
    except InvalidHeader:
        return None


@dataclass(frozen=True)
class Backoff:
    """Wait ``base * 2**n`` seconds before retry round ``n`` (from 0), times a random factor
    in [0.5, 1) so that clients do not retry in step, never more than ``cap``; at least
    ``retry_after`` when a server asked for it (also capped)."""

    base: float
    cap: float
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def delay(self, n: int, retry_after: float | None = None) -> float:
        wait = min(self.cap, self.base * 2.0**n) * self.rng.uniform(0.5, 1.0)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, self.cap)
