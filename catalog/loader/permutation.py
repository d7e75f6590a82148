"""A bijection of ``range(n)`` keyed by (seed, epoch): global shuffling without a stored order.

A balanced Feistel network permutes the integers below the smallest even power of two that
holds ``n``; cycle walking (applying it again to values that land past ``n``) turns it into a
permutation of ``range(n)`` itself. Each position maps to its element in a few vectorised
integer operations, so a shuffle costs no memory and no setup, whatever the dataset's size,
and any window of the order can be computed on its own (by a resumed iterator or a worker).

>>> p = permute(np.arange(10), 10, seed=0, epoch=0)
>>> sorted(p.tolist()) == list(range(10))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["permute", "round_keys"]

ROUNDS = 6
_MASK64 = (1 << 64) - 1
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)

Array = np.ndarray[Any, Any]


def _splitmix64(x: int) -> int:
    """One step of SplitMix64 on Python ints: a well-mixed 64-bit value of `x`."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def round_keys(seed: int, epoch: int) -> list[int]:
    """The Feistel round keys of one (seed, epoch)."""
    state = _splitmix64(_splitmix64(seed & _MASK64) ^ (epoch & _MASK64))
    keys = []
    for _ in range(ROUNDS):
        state = _splitmix64(state)
        keys.append(state)
    return keys


def _feistel(values: Array, half: int, keys: list[int]) -> Array:
    """One pass of the network over `values` (uint64, all below ``2**(2*half)``)."""
    mask = np.uint64((1 << half) - 1)
    shift = np.uint64(half)
    left, right = values >> shift, values & mask
    for key in keys:
        h = (right ^ np.uint64(key)) * _M1
        h ^= h >> np.uint64(31)
        h *= _M2
        h ^= h >> np.uint64(29)
        left, right = right, left ^ (h & mask)
    result: Array = (left << shift) | right
    return result


def permute(positions: Array, n: int, *, seed: int, epoch: int) -> Array:
    """The elements at `positions` (ints in ``[0, n)``) of the permutation of ``range(n)``
    keyed by (seed, epoch), as int64."""
    if n <= 1:
        return np.asarray(positions, np.int64).copy()
    half = max(1, ((n - 1).bit_length() + 1) // 2)
    keys = round_keys(seed, epoch)
    values = _feistel(np.asarray(positions, np.uint64), half, keys)
    limit = np.uint64(n)
    outside = np.flatnonzero(values >= limit)
    while outside.size:  # cycle walking: each value is in range after a few passes
        walked = _feistel(values[outside], half, keys)
        values[outside] = walked
        outside = outside[walked >= limit]
    return values.astype(np.int64)
