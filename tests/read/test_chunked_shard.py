"""A fresh process's first batches read only the chunks they touch (catalog/read/chunked_shard.py):
the same bytes array_record reads, on files array_record wrote, with no index parsed whole and no
array_record reader opened; a chunk whose data does not match its hash, and a file whose chunks
do not hold the dataset's group size, are left to array_record (which names the bad record)."""

from __future__ import annotations

import bisect
import pickle
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

import catalog
from catalog.api.files import files_builder
from catalog.read import chunked_shard, mapped_shard, shard_layout
from catalog.read.array_record import READER_OPTIONS
from catalog.read.chunked_shard import ChunkedShard, chunk_shard
from catalog.read.fixed_footer import FixedEntries
from catalog.read.mapped_shard import MappedShard
from catalog.read.records import CHUNKED_CALL_RECORDS
from catalog.read.shard_layout import FooterEntries, ShardFile, footer, footer_offset
from catalog.storage.chunk_hash import chunk_hash64


def write(path: Path, records: list[bytes], group: int) -> Path:
    writer = ArrayRecordWriter(str(path), f"group_size:{group},uncompressed")
    for record in records:
        writer.write(record)
    writer.close()
    return path


def records_of(sizes: list[int], seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size, dtype=np.uint8).tobytes() for size in sizes]


@pytest.fixture(params=["chunk-by-chunk", "numpy"])
def either_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads of a few chunks check them one by one, of many with NumPy: both ways here."""
    monkeypatch.setattr(chunked_shard, "FEW_CHUNKS", 1 << 30 if request.param[0] == "c" else 0)


@pytest.mark.usefixtures("either_path")
@pytest.mark.parametrize(
    "sizes",
    [
        [40] * 5000 + [3],  # table rows: many records cut by block headers, a short last chunk
        [70_000, 1, 200_000, 65_536, 3],  # records spanning several blocks
        [0, 5, 0],  # empty records
    ],
    ids=["rows", "large", "empty-records"],
)
@pytest.mark.parametrize("group", [1, 3, 16, 64])
def test_reads_what_array_record_reads(tmp_path: Path, sizes: list[int], group: int) -> None:
    records = records_of(sizes)
    path = write(tmp_path / "s.array_record", records, group)
    chunked = chunk_shard(str(path), len(records), group)
    assert isinstance(chunked, ChunkedShard)
    reader = ArrayRecordReader(str(path), READER_OPTIONS)
    assert [reader.read([i])[0] for i in range(len(records))] == records
    rng = np.random.default_rng(1)
    for _ in range(5):  # batches of random rows, repeated ones among them
        rows = rng.integers(0, len(records), 128)
        assert chunked.read(rows) == [records[i] for i in rows.tolist()]
    assert chunked.read(np.arange(len(records))) == records  # every chunk, hashed once
    assert chunked.read(np.arange(len(records))[::-1]) == records[::-1]
    chunked.close()


@pytest.mark.parametrize("claimed", [8, 32])
def test_chunks_of_another_size_are_left_to_array_record(tmp_path: Path, claimed: int) -> None:
    """Record i is in chunk i // group only when every chunk holds `group` records: a file
    written with another group size is never read by chunks (a record would be another's)."""
    path = write(tmp_path / "s.array_record", records_of([40] * 1000), 16)
    assert chunk_shard(str(path), 1000, claimed) is None
    assert chunk_shard(str(path), 999, 16) is None  # not the count its dataset records
    assert chunk_shard(str(path), 1000, 16) is not None


def varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


def test_an_index_of_chunks_of_mixed_sizes_is_left_to_array_record(tmp_path: Path) -> None:
    """The footer of a file of groups of 4 edited to say chunks of 3 and 5 records first: the
    same number of chunks and records, and the chunk of rows 8-11 still says 4, but every
    entry's count is checked, so no row is taken from the wrong chunk."""
    path = write(tmp_path / "s.array_record", records_of([40] * 16), 4)
    assert chunk_shard(str(path), 16, 4) is not None
    rows = footer(ShardFile(path.read_bytes()))[0].tolist()
    blob = path.read_bytes()
    for (offset, size, count), new in zip(rows[:2], (3, 5), strict=False):
        entry = b"\x08" + varint(offset) + b"\x10" + varint(size) + b"\x18" + varint(count)
        assert blob.count(entry) == 1
        blob = blob.replace(entry, entry[:-1] + bytes([new]))
    # the footer's hashes made right again, as a writer of such a file would have them
    at = footer_offset(ShardFile(blob))
    data = ShardFile(blob)._chunk(at).data
    hash64 = chunk_hash64()
    patched = bytearray(blob)
    patched[at + 16 : at + 24] = hash64(data).to_bytes(8, "little")
    patched[at : at + 8] = hash64(bytes(patched[at + 8 : at + 40])).to_bytes(8, "little")
    path.write_bytes(bytes(patched))
    assert ArrayRecordReader(str(path), READER_OPTIONS).num_records() == 16  # a valid file
    assert chunk_shard(str(path), 16, 4) is None


def test_a_flipped_bit_in_the_footer_is_caught_by_its_hash(tmp_path: Path) -> None:
    """A chunk offset changed in the index: the footer no longer matches its chunk hash, so
    the file is left to array_record (which reports it) instead of read from elsewhere."""
    path = write(tmp_path / "s.array_record", records_of([40] * 2000), 16)
    offset, size, count = footer(ShardFile(path.read_bytes()))[0][5].tolist()
    entry = b"\x08" + varint(offset) + b"\x10" + varint(size) + b"\x18" + varint(count)
    blob = path.read_bytes()
    assert blob.count(entry) == 1
    path.write_bytes(blob.replace(entry, entry[:1] + varint(offset ^ 0x40)[:1] + entry[2:]))
    assert chunk_shard(str(path), 2000, 16) is None


@pytest.mark.usefixtures("either_path")
def test_a_flipped_bit_is_caught_by_the_chunk_hash(tmp_path: Path) -> None:
    records = records_of([40] * 2000)
    path = write(tmp_path / "s.array_record", records, 16)
    blob = bytearray(path.read_bytes())
    at = blob.find(records[1000])
    blob[at + 7] ^= 0x10
    path.write_bytes(bytes(blob))
    chunked = chunk_shard(str(path), 2000, 16)
    assert chunked is not None
    assert chunked.read([5, 1999]) == [records[5], records[1999]]
    assert chunked.read([5, 1001]) is None  # the chunk of record 1000 (and 1001)
    assert chunked.failed and chunked.read([5]) is None  # not read by chunks again


def test_a_shard_truncated_while_mapped_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = write(tmp_path / "s.array_record", records_of([40] * 2000), 16)
    chunked = chunk_shard(str(path), 2000, 16)
    assert chunked is not None
    with path.open("r+b") as file:
        file.truncate(1000)
    with pytest.raises(catalog.ShardError, match="truncated while it was being read"):
        chunked.read([1999])


NAMES = ["ant", "bee", "cat", "dog", "eel", "fox", "gnu"]


def row(i: int) -> dict[str, Any]:
    return {"id": i, "name": NAMES[i % 7] * (1 + i % 3)}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> catalog.DataSource:
    """A table of short rows in three shards (their chunks hold 32 rows each)."""
    root = tmp_path_factory.mktemp("chunked")
    lines = ["id,name"] + [f"{r['id']},{r['name']}" for r in map(row, range(30_000))]
    (root / "t.csv").write_text("\n".join(lines) + "\n")
    builder = files_builder(root / "t.csv", "t", data_dir=root / "data")
    builder.download_and_prepare(shard_size=200_000)
    ds = builder.as_data_source("train")
    assert len(ds.info.splits["train"].shards) >= 3
    return ds


def fresh(ds: catalog.DataSource) -> catalog.DataSource:
    """The source as a new process has it (nothing opened)."""
    copy: catalog.DataSource = pickle.loads(pickle.dumps(ds))
    return copy


@pytest.mark.usefixtures("either_path")
@pytest.mark.parametrize("header", ["num_records", "decoded_data_size", "chunk_type", "data_size"])
def test_a_chunk_header_that_differs_from_its_entry_is_left_to_array_record(
    tmp_path: Path, header: str
) -> None:
    records = records_of([40] * 2000)
    path = write(tmp_path / "s.array_record", records, 16)
    offset = footer(ShardFile(path.read_bytes()))[0][70][0]  # chunk 70: rows 1120-1135
    blob = bytearray(path.read_bytes())
    at = offset if offset % (1 << 16) else offset + 24  # a chunk at a block's start: after
    field = {"num_records": at + 25, "decoded_data_size": at + 32, "chunk_type": at + 24,
             "data_size": at + 14}  # fmt: skip
    blob[field[header]] ^= 0x01  # (data_size: 2^48 bytes more)
    path.write_bytes(bytes(blob))
    chunked = chunk_shard(str(path), 2000, 16)
    assert chunked is not None
    assert chunked.read([5, 1999]) == [records[5], records[1999]]
    assert chunked.read([1121]) is None and chunked.failed


def test_a_fresh_sources_first_batches_open_no_reader(
    table: catalog.DataSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = fresh(table)
    rows = np.random.default_rng(0).integers(0, len(ds), 128).tolist()
    decoded: list[int] = []  # footer entries decoded, per call
    spans_of = FixedEntries.spans

    def counting(self: FixedEntries, chunks: list[int]) -> list[tuple[int, int, int, int]]:
        decoded.append(len(chunks))
        return spans_of(self, chunks)

    def whole(*args: Any) -> None:
        raise AssertionError("a shard's whole footer was decoded")

    monkeypatch.setattr(FixedEntries, "spans", counting)
    monkeypatch.setattr(FooterEntries, "__init__", whole)  # catalog's shards: nor hashed
    monkeypatch.setattr(mapped_shard, "footer", whole)
    monkeypatch.setattr(shard_layout, "footer", whole)
    batch = ds.__getitems__(rows)
    # the entries of the chunks the batch touches, no more (a shard holds ~300 chunks)
    starts, group = ds._records._starts, ds._records._group
    shards = [bisect.bisect_right(starts, r) - 1 for r in rows]
    touched = {(s, (r - starts[s]) // group) for r, s in zip(rows, shards, strict=True)}
    assert len(decoded) == len(set(shards)) == len(ds.info.splits["train"].shards)
    assert sum(decoded) == len(touched) < 128
    monkeypatch.undo()
    assert [(int(e["id"]), e["name"]) for e in batch] == [(i, row(i)["name"]) for i in rows]
    records = ds._records
    assert all(r is None for r in records.readers)  # array_record parses no index
    assert all(isinstance(c, ChunkedShard) for c in records.chunked)
    assert all(m is None for m in records.maps)  # no shard hashed whole either


def test_a_shards_reader_takes_over_after_its_first_batches_and_its_map_after_a_16th(
    table: catalog.DataSource,
) -> None:
    """Batches by chunks until they cost about what opening array_record's reader does
    (`CHUNKED_CALL_RECORDS`), then the reader; the whole shard's map after a sixteenth."""
    ds = fresh(table)
    held = ds.info.splits["train"].shards[0].num_examples
    records = ds._records
    for k in range(-(-held // CHUNKED_CALL_RECORDS)):
        assert int(ds.__getitems__([k, held - 1 - k])[0]["id"]) == k
    assert records.readers[0] is None
    ds.__getitems__([5, 6])
    assert isinstance(records.readers[0], ArrayRecordReader)
    ds.__getitems__(list(range(held // 16)))
    assert isinstance(records.maps[0], MappedShard)
    every = ds.__getitems__(list(range(held)))
    assert [int(e["id"]) for e in every] == list(range(held))


def test_iteration_and_pipelines_read_the_same_rows(table: catalog.DataSource) -> None:
    ds = fresh(table)
    assert [int(e["id"]) for e in ds[100:3000]] == list(range(100, 3000))
    seen = [int(i) for b in catalog.pipeline(fresh(table)).shuffle(3).batch(500) for i in b["id"]]
    assert sorted(seen) == list(range(len(table)))


def test_a_flipped_bit_in_a_fresh_source_names_the_record(
    table: catalog.DataSource, tmp_path: Path
) -> None:
    """The chunk whose data no longer matches its hash is not read by chunks: array_record
    reads the batch and names the record; the other shards are still read by chunks."""
    copy = tmp_path / "copy"
    assert isinstance(table.path, Path)
    shutil.copytree(table.path, copy)
    shard = copy / table.info.splits["train"].shards[1].file
    start = table._records._starts[1]
    blob = bytearray(shard.read_bytes())
    name = row(start + 40)["name"].encode()
    at = blob.find(name, blob.find((start + 40).to_bytes(8, "little")))
    blob[at] ^= 0x01
    shard.write_bytes(bytes(blob))
    ds = catalog.DataSource(copy, table.info, "train")
    with pytest.raises(catalog.ShardError, match=rf"{shard.name}\b.*record 40 cannot be read"):
        ds.__getitems__([3, start + 40])
    assert isinstance(ds._records.chunked[0], ChunkedShard)
    assert int(ds.__getitems__([start + 100])[0]["id"]) == start + 100
