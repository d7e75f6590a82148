"""Small records share a chunk (``group_size`` > 1, `catalog.storage.shards.writer_options`):
a table of short rows is prepared so, records it in dataset_info.json, and reads identically
through every read path (ds[i], __getitems__, iteration, memory maps, array_record, byte
ranges from a bucket, verify, DataLoader workers), by Grain's ArrayRecordDataSource too; a
flipped bit in such a chunk is caught; a copy written with other writer options is reused,
never prepared again for that."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

import catalog
from catalog.api.files import files_builder
from catalog.errors import ShardError
from catalog.features.codec import RecordCodec
from catalog.prepare import shard_plan
from catalog.read.mapped_shard import map_shard
from catalog.read.shard_layout import chunk_index
from catalog.storage import remote
from catalog.storage.shards import group_size, writer_options

from s3server import S3Server

ROOT = Path(__file__).resolve().parents[2]
COUNT = 3000
NAMES = ["ant", "bee", "cat", "dog", "eel", "fox", "gnu"]


def row(i: int) -> dict[str, Any]:
    return {"id": i, "x": i * 0.25, "name": NAMES[i % 7] * (1 + i % 3)}


def write_csv(path: Path) -> Path:
    lines = ["id,x,name"] + [f"{r['id']},{r['x']},{r['name']}" for r in map(row, range(COUNT))]
    path.write_text("\n".join(lines) + "\n")
    return path


def prepared(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    builder = files_builder(write_csv(root / "t.csv"), "t", data_dir=root / "data")
    builder.download_and_prepare(shard_size=25_000)  # several shards
    path = builder.as_data_source("train").path
    assert isinstance(path, Path)
    return path


@pytest.fixture(scope="module")
def generation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepared(tmp_path_factory.mktemp("grouped"))


def shards(generation: Path) -> list[Path]:
    info = json.loads((generation / "dataset_info.json").read_text())
    return [generation / s["file"] for s in info["splits"]["train"]["shards"]]


def same(example: dict[str, Any], i: int) -> bool:
    want = row(i)
    return (
        int(example["id"]) == want["id"]
        and float(example["x"]) == want["x"]
        and example["name"] == want["name"]
    )


def test_small_records_share_chunks_and_dataset_info_says_so(generation: Path) -> None:
    info = json.loads((generation / "dataset_info.json").read_text())
    assert group_size(info["shard_options"]) == 32  # rows of about 20 bytes
    files = shards(generation)
    assert len(files) > 1
    for file in files:
        reader = ArrayRecordReader(str(file))
        assert "group_size:32" in reader.writer_options_string().split(",")
        reader.close()
        index = chunk_index(file.read_bytes())
        assert index is not None and int(index.counts.max()) == 32


def test_every_local_read_path_reads_the_same_examples(generation: Path) -> None:
    ds = catalog.data_source(str(generation), split="train")
    assert len(ds) == COUNT
    # one by one (array_record's reader), and before any shard is mapped
    assert all(same(ds[i], i) for i in (0, 1, 31, 32, 33, 1500, COUNT - 1))
    assert same(ds[-1], COUNT - 1)
    order = np.random.default_rng(3).permutation(COUNT)
    batch = ds.__getitems__(order[:128].tolist())
    assert all(same(e, i) for e, i in zip(batch, order[:128].tolist(), strict=True))
    listed = ds[order[128:700].tolist()]
    assert all(same(e, i) for e, i in zip(listed, order[128:700].tolist(), strict=True))
    assert all(same(e, i) for i, e in enumerate(ds))  # iteration: range reads, then maps
    assert all(same(e, 100 + i) for i, e in enumerate(ds[100:400]))
    ds.warm()  # every shard mapped and verified: batches come from the maps
    assert all(m is not None for m in ds._records.maps)
    batch = ds.__getitems__(order.tolist())
    assert all(same(e, i) for e, i in zip(batch, order.tolist(), strict=True))
    batches = list(catalog.pipeline(ds).shuffle(seed=1).batch(256))
    ids = np.concatenate([b["id"] for b in batches])
    assert sorted(ids.tolist()) == list(range(COUNT))


def test_the_maps_read_what_array_record_reads(generation: Path) -> None:
    for file in shards(generation):
        reader = ArrayRecordReader(str(file), "readahead_buffer_size:0,max_parallelism:0")
        expected = reader.read_all()
        reader.close()
        sha256 = hashlib.sha256(file.read_bytes()).hexdigest()
        mapped = map_shard(str(file), len(expected), sha256)
        assert mapped is not None
        order = np.random.default_rng(0).permutation(len(expected))
        assert mapped.read(order) == [expected[i] for i in order.tolist()]
        mapped.close()


def test_grain_reads_the_shards(generation: Path) -> None:
    grain = pytest.importorskip("grain.python")
    info = catalog.data_source(str(generation), split="train").info
    source = grain.ArrayRecordDataSource([str(f) for f in shards(generation)])
    assert len(source) == COUNT
    decode = RecordCodec(info.features).decode  # the examples catalog reads
    assert all(same(decode(source[i]), i) for i in (0, 33, 1234, COUNT - 1))
    assert all(same(decode(r), i) for i, r in enumerate(source.__getitems__(range(200))))


@dataclasses.dataclass(frozen=True)
class FileInstruction:
    """The fields of TFDS's FileInstruction (`tfds.core.utils.shard_utils`), which TFDS's
    `tfds.data_sources.ArrayRecordDataSource` hands to array_record's data source."""

    filename: str
    skip: int
    take: int
    examples_in_shard: int


def test_tfds_data_source_reader_reads_the_shards(generation: Path) -> None:
    """TFDS's data sources read ArrayRecord shards through array_record's
    `ArrayRecordDataSource`, given a split's file instructions (a split slice skips and takes
    records of each shard): the examples catalog reads, from catalog's chunks of 32 rows."""
    from array_record.python.array_record_data_source import ArrayRecordDataSource

    info = catalog.data_source(str(generation), split="train").info
    shard_infos = info.splits["train"].shards
    files = shards(generation)
    assert [f.name for f in files] == [s.file for s in shard_infos]
    skip = 100  # as TFDS's "train[100:]"
    instructions = []
    for i, (file, shard) in enumerate(zip(files, shard_infos, strict=True)):
        skipped = skip if i == 0 else 0
        taken = shard.num_examples - skipped
        instructions.append(FileInstruction(str(file), skipped, taken, shard.num_examples))
    source = ArrayRecordDataSource(instructions)
    assert len(source) == COUNT - skip
    decode = RecordCodec(info.features).decode
    rows = np.random.default_rng(2).permutation(COUNT - skip)[:300].tolist()
    assert all(same(decode(source[i]), skip + i) for i in rows[:50])
    found = source.__getitems__(rows)
    assert all(same(decode(r), skip + i) for i, r in zip(rows, found, strict=True))
    source.__exit__(None, None, None)


def test_verify_passes_and_names_a_flipped_bit(tmp_path: Path) -> None:
    generation = prepared(tmp_path)
    assert catalog.verify(str(generation)).problems == []
    file = shards(generation)[0]
    body = bytearray(file.read_bytes())
    index = chunk_index(bytes(body))
    assert index is not None and int(index.counts[1]) == 32
    mapped = map_shard(str(file), int(index.firsts[-1]), hashlib.sha256(body).hexdigest())
    assert mapped is not None
    bad = 40  # the 9th record of the second chunk
    body[int(mapped.starts[bad])] ^= 0x01
    mapped.close()
    file.write_bytes(bytes(body))
    problems = catalog.verify(str(generation)).problems
    assert [p.kind for p in problems] == ["sha256"] and file.name in str(problems[0])
    ds = catalog.data_source(str(generation), split="train")
    with pytest.raises(ShardError, match=f"{file.name}.*record {bad}"):
        ds[bad]
    with pytest.raises(ShardError, match=file.name):
        ds.__getitems__(list(range(COUNT)))  # not mapped: its sha256 differs
    assert same(ds[0], 0) and same(ds[70], 70)  # the other chunks stay readable


@pytest.fixture
def bucket(s3: S3Server, generation: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """The generation in an s3:// bucket (moto's server on 127.0.0.1), one bit flipped in
    the second chunk of its first shard; returns the dataset's URL and the flipped record."""
    s3.make_bucket("grouped")
    s3.upload_dir(generation, "grouped", f"p/t/{generation.name}")
    remote.write_pointer(remote.remote_dir("s3://grouped/p/t"), "1.0.0", generation.name)
    file = shards(generation)[0]
    body = bytearray(file.read_bytes())
    index = chunk_index(bytes(body))
    assert index is not None
    held = int(index.firsts[-1])
    mapped = map_shard(str(file), held, hashlib.sha256(body).hexdigest())
    assert mapped is not None
    body[int(mapped.starts[45])] ^= 0x01
    mapped.close()
    key = f"p/t/{generation.name}/{file.name}"
    s3.client().put_object(Bucket="grouped", Key=key, Body=bytes(body))
    monkeypatch.setenv("CATALOG_REMOTE_DEADLINE", "3")
    return "s3://grouped/p/t/1.0.0", 45


def test_range_reads_read_shared_chunks_and_catch_a_flipped_bit(
    bucket: tuple[str, int],
) -> None:
    pytest.importorskip("highwayhash")
    url, bad = bucket
    ds = catalog.data_source(url, split="train", remote_read="range")
    healthy = [0, 31, 64, 65, 1000, COUNT - 1]  # outside the second chunk (32..63)
    assert all(same(e, i) for e, i in zip(ds.__getitems__(healthy), healthy, strict=True))
    assert all(same(ds[i], i) for i in healthy)
    tail = list(ds[2000:2100])
    assert all(same(e, 2000 + i) for i, e in enumerate(tail))
    for read in (lambda: ds[bad], lambda: ds.__getitems__([3, bad, 90]), lambda: ds[32]):
        with pytest.raises(ShardError, match=r"records 32\.\.63 \(chunk 1, at byte \d+\) is"):
            read()


LOADER = """\
import sys
import catalog
from torch.utils.data import DataLoader

if __name__ == "__main__":
    ds = catalog.data_source(sys.argv[1], split="train")
    ds[0]
    loader = DataLoader(ds, batch_size=100, num_workers=2, shuffle=True)
    ids = sorted(int(i) for batch in loader for i in batch["id"])
    print(ids == list(range(len(ds))), len(ids))
"""


def test_dataloader_workers_read_every_example(generation: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    script = tmp_path / "loader.py"
    script.write_text(LOADER)
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, str(script), str(generation)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["True", str(COUNT)]


def test_a_copy_written_with_other_writer_options_is_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writer options are how shards are laid out, not what they hold: a copy written with
    another group size is read as it is, never prepared again for that."""
    csv = write_csv(tmp_path / "t.csv")
    with monkeypatch.context() as patch:
        patch.setattr(shard_plan, "writer_options", lambda mean: "group_size:4,uncompressed")
        first = files_builder(csv, "t", data_dir=tmp_path / "data").prepare()
    assert first.status == "prepared" and first.info.shard_options == "group_size:4,uncompressed"
    again = files_builder(csv, "t", data_dir=tmp_path / "data").prepare()
    assert again.status == "reused"
    assert again.info.shard_options == "group_size:4,uncompressed"
    ds = catalog.data_source("t", split="train", data_dir=tmp_path / "data")
    assert ds.info.shard_options == "group_size:4,uncompressed"
    assert all(same(e, i) for e, i in zip(ds.__getitems__([0, 5, 2999]), [0, 5, 2999], strict=True))


def test_the_plan_keeps_its_writer_options_for_a_resumed_prepare() -> None:
    """A plan saved by a prepare that was killed gives the resumed one the same options (its
    finished shards and the rest alike); a plan saved before they were recorded wrote one
    record per chunk."""
    unit = shard_plan.Unit("train", 0, 1, 0, 10, "t-train.array_record-00000-of-00001", 100)
    plan = shard_plan.Plan("k", (unit,), 1 << 20, "group_size:16,uncompressed")
    assert shard_plan.Plan.from_json(json.loads(json.dumps(plan.to_json()))) == plan
    old = plan.to_json()
    del old["writer_options"]
    assert shard_plan.Plan.from_json(old).writer_options == "group_size:1,uncompressed"
    with pytest.raises(ValueError, match="writer_options"):
        shard_plan.Plan.from_json({**old, "writer_options": 16})


def test_small_records_are_written_in_one_thread_to_the_same_bytes(tmp_path: Path) -> None:
    """``max_parallelism:1`` saves the writer's thread pool, never changes the file: reads
    and older copies are unaffected."""
    options = writer_options(20)
    assert options.split(",") == ["group_size:32", "uncompressed", "max_parallelism:1"]
    records = [f"{i},{i * 0.25},{NAMES[i % 7]}".encode() for i in range(COUNT)]
    written = []
    for name, given in (("one", options), ("pool", options.replace(",max_parallelism:1", ""))):
        writer = ArrayRecordWriter(str(tmp_path / name), given)
        for record in records:
            writer.write(record)
        writer.close()
        written.append((tmp_path / name).read_bytes())
    assert written[0] == written[1]
    reader = ArrayRecordReader(str(tmp_path / "one"))
    assert reader.read(list(range(COUNT))) == records
    reader.close()
