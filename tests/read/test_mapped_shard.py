"""Batched reads through memory maps (catalog/read/mapped_shard.py): the same bytes array_record
reads, on files written by array_record itself; everything else (and any shard whose sha256 is
not the recorded one) is left to array_record; and a DataSource whose column batches,
iteration and pipelines go through the maps."""

from __future__ import annotations

import dataclasses
import hashlib
import multiprocessing
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

import catalog
from catalog.api.files import files_builder
from catalog.read.array_record import READER_OPTIONS
from catalog.read.mapped_shard import MappedShard, _pick, map_shard
from catalog.read.shard_layout import _USABLE, BLOCK, NotLaidOut, join_pieces, usable
from catalog.storage.shards import WRITER_OPTIONS
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels
from tests.photos import photo

from conftest import idx_builder


def write(path: Path, records: list[bytes], options: str = WRITER_OPTIONS) -> Path:
    writer = ArrayRecordWriter(str(path), options)
    for record in records:
        writer.write(record)
    writer.close()
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def records_of(sizes: list[int], seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size, dtype=np.uint8).tobytes() for size in sizes]


@pytest.mark.parametrize(
    "sizes",
    [
        [786] * 3000,  # Fashion-MNIST-sized: dozens of records cut by a block header
        [70_000, 1, 200_000, 65_536, 3],  # records spanning several blocks
        [1] * 10,
        [0, 5, 0],  # empty records
        [],
    ],
    ids=["small", "large", "tiny", "empty-records", "no-records"],
)
@pytest.mark.parametrize("group", [1, 3, 16])
def test_reads_what_array_record_reads(tmp_path: Path, sizes: list[int], group: int) -> None:
    """Records alone in their chunks or sharing them (group_size > 1), as catalog writes
    small ones: every read gives array_record's bytes."""
    records = records_of(sizes)
    path = write(tmp_path / "s.array_record", records, f"group_size:{group},uncompressed")
    mapped = map_shard(str(path), len(records), sha(path))
    assert isinstance(mapped, MappedShard)
    reader = ArrayRecordReader(str(path), READER_OPTIONS)
    assert [reader.read([i])[0] for i in range(len(records))] == records
    order = np.random.default_rng(1).permutation(len(records))
    assert mapped.read(order) == [records[i] for i in order.tolist()]
    if sizes and len(set(sizes)) == 1:
        rows = mapped.gather(order, sizes[0])
        assert rows is not None and rows.shape == (len(records), sizes[0])
        assert [row.tobytes() for row in rows] == [records[i] for i in order.tolist()]
        assert rows.flags.writeable
    if len(set(sizes)) > 1:
        assert mapped.gather(order, sizes[0]) is None  # sizes differ: one by one instead
    mapped.close()


def test_pieced_records_are_put_together(tmp_path: Path) -> None:
    records = records_of([786] * 3000, seed=2)
    path = write(tmp_path / "s.array_record", records)
    mapped = map_shard(str(path), 3000, sha(path))
    assert mapped is not None
    pieced = sorted(mapped._pieced_at)
    assert len(pieced) > 20  # a block header every 64 KiB cuts about one record in 83
    assert mapped.read(pieced) == [records[i] for i in pieced]


@pytest.mark.parametrize("options", ["group_size:1", "group_size:4", "group_size:1,snappy"])
def test_other_layouts_are_left_to_array_record(tmp_path: Path, options: str) -> None:
    path = write(tmp_path / "s.array_record", records_of([100] * 50), options)
    assert map_shard(str(path), 50, sha(path)) is None


def test_foreign_short_and_miscounted_files_are_not_mapped(tmp_path: Path) -> None:
    path = write(tmp_path / "s.array_record", records_of([100] * 50))
    assert map_shard(str(path), 49, sha(path)) is None
    assert map_shard(str(path), 50, "0" * 64) is None  # not the content its dataset records
    assert map_shard(str(path), 50, sha(path)) is not None
    garbage = tmp_path / "garbage"
    garbage.write_bytes(os.urandom(200_000))
    assert map_shard(str(garbage), 1, sha(garbage)) is None
    cut = tmp_path / "cut"
    cut.write_bytes(path.read_bytes()[:-1000])
    assert map_shard(str(cut), 50, sha(cut)) is None
    (tmp_path / "tiny").write_bytes(b"x")
    assert map_shard(str(tmp_path / "tiny"), 1, sha(tmp_path / "tiny")) is None
    with pytest.raises(catalog.ShardError, match="missing"):
        map_shard(str(tmp_path / "missing"), 1, "0" * 64)


COUNT = 3000
IMAGES = pattern_images(COUNT)[..., None]
LABELS = pattern_labels(COUNT)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> catalog.DataSource:
    """A train split in several shards (and a test split after it in the flat space)."""
    tmp = tmp_path_factory.mktemp("mapped")
    with LoopbackServer() as server:
        folder = idx_builder(tmp, server, COUNT)
        builder = catalog.builder(folder, data_dir=tmp / "data")
        builder.download_and_prepare(shard_size=900_000)
    ds = builder.as_data_source("train")
    assert len(ds.info.splits["train"].shards) >= 3
    return ds


def test_batches_iteration_and_pipelines_read_through_the_maps(
    sharded: catalog.DataSource,
) -> None:
    ds = sharded
    order = np.random.default_rng(3).permutation(COUNT)
    batch = ds.read_batch(order)
    assert batch is not None
    assert all(isinstance(m, MappedShard) for m in ds._records.maps)  # every shard was mapped
    np.testing.assert_array_equal(batch["image"], IMAGES[order])
    np.testing.assert_array_equal(batch["label"], LABELS[order])
    assert batch["image"].flags.writeable and batch["image"].flags.c_contiguous
    labels = [example["label"] for example in ds]
    assert labels == LABELS.tolist()
    view = ds[10:2000:7]
    np.testing.assert_array_equal(view.read_batch(range(len(view)))["image"], IMAGES[10:2000:7])
    seen = np.concatenate([b["label"] for b in catalog.pipeline(ds).shuffle(5).batch(128)])
    assert sorted(seen.tolist()) == sorted(LABELS.tolist())


def test_warm_opens_and_maps_every_shard_before_the_first_read(
    sharded: catalog.DataSource,
) -> None:
    fresh = pickle.loads(pickle.dumps(sharded))  # what a worker process gets: nothing open
    assert all(m is None for m in fresh._records.maps) and all(
        r is None for r in fresh._records.readers
    )
    fresh.warm(batched=False)  # per-example reads only need the readers
    assert all(r is not None for r in fresh._records.readers)
    assert all(m is None for m in fresh._records.maps)
    fresh.warm()
    assert all(isinstance(m, MappedShard) for m in fresh._records.maps)
    np.testing.assert_array_equal(fresh.read_batch([2999, 0])["image"], IMAGES[[2999, 0]])


def _child(ds: catalog.DataSource, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    batch = ds.read_batch([5, 2999, 0])
    queue.put(None if batch is None else batch["label"].tolist())


def test_a_forked_child_maps_the_shards_again(sharded: catalog.DataSource) -> None:
    assert sharded.read_batch([1, 2]) is not None  # the parent's maps are in use
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(sharded, queue))
    proc.start()
    got = queue.get(timeout=60)
    proc.join(timeout=60)
    assert proc.exitcode == 0 and got == [int(LABELS[i]) for i in (5, 2999, 0)]


def test_a_shard_truncated_while_mapped_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """Reading a mapping past the end of its file is SIGBUS; the size is checked first."""
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        import catalog
        from catalog.testing.http_server import LoopbackServer
        from conftest import idx_builder
        tmp = {str(tmp_path)!r}
        from pathlib import Path
        with LoopbackServer() as server:
            folder = idx_builder(Path(tmp), server, 2000)
            b = catalog.builder(folder, data_dir=Path(tmp) / "data")
            b.download_and_prepare()
        ds = b.as_data_source("train")
        assert ds.read_batch(list(range(0, 2000, 3))) is not None
        shard = ds.path / ds.info.splits["train"].shards[0].file
        os.truncate(shard, os.path.getsize(shard) // 2)
        try:
            ds.read_batch(list(range(1999, 0, -3)))
        except catalog.ShardError as error:
            print("ShardError:", error)
    """)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ShardError:" in result.stdout and "truncated" in result.stdout, result.stdout


def test_a_corrupt_shard_is_not_mapped_and_its_bad_record_is_named(tmp_path: Path) -> None:
    """A flipped byte in a record: the shard's sha256 no longer matches, so batches are read
    through array_record, whose chunk hashes name the record; the others still read."""
    with LoopbackServer() as server:
        folder = idx_builder(tmp_path, server, 200)
        builder = catalog.builder(folder, data_dir=tmp_path / "data")
        builder.download_and_prepare()
    ds = builder.as_data_source("train")
    shard = ds.path / ds.info.splits["train"].shards[0].file
    blob = bytearray(shard.read_bytes())
    images = pattern_images(200)
    at = next(a for k in range(100, 200) if (a := blob.find(images[k].tobytes())) > 0)
    blob[at + 5] ^= 0xFF
    shard.write_bytes(bytes(blob))
    fresh = catalog.DataSource(ds.path, ds.info, "train")
    with pytest.raises(catalog.ShardError, match=r"record 1\d\d cannot be read"):
        fresh.read_batch(list(range(200)))
    with pytest.raises(catalog.ShardError, match=r"record 1\d\d cannot be read"):
        list(catalog.pipeline(fresh).batch(50))
    assert not any(isinstance(m, MappedShard) for m in fresh._records.maps)
    batch = fresh.read_batch(list(range(100)))
    assert batch is not None
    np.testing.assert_array_equal(batch["label"], pattern_labels(200)[:100])


def test_a_record_that_does_not_decode_is_named_with_the_fix(tmp_path: Path) -> None:
    """A shard whose framing is sound but one record is a byte short (as if another tool
    wrote it): every way of reading names the shard and the record, and says what to run."""
    with LoopbackServer() as server:
        folder = idx_builder(tmp_path, server, 40)
        builder = catalog.builder(folder, data_dir=tmp_path / "data")
        builder.download_and_prepare()
    ds = builder.as_data_source("train")
    split = ds.info.splits["train"]
    shard = ds.path / split.shards[0].file
    records = [bytes(r) for r in ArrayRecordReader(str(shard), READER_OPTIONS).read_all()]
    records[7] = records[7][:-1]
    shard.unlink()
    write(shard, records)
    fixed = dataclasses.replace(split.shards[0], num_bytes=shard.stat().st_size, sha256=sha(shard))
    info = dataclasses.replace(
        ds.info,
        splits={**ds.info.splits, "train": dataclasses.replace(split, shards=(fixed,))},
    )
    fresh = catalog.DataSource(ds.path, info, "train")
    assert fresh[6]["label"] == int(LABELS[6])
    for read in (
        lambda: fresh[7],
        lambda: fresh[[1, 7]],
        lambda: fresh.read_batch(list(range(40))),
        lambda: list(catalog.pipeline(fresh).batch(8)),
    ):
        with pytest.raises(catalog.SourceFormatError) as info_:
            read()
        message = str(info_.value)
        assert f"{shard}: record 7 (split 'train') cannot be decoded" in message, message
        assert f"catalog prepare {ds.info.name} --overwrite" in message


def _count_hashing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A list that grows by one each time `map_shard` hashes a whole shard, from here on."""
    hashed: list[str] = []
    real_sha256 = hashlib.sha256

    def counting(data: Any) -> Any:
        hashed.append("x")
        return real_sha256(data)

    monkeypatch.setattr("catalog.read.mapped_shard.hashlib.sha256", counting)
    return hashed


def _rewrite(path: Path, data: bytes) -> None:
    """Write `data` over `path` in place until its ctime has moved (the file system's clock
    has a coarse tick: a write within the tick of the last one can leave it as it was)."""
    before = path.stat().st_ctime_ns
    for _ in range(100_000):
        path.write_bytes(data)
        if path.stat().st_ctime_ns != before:
            return
    pytest.fail(f"{path}'s ctime did not move")


def test_a_copy_maps_what_its_original_verified_without_hashing_again(
    sharded: catalog.DataSource, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Pickled after its shards were mapped (as a pipeline's workers get it), a DataSource
    maps them without parsing or hashing; a shard changed since then is verified afresh."""
    # every record read: maps and verifies every shard (a few rows of a fresh source are
    # read chunk by chunk, `catalog.read.chunked_shard`, and map nothing)
    assert sharded.read_batch(list(range(COUNT))) is not None
    assert all(isinstance(m, MappedShard) for m in sharded._records.maps)
    blob = pickle.dumps(sharded)
    hashed = _count_hashing(monkeypatch)
    copy = pickle.loads(blob)
    order = np.random.default_rng(5).permutation(COUNT)
    np.testing.assert_array_equal(copy.read_batch(order)["image"], IMAGES[order])
    assert hashed == [] and all(isinstance(m, MappedShard) for m in copy._records.maps)
    # the same bytes, but the file was replaced: verified again before it is trusted
    first = copy.path / copy.info.splits["train"].shards[0].file
    os.utime(first, ns=(first.stat().st_atime_ns, first.stat().st_mtime_ns + 1000))
    again = pickle.loads(blob)
    np.testing.assert_array_equal(again.read_batch(order)["image"], IMAGES[order])
    assert hashed == ["x"]


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> catalog.DataSource:
    """JPEG bytes of many sizes (some over a 64 KiB block, so stored in pieces), kept
    encoded, in several shards."""
    tmp = tmp_path_factory.mktemp("photos")
    for i in range(60):
        side = 40 + (i * 37) % 300
        path = tmp / "photos" / f"class{i % 3}" / f"{i:03d}.jpg"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(photo(side, side + i, seed=i, quality=95))
    builder = files_builder(tmp / "photos", "photos", data_dir=tmp / "data")
    builder.download_and_prepare(shard_size=600_000)
    ds = builder.as_data_source("train", decoders={"image": False})
    assert len(ds.info.splits["train"].shards) >= 3
    return ds


def test_records_of_many_sizes_are_read_through_the_maps(photos: catalog.DataSource) -> None:
    """Batched reads and iteration of variable-size records (encoded images) take slices of
    the verified maps: the same bytes as reading each record through array_record."""
    ds = pickle.loads(pickle.dumps(photos))  # nothing open yet
    one_by_one = [ds[i]["image"] for i in range(len(ds))]  # array_record's reader per record
    assert all(m is None for m in ds._records.maps)
    assert max(len(b) for b in one_by_one) > 1 << 16  # some records span a block header
    order = np.random.default_rng(5).permutation(len(ds))
    batch = ds.__getitems__(order)
    assert all(isinstance(m, MappedShard) for m in ds._records.maps)  # every shard mapped
    assert [e["image"] for e in batch] == [one_by_one[i] for i in order]
    assert [e["image"] for e in ds] == one_by_one  # iteration: range reads of the maps
    seen = [b for b in catalog.pipeline(ds).shuffle(1).batch(7).prefetch(0) for b in b["image"]]
    assert sorted(seen) == sorted(one_by_one)


def test_records_of_many_sizes_map_a_shard_only_once_a_sixteenth_was_read(
    photos: catalog.DataSource,
) -> None:
    """Mapping hashes the whole shard first: a few reads (`catalog show`) go through
    array_record; once 8 of a shard's ~20 records were read in batches, it is mapped."""
    ds = pickle.loads(pickle.dumps(photos))
    ds.__getitems__(list(range(4)))
    ds.__getitems__(list(range(4, 7)))
    assert ds._records.maps[0] is None  # 7 read: not worth hashing the shard yet
    assert [e["image"] for e in ds.__getitems__([7, 0])] == [photos[7]["image"], photos[0]["image"]]
    assert isinstance(ds._records.maps[0], MappedShard)
    assert all(m is None for m in ds._records.maps[1:])


def test_a_corrupt_shard_of_variable_records_is_not_mapped_and_names_the_record(
    photos: catalog.DataSource, tmp_path: Path
) -> None:
    """A flipped byte inside one JPEG: the shard's sha256 differs, so its batches go through
    array_record, whose chunk hashes name that record; the other shards are still mapped."""
    copy = tmp_path / "copy"
    shutil.copytree(photos.path, copy)
    shard = copy / photos.info.splits["train"].shards[1].file
    first = photos.__getitems__([photos._records._starts[1]])[0]["image"]
    blob = bytearray(shard.read_bytes())
    at = blob.find(first)
    assert at > 0
    blob[at + len(first) // 2] ^= 0xFF
    shard.write_bytes(bytes(blob))
    fresh = catalog.DataSource(copy, photos.info, "train", decoders={"image": False})
    start, stop = photos._records._starts[1:3]
    with pytest.raises(catalog.ShardError, match=rf"{shard.name}\b.*record 0 cannot be read"):
        fresh.__getitems__(list(range(start)) + list(range(start, stop)))  # whole shards
    assert fresh._records.maps[1] is not None  # tried,
    assert not isinstance(fresh._records.maps[1], MappedShard)  # and refused
    assert isinstance(fresh._records.maps[0], MappedShard)
    assert fresh.__getitems__([start + 1])[0]["image"] == photos[start + 1]["image"]


@pytest.mark.parametrize("seed", range(6))
def test_picked_runs_are_the_bytes_between_the_block_headers(seed: int) -> None:
    """`_pick` (runs of bytes at usable-byte coordinates, gathered as rows of a window) gives
    what joining the pieces one run at a time gives: runs interrupted by a block header, runs
    ending at the file's end, empty runs, runs of very unlike sizes (gathered byte by byte)."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(3, 9)) * BLOCK + int(rng.integers(0, BLOCK))
    array = rng.integers(0, 256, size, dtype=np.uint8)
    usable_size = int(usable(np.int64(size)))
    widest = [3, 43, 700, 20_000, 3, 43][seed]
    counts = rng.integers(0, widest + 1, 3000).astype(np.int64)
    if seed >= 4:  # a few long runs among short ones: the byte-by-byte path
        counts[rng.integers(0, len(counts), 5)] = 30_000
    starts = rng.integers(0, usable_size - counts + 1).astype(np.int64)
    starts[:20] = usable_size - counts[:20]  # runs ending at the end of the file
    edge = np.arange(1, 21) * _USABLE - counts[20:40] // 2  # runs across a block header
    starts[20:40] = np.clip(edge, 0, usable_size - counts[20:40])
    want = b"".join(join_pieces(array, int(a), int(n)) for a, n in zip(starts, counts, strict=True))
    assert _pick(array, starts, counts).tobytes() == want
    past = starts.copy()
    past[7] = usable_size - counts[7] + 1  # one run a byte past the end
    if counts[7]:
        with pytest.raises(NotLaidOut):
            _pick(array, past, counts)


def test_a_new_source_maps_what_this_process_verified_until_a_shard_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second data source over the same files in one process (`data_source()` called again)
    maps the shards without parsing or hashing them; a shard written since (in place, even
    with the same bytes) is verified again, and one whose bytes changed is not mapped."""
    with LoopbackServer() as server:
        folder = idx_builder(tmp_path, server, 300)
        builder = catalog.builder(folder, data_dir=tmp_path / "data")
        builder.download_and_prepare()
    first = builder.as_data_source("train")
    assert first.read_batch(list(range(300))) is not None
    assert all(isinstance(m, MappedShard) for m in first._records.maps)
    hashed = _count_hashing(monkeypatch)
    order = np.random.default_rng(2).permutation(300)
    want = first.read_batch(order)
    second = catalog.DataSource(first.path, first.info, "train")
    np.testing.assert_array_equal(second.read_batch(order)["image"], want["image"])
    assert hashed == [] and all(isinstance(m, MappedShard) for m in second._records.maps)
    shard = first.path / first.info.splits["train"].shards[0].file
    blob = shard.read_bytes()
    _rewrite(shard, blob)  # the same bytes, written again: trusted only once hashed again
    third = catalog.DataSource(first.path, first.info, "train")
    np.testing.assert_array_equal(third.read_batch(order)["image"], want["image"])
    assert hashed == ["x"]
    broken = bytearray(blob)
    images = pattern_images(300)
    at = next(a for k in range(100, 300) if (a := broken.find(images[k].tobytes())) > 0)
    broken[at + 5] ^= 0xFF
    _rewrite(shard, bytes(broken))
    fourth = catalog.DataSource(first.path, first.info, "train")
    with pytest.raises(catalog.ShardError, match=r"record \d+ cannot be read"):
        fourth.read_batch(list(range(300)))
    assert not any(isinstance(m, MappedShard) for m in fourth._records.maps)
