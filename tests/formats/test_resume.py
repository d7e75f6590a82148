"""`catalog.formats.resume.Resumed`: ranges read one after the other go on reading one stream
(a worker given units 0, 2, 4 of a split reads it once); any other range, another key or a
file changed on disk opens a new one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from catalog.formats.resume import Cursor, Resumed, stamp


class Numbers:
    """Streams of chunks of numbers ``[start, start + 1, ...]`` from a position, counted."""

    def __init__(self, chunk: int, total: int) -> None:
        self.opened: list[int] = []
        self.read = 0
        self.chunk, self.total = chunk, total

    def __call__(self, key: object, cursor: Cursor) -> Iterator[list[int]]:
        start = cursor.start
        self.opened.append(start)
        for at in range(start, self.total, self.chunk):
            part = list(range(at, min(at + self.chunk, self.total)))
            self.read += len(part)
            yield part


def _resumed(numbers: Numbers, ahead: bool = True) -> Resumed[list[int]]:
    return Resumed(
        numbers,
        size=len,
        cut=lambda item, n: (item[:n], item[n:]),
        ahead=lambda _: ahead,
        files=lambda key: key,
    )


def _flat(parts: Iterator[list[int]]) -> list[int]:
    return [n for part in parts for n in part]


def test_consecutive_and_later_ranges_read_one_stream() -> None:
    numbers = Numbers(7, 100)
    resumed = _resumed(numbers)
    ranges = [(0, 10), (10, 25), (40, 55), (55, 100)]  # a worker's units: 0, 1, 3, 4
    for start, stop in ranges:
        assert _flat(resumed("k", start, stop)) == list(range(start, stop))
    assert numbers.opened == [0] and numbers.read == 100
    assert _flat(resumed("k", 5, 8)) == [5, 6, 7]  # before the stream's position: a new one
    assert numbers.opened == [0, 5]


def test_another_key_a_gap_without_ahead_or_an_unfinished_range_opens_a_new_stream() -> None:
    numbers = Numbers(4, 50)
    resumed = _resumed(numbers, ahead=False)
    assert _flat(resumed("k", 0, 10)) == list(range(10))
    assert _flat(resumed("other", 10, 12)) == [10, 11]
    assert _flat(resumed("other", 20, 22)) == [20, 21]  # no skipping ahead
    parts = resumed("other", 22, 30)  # where the last one stopped: resumed
    next(parts)  # left unfinished (its reader failed): not resumed
    assert _flat(resumed("other", 30, 31)) == [30]
    assert numbers.opened == [0, 10, 20, 30]
    assert _flat(resumed("k", 45, 60)) == list(range(45, 50))  # past the end: what there is


def test_a_changed_file_opens_a_new_stream(tmp_path: Path) -> None:
    file = tmp_path / "data.bin"
    file.write_bytes(b"abc")
    numbers = Numbers(5, 30)
    resumed = _resumed(numbers)
    key = (file,)
    assert _flat(resumed(key, 0, 3)) == [0, 1, 2]
    before = stamp(key)
    file.write_bytes(b"abcd")
    os.utime(file, ns=(1, 1))
    assert stamp(key) != before
    assert _flat(resumed(key, 3, 6)) == [3, 4, 5]
    assert numbers.opened == [0, 3]


def test_an_item_longer_than_a_range_without_cut_is_refused() -> None:
    resumed: Resumed[list[int]] = Resumed(Numbers(10, 30), size=len)
    with pytest.raises(ValueError, match="cannot be cut"):
        _flat(resumed("k", 0, 5))
