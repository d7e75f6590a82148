"""A small metadata file read whole, in bounded memory, with one-line errors naming it: a
builder.yaml, a ClassLabel names file, a Croissant file, a TFDS directory's JSON.

>>> import tempfile, os
>>> with tempfile.NamedTemporaryFile(delete=False) as f:
...     _ = f.write(b"0123456789")
>>> read_small(f.name, 10, ValueError, too_large="too big")
b'0123456789'
>>> read_small(f.name, 9, ValueError, where="x.json", too_large="larger than 9 bytes")
Traceback (most recent call last):
ValueError: x.json: larger than 9 bytes
>>> os.unlink(f.name)
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

__all__ = ["read_small"]


def read_small(
    path: str | os.PathLike[str],
    limit: int,
    error: Callable[[str], Exception],
    *,
    too_large: str,
    where: object = None,
    regular_only: bool = False,
) -> bytes:
    """The bytes of `path`, at most `limit` of them: a larger file is not read past
    ``limit + 1`` bytes, whatever it claims. Else ``error(message)`` is raised, the message
    naming `where` (default: the path): ``cannot read it (<the system's reason>)``, `too_large`
    (what a larger file is told), or with `regular_only`, ``not a regular file`` for a device
    or FIFO (which could be read forever)."""
    where = path if where is None else where
    try:
        with open(path, "rb") as f:
            if regular_only and not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise error(f"{where}: not a regular file")
            data = f.read(limit + 1)
    except OSError as exc:
        raise error(f"{where}: cannot read it ({exc.strerror})") from None
    if len(data) > limit:
        raise error(f"{where}: {too_large}")
    return data
