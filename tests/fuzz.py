"""A seeded mutator for the fuzz tests (tests/*/test_fuzz_*.py): random byte-level mutations
of a valid input (bit flips, interesting bytes and integers, deletions, insertions,
duplicated runs, truncation), and a runner that feeds them to a target within a time budget,
asserting only catalog's own error types, bounded memory (tracemalloc peak) and bounded time
per input. Deterministic: the same seed gives the same inputs; a failure names the seed and
the input's index (``mutations(valid, seed)`` reproduces it)."""

from __future__ import annotations

import random
import time
import tracemalloc
from collections.abc import Callable, Iterator

from catalog.errors import CatalogError

_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x22, 0x2C, 0x0A, 0x5B, 0x7B)  # NUL, ", ',', \n, [, {
_INTS = (0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF)


def mutate(rng: random.Random, valid: bytes) -> bytes:
    """`valid` after 1-4 random mutations."""
    data = bytearray(valid)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(data) + 1)
        at = min(pos, len(data) - 1)
        op = rng.randrange(8)
        if op == 0 and data:
            data[at] ^= 1 << rng.randrange(8)
        elif op == 1 and data:
            data[at] = rng.choice(_BYTES)
        elif op == 2:
            del data[pos : pos + rng.randint(1, 64)]
        elif op == 3:
            data[pos:pos] = rng.randbytes(rng.randint(1, 16))
        elif op == 4 and data:  # a run of the input duplicated (repeated structure)
            start = rng.randrange(len(data))
            data[pos:pos] = data[start : start + rng.randint(1, 256)] * rng.randint(1, 8)
        elif op == 5:
            del data[pos:]
        elif op == 6:
            width = rng.choice((1, 2, 4))
            value = rng.choice(_INTS) & ((1 << (8 * width)) - 1)
            data[pos : pos + width] = value.to_bytes(width, rng.choice(("big", "little")))
        elif op == 7:  # a digit run: huge numbers in text formats
            data[pos:pos] = b"9" * rng.randint(1, 40)
    return bytes(data)


def mutations(valid: bytes, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    while True:
        yield mutate(rng, valid)


def fuzz(
    target: Callable[[bytes], object],
    valid: bytes,
    *,
    seed: int,
    budget: float = 3.0,
    at_least: int = 20,
    most: int = 5000,
    per_input: float = 5.0,
    peak_bytes: int = 64 << 20,
    inputs: Iterator[bytes] | None = None,
) -> int:
    """Feed mutations of `valid` (or `inputs`, made otherwise) to `target` for `budget`
    seconds (at most `most` inputs, at least `at_least`): each may return or raise a
    CatalogError, nothing else, within `per_input` seconds and `peak_bytes` of traced memory.
    The number of inputs tried."""
    target(valid)  # the valid input itself must pass
    started = time.monotonic()
    tried = 0
    for index, data in enumerate(inputs or mutations(valid, seed)):
        if tried >= most or (tried >= at_least and time.monotonic() - started > budget):
            break
        where = f"seed {seed}, input {index} ({len(data)} bytes: {data[:80]!r}...)"
        tracemalloc.start()
        begun = time.monotonic()
        try:
            target(data)
        except CatalogError:
            pass
        except Exception as error:
            raise AssertionError(f"{where}: {type(error).__name__}: {error}") from error
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        took = time.monotonic() - begun
        assert took < per_input, f"{where}: took {took:.2f} s"
        assert peak < peak_bytes, f"{where}: {peak >> 20} MiB traced"
        tried += 1
    return tried
