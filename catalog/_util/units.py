"""Sizes, durations and counts for people, the same everywhere catalog prints one."""

from __future__ import annotations

import re

__all__ = ["count", "format_duration", "format_size", "parse_size"]

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 10**6, "mb": 10**6,
          "mib": 1 << 20, "g": 10**9, "gb": 10**9, "gib": 1 << 30, "t": 10**12, "tb": 10**12,
          "tib": 1 << 40}  # fmt: skip
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?)\s*([a-zA-Z]*)\s*")


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


def parse_size(text: str) -> int:
    """A byte count from ``12345``, ``32KiB``, ``1.5 GiB`` or ``100MB``; ValueError otherwise.

    >>> parse_size("32KiB"), parse_size("1.5 GiB"), parse_size("100MB"), parse_size("7")
    (32768, 1610612736, 100000000, 7)
    """
    match = _SIZE.fullmatch(text)
    unit = match[2].lower() if match else ""
    if match is None or unit not in _UNITS:
        raise ValueError(f"expected a size such as 1000, 32KiB or 2GiB, got {text!r}")
    return int(float(match[1]) * _UNITS[unit])


def format_duration(seconds: float) -> str:
    """A duration for people.

    >>> format_duration(0.25), format_duration(42), format_duration(380), format_duration(7260)
    ('0.2 s', '42 s', '6 min 20 s', '2 h 1 min')
    """
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s" if whole % 60 else f"{whole // 60} min"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def count(n: int, noun: str) -> str:
    """``1 shard``, ``2 shards``: `n` and the noun, plural unless `n` is 1.

    >>> count(1, "shard"), count(3, "checksum"), count(0, "split")
    ('1 shard', '3 checksums', '0 splits')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
