"""One text file cut into pieces, one piece per split, each split a single example.

Option ``cuts``: fractions taken one after the other from what is left of the text: piece 0
is the first ``int(n * cuts[0])`` characters of the ``n``, piece 1 the first
``int(m * cuts[1])`` characters of the ``m`` left after it, and so on; the last piece is
the rest. ``[0.9, 0.5]`` gives 90% / 5% / 5% exactly as TFDS's tiny_shakespeare computes it.
Option ``part``: which piece (0-based) this split is. The example is ``{"text": piece}``,
its key the split's name.

The file is read twice in chunks: once to count its characters, once to keep the piece, so
memory holds the piece and one chunk. Line endings are kept as they are; the file must be
text in option ``encoding`` (default utf-8), else the error names the character offset.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict, Text
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "examples", "pieces"]

_CHUNK = 1 << 20  # characters read at a time


def pieces(length: int, cuts: list[float]) -> list[tuple[int, int]]:
    """The ``(start, end)`` character ranges of the pieces of a text of `length` characters.

    >>> pieces(100, [0.9, 0.5]), pieces(7, [])
    ([(0, 90), (90, 95), (95, 100)], [(0, 7)])
    """
    out, start = [], 0
    for fraction in cuts:
        end = start + int((length - start) * fraction)
        out.append((start, end))
        start = end
    return [*out, (start, length)]


def _chunks(path: Path, encoding: str) -> Iterator[str]:
    done = 0
    try:
        with open(path, encoding=encoding, newline="") as f:
            while chunk := f.read(_CHUNK):
                yield chunk
                done += len(chunk)
    except UnicodeDecodeError as error:
        raise SourceFormatError(
            f"{path}: not {encoding} text after character {done}: {error.reason}"
        ) from None


def examples(source: Source) -> Examples:
    """Yield ``(split name, {"text": piece})``."""
    path, encoding = source.file("file"), source.options["encoding"]
    length = sum(len(chunk) for chunk in _chunks(path, encoding))
    start, end = pieces(length, source.options["cuts"])[source.options["part"]]
    kept, position = [], 0
    for chunk in _chunks(path, encoding):
        low, high = max(start - position, 0), min(end - position, len(chunk))
        if low < high:
            kept.append(chunk[low:high])
        position += len(chunk)
        if position >= end:
            break
    yield source.split, {"text": "".join(kept)}


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if not all(0 <= f <= 1 for f in options["cuts"]):
        return f"options.cuts must be fractions in [0, 1], got {options['cuts']}"
    if not 0 <= options["part"] <= len(options["cuts"]):
        return f"options.part must be 0..{len(options['cuts'])} (one per piece)"
    if not isinstance(features["text"], Text):
        return f"feature 'text' must be Text, got {features['text']!r}"
    return None


FORMAT = SourceFormat(
    name="text_cut",
    description="one text file cut into pieces by fractions; each split one piece (one example)",
    roles=(Role("file"),),
    options={
        "cuts": Option("floats", [], "fractions cut one after the other from the rest"),
        "part": Option("int", 0, "which piece (0-based) this split is"),
        "encoding": Option("str", "utf-8", "the file's text encoding"),
    },
    features=lambda options: (frozenset({"text"}), frozenset()),
    examples=examples,
    validate=_validate,
)
