"""How long one file may take: a deadline that scales with its size.

A server that sends one byte a second never trips a read timeout, so every file also gets an
overall deadline, counted from its first request over every URL and retry round::

    BASE_SECONDS + bytes still to fetch / min_rate     (size known)
    UNKNOWN_SIZE_SECONDS                               (size unknown: --register-checksums)

With the default ``min_rate`` of 32 KiB/s, a 10 MiB file gets 60 s + 320 s. The transfer is
checked while it streams; past the deadline the file fails at once with
:class:`DeadlineExceeded`, naming the URL, the bytes received and the rate, and how to allow
more time. The bytes received stay in the part file, so the next run resumes from them.

A transfer that drips is also *stalled* long before its deadline, the way curl's low-speed
limit works: averaging under ``min_rate / 8`` over any ``read_timeout`` seconds of one
response (default: under 4 KiB/s over 15 s) fails that attempt as a :class:`Stalled`, a
transient failure like a read timeout (the URL is tried twice at most, other URLs and mirrors
still are). So ``read_timeout`` bounds a dripping server as it bounds a silent one.

>>> d = Deadline(size=32 * 1024 * 100, start=0, min_rate=32 * 1024, clock=lambda: 0.0)
>>> d.seconds
160.0
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable

from catalog._util.units import format_duration, format_size, parse_size
from catalog.download.resource import Failure
from catalog.storage.paths import MIN_RATE_ENV

__all__ = [
    "BASE_SECONDS",
    "DEFAULT_MIN_RATE",
    "MIN_RATE_ENV",
    "STALL_FRACTION",
    "UNKNOWN_SIZE_SECONDS",
    "Deadline",
    "DeadlineExceeded",
    "Stalled",
    "min_rate",
]

#: Bytes per second a download must average (256 kbit/s, a poor mobile link).
DEFAULT_MIN_RATE = 32 * 1024
#: Seconds every file gets on top of its bytes: connections, retries, a slow start.
BASE_SECONDS = 60.0
#: The deadline of a file whose size is not registered yet.
UNKNOWN_SIZE_SECONDS = 3600.0
#: A response averaging under min_rate / STALL_FRACTION over read_timeout seconds is stalled.
STALL_FRACTION = 8


def min_rate(explicit: float | None = None) -> float:
    """The minimum rate in bytes/s: `explicit`, else $CATALOG_MIN_DOWNLOAD_RATE (``32KiB``,
    ``1MiB``, ``50000``), else :data:`DEFAULT_MIN_RATE`. ValueError for a malformed value."""
    if explicit is not None:
        return float(explicit)
    text = os.environ.get(MIN_RATE_ENV, "").strip()
    if not text:
        return float(DEFAULT_MIN_RATE)
    try:
        rate = parse_size(text.removesuffix("/s"))
    except ValueError:
        rate = 0
    if rate <= 0:
        raise ValueError(
            f"{MIN_RATE_ENV}={text!r}: expected bytes per second > 0, such as 32KiB or 1MiB"
        )
    return float(rate)


class DeadlineExceeded(Failure):
    """A file took longer than its deadline at ``url``: no other URL or round is tried."""

    def __init__(self, reason: str, url: str) -> None:
        super().__init__(reason)
        self.url = url


class Stalled(Failure):
    """One response averaged under ``min_rate / STALL_FRACTION`` for ``read_timeout`` s."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, transient=True, unanswered=True)


class Deadline:
    """The deadline of one file, and the bytes received towards it (`stall_seconds`: the
    read timeout, the window of the low-speed check; None: no such check)."""

    def __init__(
        self,
        *,
        size: int | None,
        start: int,
        min_rate: float,
        clock: Callable[[], float],
        stall_seconds: float | None = None,
    ) -> None:
        self.size, self.min_rate, self.clock = size, min_rate, clock
        self.stall_seconds = stall_seconds
        self._window: deque[tuple[float, int]] = deque()  # (time, bytes received) samples
        remaining = None if size is None else max(0, size - start)
        self.seconds = (
            UNKNOWN_SIZE_SECONDS if remaining is None else BASE_SECONDS + remaining / min_rate
        )
        self.started = clock()
        self.received = 0  # bytes received since the deadline started, over every attempt

    @property
    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.started + self.seconds - self.clock()

    def describe(self) -> str:
        """``deadline 6 min 20 s (at least 32.0 KiB/s)``: for progress lines and bars."""
        return f"deadline {format_duration(self.seconds)} (at least {_rate(self.min_rate)})"

    def begin(self) -> None:
        """A response has started: the low-speed window starts over."""
        self._window.clear()
        self._window.append((self.clock(), self.received))

    def add(self, received: int, url: str, on_disk: int) -> None:
        """Count `received` more bytes; raise :class:`DeadlineExceeded` once past the deadline,
        :class:`Stalled` once the response is too slow for too long (`on_disk`: the bytes of
        the file kept so far, for the message)."""
        self.received += received
        now = self.clock()  # read once per chunk
        self.check(url, on_disk, now)
        self._check_stall(on_disk, now)

    def _check_stall(self, on_disk: int, now: float) -> None:
        if self.stall_seconds is None or not self._window:
            return
        self._window.append((now, self.received))
        # the window starts at the newest sample that is still at least stall_seconds old
        while len(self._window) > 2 and now - self._window[1][0] >= self.stall_seconds:
            self._window.popleft()
        since, before = self._window[0]
        span = now - since
        floor = self.min_rate / STALL_FRACTION
        if span < self.stall_seconds or (self.received - before) / span >= floor:
            return
        of = f" of {self.size}" if self.size is not None else ""
        raise Stalled(
            f"stalled: {self.received - before} bytes in the last {format_duration(span)} "
            f"({_rate((self.received - before) / span)}), under {_rate(floor)} (1/"
            f"{STALL_FRACTION} of the minimum rate) for longer than read_timeout "
            f"({format_duration(self.stall_seconds)}); {on_disk}{of} bytes on disk, kept for "
            f"the next attempt. On a slow link lower the minimum rate, e.g. "
            f"{MIN_RATE_ENV}=8KiB (or DownloadConfig(min_rate=...)), or allow longer slow "
            "spells with DownloadConfig(read_timeout=...)"
        )

    def check(self, url: str, on_disk: int, now: float | None = None) -> None:
        """Raise :class:`DeadlineExceeded` if the deadline has passed (at `now`: the clock's
        time, read here if not given)."""
        now = self.clock() if now is None else now
        if self.started + self.seconds - now > 0:
            return
        elapsed = max(now - self.started, 1e-9)
        of = f" of {self.size}" if self.size is not None else ""
        if self.size is None:
            rule = f"a file of unregistered size gets {format_duration(self.seconds)}"
        else:
            rule = (
                f"a file gets {format_duration(BASE_SECONDS)} plus its size at "
                f"{_rate(self.min_rate)}, {format_duration(self.seconds)} for this one"
            )
        raise DeadlineExceeded(
            f"too slow: {self.received} bytes received in {format_duration(elapsed)} "
            f"({_rate(self.received / elapsed)}) from {url}, {on_disk}{of} bytes on disk; "
            f"{rule}. The bytes received are kept and the next run resumes from them; on a "
            f"slow link allow more time with a lower minimum rate, e.g. {MIN_RATE_ENV}=8KiB "
            "(or DownloadConfig(min_rate=...))",
            url,
        )


def _rate(bytes_per_second: float) -> str:
    return f"{format_size(round(bytes_per_second))}/s"
