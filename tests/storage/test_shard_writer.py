"""`catalog.storage.shard_writer.ShardWriter` writes the file array_record's writer writes with
the same options, byte for byte (``fixed_footer=False``): record sizes at every varint width,
records and chunks and footers across 64 KiB block boundaries, the padding before the
postscript in every position a block allows, one record at a time, a list at a time or packed.
With its footer entries of one width (the default, what the prepare writes) the same chunks,
the same footer values, read alike by array_record, Grain and catalog's own footer parser; a
prepared table's shards hold the chunks array_record writes from the same records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

from catalog._util.hashing import Digest
from catalog.api.files import files_builder
from catalog.read.shard_layout import ShardFile, footer
from catalog.storage.shard_writer import ShardWriter, open_shard_writer, written_group


def _array_record(path: Path, records: list[bytes], options: str) -> bytes:
    writer = ArrayRecordWriter(str(path), options)
    for record in records:
        writer.write(record)
    writer.close()
    return path.read_bytes()


def _ours(
    path: Path, records: list[bytes], options: str, how: str, seed: int = 0, fixed: bool = False
) -> bytes:
    with ShardWriter(path, options, fixed_footer=fixed) as writer:
        if how == "one":
            for record in records:
                writer.write(record)
        elif how == "list":
            writer.write_many(records)
        else:  # packed, in batches of random sizes (a chunk's records split between them)
            rng, at = np.random.default_rng(seed), 0
            while at < len(records):
                batch = records[at : at + int(rng.integers(1, 40))]
                at += len(batch)
                starts = np.concatenate([[0], np.cumsum([len(r) for r in batch])])
                writer.write_packed(b"".join(batch), starts)
        assert writer.digest is None  # not before the file is whole
    _hashed_as_written(writer, path)
    return path.read_bytes()


def _hashed_as_written(writer: ShardWriter, path: Path) -> None:
    """The digest the writer took as it wrote is the file's, read back."""
    read = Digest.of_file(path)
    assert writer.digest is not None
    assert (writer.digest.size, writer.digest.sha256) == (read.size, read.sha256)
    assert writer.digest.stamp == read.stamp is not None


def _same(tmp_path: Path, records: list[bytes], group: int, how: str, seed: int = 0) -> None:
    options = f"group_size:{group},uncompressed,max_parallelism:1"
    want = _array_record(tmp_path / "theirs", records, options)
    got = _ours(tmp_path / "ours", records, options, how, seed)
    if got != want:
        first = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None)
        pytest.fail(f"{len(got)} vs {len(want)} bytes, first difference at {first}")
    _same_but_the_footers_widths(tmp_path, records, options, how, seed, want)


def _same_but_the_footers_widths(
    tmp_path: Path, records: list[bytes], options: str, how: str, seed: int, want: bytes
) -> None:
    """The fixed-width footer: the chunks as array_record's, the footer's values too, every
    entry of one width, and array_record reads the file."""
    got = _ours(tmp_path / "fixed", records, options, how, seed, fixed=True)
    rows, at = footer(ShardFile(memoryview(got)))
    want_rows, want_at = footer(ShardFile(memoryview(want)))
    assert at == want_at and got[:at] == want[:at]
    assert rows.tolist() == want_rows.tolist()
    _, sizes, _ = ShardFile(memoryview(got)).simple_chunk(at)
    assert len(set(sizes[1:])) <= 1  # every entry (after the metadata) of one width
    reader = ArrayRecordReader(str(tmp_path / "fixed"))
    try:
        assert reader.num_records() == len(records)
        if records:
            assert reader.read_all() == records
    finally:
        reader.close()


@pytest.mark.parametrize("how", ["one", "list", "packed"])
@pytest.mark.parametrize(
    "records",
    [[], [b""], [b"a"], [b"a", b"bb", b"ccc", b"dddd", b"eeeee"], [b""] * 37],
    ids=["none", "empty", "one", "five", "empties"],
)
def test_small_files_are_array_records_bytes(
    tmp_path: Path, records: list[bytes], how: str
) -> None:
    _same(tmp_path, records, 2, how)


@pytest.mark.parametrize("seed", range(12))
def test_random_records_are_array_records_bytes(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    widest = [2, 130, 17_000, 70_000][seed % 4]  # varints of 1-3 bytes, records over a block
    sizes = rng.integers(0, widest, int(rng.integers(1, 2500 if widest < 20_000 else 40)))
    sizes[rng.random(len(sizes)) < 0.05] = 0
    records = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in sizes]
    group = [2, 3, 16, 64, 300][seed % 5]
    _same(tmp_path, records, group, ["one", "list", "packed"][seed % 3], seed)


def test_every_place_of_the_padding_before_the_postscript(tmp_path: Path) -> None:
    """The footer ends at each of the last 270 bytes of a block: padding of a whole block more
    where less than a chunk header is left."""
    for size in range(65536 - 330, 65536 - 60):
        _same(tmp_path, [b"x" * size, b"y"], 2, "list")


def test_a_footer_of_many_chunks_across_blocks(tmp_path: Path) -> None:
    records = [bytes([i % 251]) * (i % 7) for i in range(60_000)]
    _same(tmp_path, records, 2, "packed")


def test_which_options_it_writes(tmp_path: Path) -> None:
    assert written_group("group_size:16,uncompressed,max_parallelism:1") == 16
    assert written_group("max_parallelism:1, uncompressed ,group_size:4") == 4
    for options in (
        "group_size:1,uncompressed",
        "group_size:1,uncompressed,max_parallelism:1",
        "group_size:16,uncompressed",
        "group_size:16,zstd,max_parallelism:1",
        "group_size:16,uncompressed,max_parallelism:2",
        "group_size:16,uncompressed,max_parallelism:1,transpose",
    ):
        assert written_group(options) is None, options
        with pytest.raises(ValueError, match="does not write"):
            ShardWriter(tmp_path / "x", options)


def test_other_options_are_written_by_array_record(tmp_path: Path) -> None:
    """One record per chunk: array_record's own writer, packed records split for it."""
    records = [b"first", b"", b"third" * 300]
    options = "group_size:1,uncompressed"
    writer = open_shard_writer(tmp_path / "ours", options)
    assert not isinstance(writer, ShardWriter)
    writer.write_packed(b"".join(records), np.array([0, 5, 5, 1505]))
    writer.close()
    assert (tmp_path / "ours").read_bytes() == _array_record(tmp_path / "a", records, options)


def test_a_failed_write_leaves_no_digest(tmp_path: Path) -> None:
    """A write the file refused once (the disk full, then freed): what is in the file is no
    longer known, so the writer gives no digest even when it closes without an error after."""

    class FullOnce:
        def __init__(self, real: Any) -> None:
            self.real, self.failed = real, False

        def write(self, data: Any) -> int:
            if not self.failed:
                self.failed = True
                raise OSError(28, "No space left on device")
            return int(self.real.write(data))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.real, name)

    writer = ShardWriter(tmp_path / "full", "group_size:4,uncompressed,max_parallelism:1")
    writer._file = FullOnce(writer._file)  # type: ignore[assignment]
    with pytest.raises(OSError, match="No space"):
        writer.write_many([b"abc"] * 10)
    writer.close()
    assert writer.digest is None


def test_a_prepare_hashes_its_shards_as_it_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No pass of its own over a written shard: the sizes and sha256s in dataset_info.json
    are the writer's, and they are the files'."""
    read_back: list[str] = []
    real = Digest.of_file.__func__  # type: ignore[attr-defined]

    def of_file(cls: type[Digest], path: Path) -> Digest:
        read_back.append(Path(path).name)
        digest: Digest = real(cls, path)
        return digest

    monkeypatch.setattr(Digest, "of_file", classmethod(of_file))
    lines = ["id,x"] + [f"{i},{i * 0.25}" for i in range(3000)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    builder = files_builder(tmp_path / "t.csv", "t", data_dir=tmp_path / "data")
    builder.download_and_prepare(shard_size=20_000)
    assert not [name for name in read_back if ".array_record" in name]
    source = builder.as_data_source("train")
    shards = source.info.splits["train"].shards
    assert len(shards) > 1
    monkeypatch.undo()
    for shard in shards:
        found = Digest.of_file(Path(source.path) / shard.file)
        assert (shard.num_bytes, shard.sha256) == (found.size, found.sha256)


def test_a_prepared_tables_shards_are_array_records_bytes(tmp_path: Path) -> None:
    """The prepare writes each shard through ShardWriter (packed batches of a CSV's rows): the
    same bytes as array_record's writer given the same records with the same options, but for
    the footer's entries, all of one width."""
    lines = ["id,x,name"] + [f"{i},{i * 0.5},{'abc' * (1 + i % 5)}" for i in range(5000)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    builder = files_builder(tmp_path / "t.csv", "t", data_dir=tmp_path / "data")
    builder.download_and_prepare(shard_size=40_000)
    source = builder.as_data_source("train")
    options = source.info.shard_options
    assert options is not None and (written_group(options) or 0) > 1
    shards = sorted(Path(source.path).glob("t-train.array_record-*"))
    assert len(shards) > 1
    for shard in shards:
        reader = ArrayRecordReader(str(shard))
        records = reader.read_all()
        reader.close()
        theirs = _array_record(tmp_path / "again", records, options)
        ours = _ours(tmp_path / "ours", records, options, "list", fixed=True)
        assert shard.read_bytes() == ours
        _, at = footer(ShardFile(memoryview(theirs)))
        assert ours[:at] == theirs[:at]
