"""Strings from a dataset's info made safe to show, however hostile: what the grids, the text
views and the site share.

A ``dataset_info.json`` is written by anyone, and JSON allows what text output cannot take:

- a lone surrogate (``"\\ud800"``) is valid JSON but no character: UTF-8 cannot encode it,
  so writing it to a page, a file or the terminal fails. :func:`no_surrogates` puts U+FFFD
  (the replacement character) in its place.
- control characters (a newline in a class name) would break a one-line caption or a table
  row: :func:`one_line` turns them into spaces.
- a string may be a million characters long: :func:`fit_width` cuts one to a width in pixels
  with a number of measurements that grows with the part kept, not with the whole string,
  and :func:`describe` names one in an error message in a few dozen characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["ELLIPSIS", "describe", "fit_width", "no_surrogates", "one_line"]

ELLIPSIS = "..."  #: what a cut string ends with
_SURROGATES = re.compile("[\ud800-\udfff]")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def no_surrogates(text: str) -> str:
    """`text` with every surrogate code point (U+D800..U+DFFF) replaced by U+FFFD, so that it
    encodes as UTF-8.

    >>> no_surrogates("a\\ud800b") == "a\\ufffdb"
    True
    """
    return _SURROGATES.sub("\ufffd", text)


def one_line(text: str) -> str:
    """`text` with surrogates replaced (:func:`no_surrogates`) and control characters (line
    breaks, tabs, NUL, C1 controls) turned into spaces.

    >>> one_line("cat\\ndog\\x00")
    'cat dog '
    """
    return _CONTROLS.sub(" ", no_surrogates(text))


def describe(text: str, limit: int = 40) -> str:
    """`text` for an error message: its repr (every odd character escaped), cut to about
    `limit` characters, with its length when cut.

    >>> describe("x" * 1000, limit=8)
    "'xxxxxxxx'... (1,000 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}{ELLIPSIS} ({len(text):,} characters)"


def fit_width(text: str, measure: Callable[[str], float], width: float) -> str:
    """`text` when `measure(text)` (its width) is at most `width`, else its longest prefix
    that fits with :data:`ELLIPSIS` after it, plus the ellipsis (just the ellipsis when no
    prefix fits).

    A galloping search: prefixes of 1, 2, 4, ... characters are measured until one is too
    wide, then the cut is found by bisection between the last two. That is O(log k)
    measurements of at most 2k characters for the k characters kept, whatever the length of
    `text` (a million-character class name is measured about 20 times, a few characters each),
    where cutting one character at a time and re-measuring the rest is quadratic.
    """
    size = 1
    while size < len(text) and measure(text[:size]) <= width:
        size *= 2
    if size >= len(text) and measure(text) <= width:
        return text
    # text[:size] (or the whole text) is too wide on its own, so with the ellipsis too.
    fits, too_wide = 0, min(size, len(text))
    while too_wide - fits > 1:
        middle = (fits + too_wide) // 2
        if measure(text[:middle] + ELLIPSIS) <= width:
            fits = middle
        else:
            too_wide = middle
    return text[:fits] + ELLIPSIS
