"""Sizes for people, the same everywhere catalog prints one."""

from __future__ import annotations

__all__ = ["format_size"]


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
