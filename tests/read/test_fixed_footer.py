"""`catalog.read.fixed_footer.FixedEntries` opens the footer of a shard catalog's writer wrote
without decoding or hashing its entries, gives each chunk's entry as the whole footer's parse
does, and takes no chunk for another: every bit of an entry flipped is caught, by itself or by
`locate`'s check of the chunk header against the entry; a footer of entries of several widths
(array_record's own) is not taken."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from array_record.python.array_record_module import ArrayRecordWriter

from catalog.read import fixed_footer
from catalog.read.chunked_shard import chunk_shard
from catalog.read.fixed_footer import FixedEntries
from catalog.read.mapped_shard import locate
from catalog.read.shard_layout import NotLaidOut, ShardFile, footer, physical
from catalog.storage.chunk_hash import chunk_hash64
from catalog.storage.shard_writer import ShardWriter


def _records(seed: int, count: int, widest: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [
        rng.integers(0, 256, int(n), dtype=np.uint8).tobytes()
        for n in rng.integers(0, widest, count)
    ]


def _written(path: Path, records: list[bytes], group: int) -> np.ndarray:
    with ShardWriter(path, f"group_size:{group},uncompressed,max_parallelism:1") as writer:
        writer.write_many(records)
    return np.fromfile(path, np.uint8)


@pytest.mark.parametrize(
    ("seed", "count", "group", "widest"),
    [
        (0, 1, 16, 10),
        (1, 17, 16, 10),
        (2, 40_000, 16, 60),
        (3, 9_000, 2, 300),
        (4, 3_000, 64, 2_000),
    ],
)
def test_every_entry_as_the_whole_footer_gives_it(
    tmp_path: Path, seed: int, count: int, group: int, widest: int, path: str
) -> None:
    array = _written(tmp_path / "s", _records(seed, count, widest), group)
    rows, _ = footer(ShardFile(array.data))
    entries = FixedEntries(array, group, count, chunk_hash64())
    assert len(entries) == len(rows)
    assert entries.rows(np.arange(len(rows))).tolist() == rows.tolist()
    picked = np.array([len(rows) - 1, 0, len(rows) // 2])
    assert entries.rows(picked).tolist() == rows[picked].tolist()
    located = locate(array, entries.rows(np.arange(len(rows))))  # the chunks match them
    assert len(located.starts) == count


def test_another_shards_counts_or_a_footer_of_several_widths_is_not_taken(tmp_path: Path) -> None:
    records = _records(5, 5_000, 60)
    array = _written(tmp_path / "s", records, 16)
    with pytest.raises(NotLaidOut):
        FixedEntries(array, 16, len(records) - 1, chunk_hash64())
    with pytest.raises(NotLaidOut):
        FixedEntries(array, 8, len(records), chunk_hash64())
    theirs = ArrayRecordWriter(str(tmp_path / "a"), "group_size:16,uncompressed,max_parallelism:1")
    for record in records:
        theirs.write(record)
    theirs.close()
    with pytest.raises(NotLaidOut, match="widths"):  # offsets of 1 to 3 bytes
        FixedEntries(np.fromfile(tmp_path / "a", np.uint8), 16, len(records), chunk_hash64())


@pytest.fixture(params=["python", "numpy"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """`FixedEntries.rows` reads a few entries in Python ints, many with NumPy: both checked."""
    monkeypatch.setattr(fixed_footer, "_FEW", 48 if request.param == "python" else 0)
    return str(request.param)


@pytest.mark.parametrize("sizes", ["varied", "all alike"])
def test_every_bit_of_an_entry_flipped_is_caught(tmp_path: Path, sizes: str, path: str) -> None:
    """No flipped bit of chunk k's entry (offset, decoded size, count, tags) gives rows that
    `locate` accepts: the chunk is never read from another place, even where every chunk has
    the same size and records (only where it ends tells them apart)."""
    records = _records(6, 6_000, 90) if sizes == "varied" else [b"0123456789"] * 60_000
    clean = _written(tmp_path / "s", records, 16)
    rows, _ = footer(ShardFile(clean.data))
    entries = FixedEntries(clean, 16, len(records), chunk_hash64())
    k = len(rows) // 3
    first = entries._first + k * entries._width  # the entry's usable-byte coordinate
    for byte in range(entries._width):
        position = int(physical(first + byte))
        for bit in range(8):
            flipped = clean.copy()
            flipped[position] ^= 1 << bit
            try:
                opened = FixedEntries(flipped, 16, len(records), chunk_hash64())
                found = opened.rows(np.array([k - 1, k]))
                locate(flipped, found)
            except NotLaidOut:
                continue
            pytest.fail(f"byte {byte} bit {bit} of the entry flipped went unnoticed: {found}")


def test_an_entry_pointing_at_the_next_chunk_is_caught(tmp_path: Path, path: str) -> None:
    """Chunks all alike (same records, same size): an entry holding the next chunk's offset
    (written over by a copy of its neighbour) passes every check of the chunk header; where
    that chunk ends (where the entry after begins) tells it apart."""
    records = [b"0123456789"] * 4_000
    array = _written(tmp_path / "s", records, 16)
    entries = FixedEntries(array, 16, len(records), chunk_hash64())
    k, width = 5, entries._width
    first = entries._first + k * width
    entry = [int(physical(first + i)) for i in range(2 * width)]
    array[entry[:width]] = array[entry[width:]]  # entry k := entry k + 1
    with pytest.raises(NotLaidOut, match="does not end"):
        FixedEntries(array, 16, len(records), chunk_hash64()).rows(np.array([k]))


def _first_batch(array: np.ndarray, path: Path, count: int, rows: list[int]) -> list[bytes] | None:
    """`rows` as a fresh process's batch reads them from the shard `array` (written to `path`):
    chunk by chunk from `FixedEntries.bounds`, each chunk read in one piece with its header;
    None when it was left to array_record."""
    array.tofile(path)
    chunked = chunk_shard(str(path), count, 16)
    if chunked is None or not isinstance(chunked._entries, FixedEntries):
        return None
    try:
        return chunked.read(rows)
    finally:
        chunked.close()


@pytest.mark.parametrize("sizes", ["varied", "all alike"])
def test_every_bit_of_an_entry_flipped_is_caught_by_a_batch_read(
    tmp_path: Path, sizes: str
) -> None:
    """The batch read (`ChunkedShard`'s few-chunk path) never returns records from another
    place than chunk k's: with any bit of its entry flipped it returns chunk k's own records
    or leaves the shard to array_record."""
    records = _records(6, 3_000, 90) if sizes == "varied" else [b"0123456789"] * 3_000
    clean = _written(tmp_path / "s", records, 16)
    entries = FixedEntries(clean, 16, len(records), chunk_hash64())
    k = len(entries) // 3
    rows = [16 * (k - 1) + 3, 16 * k, 16 * k + 15]
    want = [records[i] for i in rows]
    assert _first_batch(clean, tmp_path / "c", len(records), rows) == want
    first = entries._first + k * entries._width
    for byte in range(entries._width):
        position = int(physical(first + byte))
        for bit in range(8):
            flipped = clean.copy()
            flipped[position] ^= 1 << bit
            got = _first_batch(flipped, tmp_path / f"f{byte}-{bit}", len(records), rows)
            assert got in (None, want), f"byte {byte} bit {bit} of the entry flipped: {got}"


def test_an_entry_pointing_at_the_next_chunk_is_caught_by_a_batch_read(tmp_path: Path) -> None:
    records = [b"0123456789"] * 4_000
    array = _written(tmp_path / "s", records, 16)
    entries = FixedEntries(array, 16, len(records), chunk_hash64())
    k, width = 5, entries._width
    rows = [16 * k + 1]
    assert _first_batch(array, tmp_path / "c", len(records), rows) == [records[16 * k + 1]]
    first = entries._first + k * width
    entry = [int(physical(first + i)) for i in range(2 * width)]
    array[entry[:width]] = array[entry[width:]]  # entry k := entry k + 1
    assert _first_batch(array, tmp_path / "d", len(records), rows) is None
