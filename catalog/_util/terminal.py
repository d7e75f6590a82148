"""Text that reaches a terminal, made harmless: the one place `catalog`'s output is escaped.

A dataset's metadata is written by anyone (a Croissant file's description, a class name, a
file name, a line of a source file quoted in an error), and a terminal obeys what it is sent:
``ESC ] 0 ; title BEL`` sets the window title, ``ESC [ 2 J`` clears the screen, a carriage
return overwrites the line before it, ``U+202E`` shows the rest of a line reversed. The
``catalog`` command (`catalog.cli.main`) therefore writes through :class:`EscapingStream`s: its
stdout and stderr pass every such character only as a visible escape (``\\u001b``), whatever
command prints it and however it got into the text.

The escape is JSON's own (``\\uXXXX``): inside a JSON string it means the same character, so a
``--json`` document printed through the stream stays the same document (``json.loads`` gives
the same values), and outside one it is plain visible text.

Escaped: C0 controls but newline and tab, DEL, C1 controls (``U+0080..U+009F``: ``U+009B`` is
a CSI on many terminals), the bidirectional formatting characters, the line and paragraph
separators, and lone surrogates (which UTF-8 cannot encode: writing one used to fail).

A progress bar draws with its own controls (``\\r``, cursor moves): it writes to
:func:`unescaped` of the stream, and escapes what it puts inside itself (its description) with
:func:`escape`.
"""

from __future__ import annotations

import re
from typing import Any, TextIO, cast

__all__ = ["EscapingStream", "escape", "escaping", "unescaped"]

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but \t \n, DEL, C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, embeddings, overrides, isolates
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff]"  # lone surrogates
)


def _visible(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape(text: str) -> str:
    """`text` with every character a terminal would obey (see the module's docstring) as a
    visible ``\\uXXXX`` escape.

    >>> escape("title\\x1b]0;pwned\\x07 done\\n")
    'title\\\\u001b]0;pwned\\\\u0007 done\\n'
    """
    return _UNSAFE.sub(_visible, text)


class EscapingStream:
    """A text stream that writes to `stream` with :func:`escape` applied; everything else
    (``isatty``, ``fileno``, ``encoding``, ``buffer``, ...) is `stream`'s."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(escape(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def escaping(stream: TextIO) -> TextIO:
    """`stream` behind an :class:`EscapingStream` (as one, for `sys.stdout` and `sys.stderr`);
    an :class:`EscapingStream` already is one."""
    if isinstance(stream, EscapingStream):
        return stream
    return cast(TextIO, EscapingStream(stream))


def unescaped(stream: Any) -> Any:
    """The stream under `stream` when it is an :class:`EscapingStream` (for a progress bar that
    draws with its own controls and escapes its text itself), else `stream`."""
    return stream.stream if isinstance(stream, EscapingStream) else stream
