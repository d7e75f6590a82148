"""What a download shows: tqdm byte bars on a terminal, one line per file in CI, or nothing.

``auto`` picks bars when stderr is a terminal and lines otherwise, so a CI log gets
``downloading train-images-idx3-ubyte.gz (25.2MiB) from http://...`` and never a bar.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Protocol

from tqdm import tqdm

from catalog._util.terminal import escape, unescaped
from catalog._util.units import format_size
from catalog.download.config import ProgressMode

__all__ = ["Bar", "Progress"]


class Bar(Protocol):
    """Byte progress of one transfer."""

    def update(self, n: int) -> Any: ...
    def close(self) -> None: ...


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


class _OnFirstBytes:
    """A bar that appears when the first bytes arrive, so a server that never answers (or a
    host that does not resolve) leaves no "downloading ..." line or empty bar behind: the
    failure is reported once, at the end."""

    def __init__(self, start: Any) -> None:
        self._start: Any = start
        self._bar: Bar | None = None

    def update(self, n: int) -> None:
        if self._bar is None:
            self._bar = self._start()
        assert self._bar is not None
        self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class Progress:
    """Reports transfers and notes (retries, waits) on stderr, as ``mode`` asks."""

    def __init__(self, mode: ProgressMode = "auto") -> None:
        if mode == "auto":
            stream = sys.stderr
            mode = "bars" if stream is not None and stream.isatty() else "lines"
        self.mode = mode
        self._lock = threading.Lock()

    def transfer(
        self, filename: str, size: int | None, where: str, *, start: int = 0, deadline: str = ""
    ) -> Bar:
        """A transfer of ``filename`` from ``where`` (from byte ``start``), announced when its
        first bytes arrive, with its ``deadline`` (e.g. ``deadline 6 min 20 s (at least
        32.0 KiB/s)``) on the line or beside the bar."""
        after = f"; {deadline}" if deadline else ""
        if self.mode == "none":
            return _NoBar()

        def begin() -> Bar:
            if self.mode == "bars":
                return tqdm(  # type: ignore[no-any-return]
                    total=size,
                    initial=start,
                    unit="B",
                    unit_scale=True,
                    unit_divisor=1024,
                    desc=escape(filename),
                    file=unescaped(sys.stderr),  # draws with \r; its text escaped here
                    leave=True,
                    postfix=escape(deadline) if deadline else None,
                )
            if start:
                at = f"{format_size(start)} of {format_size(size)}"
                self.note(f"resuming {filename} at {at} from {where}{after}")
            else:
                self.note(f"downloading {filename} ({format_size(size)}) from {where}{after}")
            return _NoBar()

        return _OnFirstBytes(begin)

    def note(self, message: str) -> None:
        """One line on stderr (above any bars), unless silent."""
        if self.mode == "none" or sys.stderr is None:
            return
        with self._lock:
            if self.mode == "bars":
                tqdm.write(escape(message), file=unescaped(sys.stderr))
            else:
                print(message, file=sys.stderr, flush=True)
