"""Sizes for people, the same everywhere catalog prints one."""

from __future__ import annotations

import re

__all__ = ["format_size", "parse_size"]

_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
          "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40}  # fmt: skip


def parse_size(text: str) -> int:
    """A size people write, in bytes: ``1000``, ``256MB``, ``1 GiB``, ``1.5G``.

    >>> parse_size("256MB"), parse_size("1GiB"), parse_size("4096")
    (256000000, 1073741824, 4096)
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]i?)?b?\s*", text.lower())
    if not match:
        raise ValueError(f"expected a size such as 4096, 256MB or 1GiB, got {text!r}")
    value = float(match[1]) * _UNITS[match[2] or ""]
    if value < 1:
        raise ValueError(f"a size must be at least 1 byte, got {text!r}")
    return int(value)


def format_size(num_bytes: int | None) -> str:
    """A byte count for people, in binary units.

    >>> format_size(512), format_size(26421880), format_size(3 << 30), format_size(None)
    ('512 B', '25.2 MiB', '3.0 GiB', 'size unknown')
    """
    if num_bytes is None:
        return "size unknown"
    value = float(num_bytes)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{num_bytes} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
