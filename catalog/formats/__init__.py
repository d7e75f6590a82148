"""Source-format readers: turn downloaded files into examples, so most builders need no Python.

Each format names the files it reads (by role, e.g. "images" and "labels") and yields
``(key, example)`` pairs. A builder's split says which format it uses and which of its
downloads fills each role.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.formats import idx

__all__ = ["FORMATS", "SourceFormat"]

Examples = Iterator[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class SourceFormat:
    """A reader of one source format."""

    name: str
    roles: tuple[str, ...]
    examples: Callable[[Mapping[str, Path]], Examples]
    description: str


#: Every source format by the name a builder spec uses. Add new readers here.
FORMATS: dict[str, SourceFormat] = {
    "idx": SourceFormat(
        "idx", idx.ROLES, idx.examples, "IDX images + labels files (MNIST family), gzip'd or not"
    ),
}
