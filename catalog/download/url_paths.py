"""What a URL's path decodes to, segment by segment, and whether any segment is unsafe.

A server decodes ``%2e%2e`` to ``..`` and ``%2F`` to ``/``; so does catalog when it maps a
URL onto a mirror directory. A URL whose decoded path holds a ``.`` or ``..`` piece could
name a file outside that directory: it is refused in builder specs and never mapped.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

__all__ = ["path_segments"]


def path_segments(url: str) -> list[str] | None:
    """The segments of a URL's path as a server decodes them, or None if one of them is
    ``.`` or ``..`` or holds a NUL once decoded: ``%2e%2e``, and ``%2F..%2F`` inside one
    segment, are caught too (a decoded ``/`` or ``\\`` splits a segment in pieces).

    >>> path_segments("http://h/a/b.gz"), path_segments("http://h/a%2F..%2F..%2Fetc/passwd")
    (['a', 'b.gz'], None)
    """
    raw = urlsplit(url).path.split("/")[1:]
    segments = [s for s in raw if s]
    for segment in segments:
        decoded = unquote(segment)
        if "\0" in decoded or any(p in (".", "..") for p in re.split(r"[/\\]", decoded)):
            return None
    return segments
