"""The random generators ``map(fn, with_rng=True)`` passes, made for a unit at a time.

Example `index` of epoch `epoch`, at position `op` of the pipeline's chain, gets the
generator ``np.random.default_rng([seed, epoch, index, op])``: PCG64 seeded by NumPy's
`SeedSequence` from those numbers, so the same example in the same epoch always gets the
same random numbers, whoever computes it. NumPy builds one in ~35 us, nearly all of it
SeedSequence hashing the four numbers in code that holds the GIL: on a photo pipeline that is
~3% of the work per image and a third of the time its worker threads hold the GIL.

`generators` gives the same generators for all the examples of a unit at once: the hash
(M. O'Neill's seed_seq_fe, as NumPy's SeedSequence implements it; NumPy keeps it stable
under its compatibility policy) runs on NumPy arrays, one column per example, and each
generator is then built from its four 64-bit words (~4 us each). The generators are
NumPy's own; their seed sequence (`bit_generator.seed_seq`) is a `_Seeded`, which hands
PCG64 the precomputed words and leaves anything else (``spawn``, ``entropy``, pickling) to a
real `SeedSequence` of the same numbers, made when first needed. tests/loader/test_rngs.py
checks every draw against ``np.random.default_rng``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.random.bit_generator import ISpawnableSeedSequence

__all__ = ["generators"]

Array = np.ndarray[Any, Any]
_MASK = 0xFFFFFFFF
# seed_seq_fe's constants (NumPy's bit_generator.pyx)
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_POOL = 4  # SeedSequence's default pool size (32-bit words)


def _words(value: int) -> list[int]:
    """`value` as SeedSequence reads an int: 32-bit words, least significant first."""
    if value == 0:
        return [0]
    out = []
    while value:
        out.append(value & _MASK)
        value >>= 32
    return out


def _hashes(init: int, mult: int, count: int) -> list[tuple[int, int]]:
    """The constants of `count` hashmix calls: (xor with, multiply by) for each."""
    out, h = [], init
    for _ in range(count):
        nxt = (h * mult) & _MASK
        out.append((h, nxt))
        h = nxt
    return out


#: The hash constants of the pool's first `_POOL` + 12 hashmix calls (each word of entropy
#: past the pool's four adds four), and of generate_state's 8 (4 uint64 words).
_MIXING = _hashes(_INIT_A, _MULT_A, _POOL * _POOL)
_OUTPUT = _hashes(_INIT_B, _MULT_B, 2 * _POOL)

# A word is an int (the same for every example: hashed once, in Python) or a uint32 array
# (one value per example: NumPy wraps its products modulo 2**32 as the C code does).
Word = int | Array


def _hashmix(value: Word, pair: tuple[int, int]) -> Word:
    if isinstance(value, int):
        value = ((value ^ pair[0]) * pair[1]) & _MASK
        return value ^ (value >> 16)
    out: Array = np.multiply(value ^ pair[0], np.uint32(pair[1]))
    out ^= out >> 16
    return out


def _mix(x: Word, y: Word) -> Word:
    if isinstance(x, int) and isinstance(y, int):
        r = (_MIX_L * x - _MIX_R * y) & _MASK
        return r ^ (r >> 16)
    # an int side is multiplied in Python (masked), so NumPy never sees a scalar overflow
    left = _MIX_L * x & _MASK if isinstance(x, int) else np.multiply(x, np.uint32(_MIX_L))
    right = _MIX_R * y & _MASK if isinstance(y, int) else np.multiply(y, np.uint32(_MIX_R))
    out: Array = np.subtract(left, right, dtype=np.uint32)
    out ^= out >> 16
    return out


def _state(entropy: list[Word], n: int) -> Array:
    """SeedSequence(entropy).generate_state(4, np.uint64) for `n` examples: `entropy` is the
    list of 32-bit words (`Word`, at least `_POOL` of them); (n, 4) uint64."""
    hashes = iter(_MIXING + _hashes(_MIXING[-1][1], _MULT_A, 4 * len(entropy)))
    pool = [_hashmix(entropy[i], next(hashes)) for i in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], next(hashes)))
    for word in entropy[_POOL:]:
        for dst in range(_POOL):
            pool[dst] = _mix(pool[dst], _hashmix(word, next(hashes)))
    out = np.empty((2 * _POOL, n), np.uint32)
    for i, pair in enumerate(_OUTPUT):
        out[i] = _hashmix(pool[i % _POOL], pair)
    # pairs of 32-bit words, little-endian, as SeedSequence views them
    wide = out.astype(np.uint64)
    words: Array = (wide[0::2] | (wide[1::2] << np.uint64(32))).T
    return words


class _Seeded(ISpawnableSeedSequence):
    """The seed sequence of ``[seed, epoch, index, op]`` with its PCG64 state precomputed
    (see the module docstring); anything else is a real SeedSequence's."""

    __slots__ = ("_entropy", "_real", "_words")

    def __init__(self, entropy: tuple[int, ...], words: Array) -> None:
        self._entropy, self._words = entropy, words
        self._real: np.random.SeedSequence | None = None

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> Array:
        if n_words == _POOL and (dtype is np.uint64 or np.dtype(dtype) == np.uint64):
            return self._words.copy()
        return self.real.generate_state(n_words, dtype)

    def spawn(self, n_children: int) -> list[np.random.SeedSequence]:  # type: ignore[override]
        return self.real.spawn(n_children)

    @property
    def real(self) -> np.random.SeedSequence:
        if self._real is None:
            self._real = np.random.SeedSequence(list(self._entropy))
        return self._real

    def __getattr__(self, name: str) -> Any:  # entropy, spawn_key, pool, ...
        if name.startswith("__") or name in _Seeded.__slots__:
            raise AttributeError(name)
        return getattr(self.real, name)

    def __reduce__(self) -> tuple[Any, ...]:
        return np.random.SeedSequence, (list(self._entropy),)

    def __repr__(self) -> str:
        return repr(self.real)


def generators(seed: int, epoch: int, indices: Sequence[int], op: int) -> list[np.random.Generator]:
    """``[np.random.default_rng([seed, epoch, i, op]) for i in indices]``: the same
    generators, made together (see the module docstring)."""
    keys = [int(i) for i in indices]
    if not keys:
        return []
    if min(seed, epoch, op, *keys) < 0 or max(keys) > _MASK:
        # NumPy's own error for a negative number; an index of more than one word
        return [np.random.default_rng([seed, epoch, i, op]) for i in keys]
    entropy: list[Word] = [*_words(seed), *_words(epoch), np.array(keys, np.uint32), *_words(op)]
    words = _state(entropy, len(keys))
    pcg, gen = np.random.PCG64, np.random.Generator
    return [gen(pcg(_Seeded((seed, epoch, i, op), words[j]))) for j, i in enumerate(keys)]
