"""Record formats (`catalog.read.record_format`): DataSource reads any registered format through
one protocol; TFDS's is registered by catalog.interop and travels with a pickled DataSource;
an unregistered one is one clear error; catalog.read never imports catalog.interop.

This module imports nothing of catalog.interop at import time: a spawned child imports it to
find its target, and must start without it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import multiprocessing
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, overload

import numpy as np
import pytest

import catalog
from catalog.errors import SourceFormatError
from catalog.info.dataset_info import DatasetInfo, ShardInfo, SplitInfo
from catalog.read.data_source import DataSource
from catalog.read.record_format import Codec, RecordFormat, ShardReader, register

import tf_fixtures

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = tf_fixtures.FIXTURES
EXPECTED = tf_fixtures.expected("expected.json")


pytestmark = pytest.mark.usefixtures("tmp_data_dir")


def tfds_dir(file_format: str) -> Path:
    return tf_fixtures.tfds_dir(EXPECTED, file_format)


# -- TFDS's format, in a process that never imported catalog.interop --------------------------
def _read_in_child(blob: bytes, queue: Any) -> None:
    before = sorted(m for m in sys.modules if m.startswith("catalog.interop"))
    ds = pickle.loads(blob)
    ids = [example["meta"]["id"] for example in ds]
    batch = [example["meta"]["id"] for example in ds.__getitems__([5, 0])]
    queue.put((before, len(ds), ds[5]["meta"]["id"], ids, batch))


@pytest.mark.parametrize("file_format", ["tfrecord", "array_record"])
def test_a_pickled_tfds_source_reads_in_a_spawned_process_without_interop(
    file_format: str,
) -> None:
    ds = catalog.open_tfds(tfds_dir(file_format), split="train")
    ids = [example["meta"]["id"] for example in ds]
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_read_in_child, args=(pickle.dumps(ds), queue))
    proc.start()
    got = queue.get(timeout=120)
    proc.join(timeout=60)
    assert proc.exitcode == 0
    assert got == ([], 6, ids[5], ids, [ids[5], ids[0]])


# -- an unregistered format ------------------------------------------------------------------
def test_an_unregistered_record_format_is_one_clear_error() -> None:
    folder = tfds_dir("array_record")
    info = catalog.open_tfds(folder, split="train").info
    odd = dataclasses.replace(info, record_format={"name": "no-such-format"})
    with pytest.raises(SourceFormatError) as error:
        DataSource(folder, odd, "train")
    message = str(error.value)
    assert str(folder) in message and "'no-such-format'" in message, message
    assert "catalog.open_tfds(path)" in message and "registered: " in message, message


def test_tfds_info_read_before_its_format_is_registered_says_what_to_do() -> None:
    """A process that got a TFDS directory's info but never imported catalog.interop (so
    TFDS's format is not registered there) is told to open it with catalog.open_tfds."""
    folder = tfds_dir("tfrecord")
    info = catalog.open_tfds(folder, split="train").info
    code = (
        "import pickle, sys\n"
        "from catalog.read.data_source import DataSource\n"
        "folder, info = pickle.load(sys.stdin.buffer)\n"
        "try:\n"
        "    DataSource(folder, info, 'train')\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
        "print(sorted(m for m in sys.modules if m.startswith('catalog.interop')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps((folder, info)),
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout.decode()
    assert out.startswith(f"SourceFormatError {folder}: its records are in format 'tf-example'")
    assert "catalog.open_tfds(path)" in out and out.endswith("\n[]\n"), out


# -- a format of one's own, through the same protocol ----------------------------------------
class _Lines:
    """Records are the lines of a text file."""

    def __init__(self, path: str) -> None:
        self._lines = Path(path).read_bytes().splitlines()
        self._at = 0

    def num_records(self) -> int:
        return len(self._lines)

    def seek(self, index: int) -> None:
        self._at = index

    @overload
    def read(self) -> bytes: ...
    @overload
    def read(self, start: int, stop: int) -> list[bytes]: ...
    def read(self, start: int | None = None, stop: int | None = None) -> bytes | list[bytes]:
        if start is None or stop is None:
            self._at += 1
            return self._lines[self._at - 1]
        return self._lines[start:stop]

    def close(self) -> None:
        self._lines = []


class _JSONCodec:
    def decode(self, record: bytes) -> Any:
        try:
            value = json.loads(record)
        except ValueError as error:
            raise SourceFormatError(f"not JSON ({error})") from None
        return {"x": np.asarray(value["x"]), "y": value["y"]}

    def decode_many(self, records: Iterable[bytes]) -> list[Any]:
        return [self.decode(r) for r in records]


class JSONLines(RecordFormat):
    def codec(
        self,
        info: DatasetInfo,
        *,
        skip: Iterable[str],
        decoders: Mapping[str, Callable[[bytes], Any]],
    ) -> Codec:
        return _JSONCodec()

    def open(self, path: str, info: DatasetInfo) -> ShardReader:
        return _Lines(path)

    def decode_fix(self, info: DatasetInfo) -> str:
        return "write the lines again"


JSON_LINES = register(JSONLines("test-json-lines", instance="JSON_LINES"))


def lines_dataset(folder: Path, bad: int | None = None) -> DatasetInfo:
    """Split train in two shards of 3 and 4 lines, test in one of 2: x is 0..8 in order."""
    features = catalog.FeaturesDict({"x": catalog.Scalar("int64"), "y": catalog.Scalar("int64")})
    splits, x = {}, 0
    for split, sizes in (("train", (3, 4)), ("test", (2,))):
        shards = []
        for i, size in enumerate(sizes):
            lines = []
            for _ in range(size):
                lines.append("{oops" if x == bad else json.dumps({"x": x, "y": x % 2}))
                x += 1
            path = folder / f"lines-{split}.jsonl-{i:05d}-of-{len(sizes):05d}"
            path.write_text("\n".join(lines) + "\n")
            shards.append(ShardInfo(path.name, size, path.stat().st_size, ""))
        splits[split] = SplitInfo(split, sum(sizes), tuple(shards))
    return DatasetInfo(
        name="lines",
        version="1.0.0",
        features=features,
        splits=splits,
        supervised_keys=("x", "y"),
        record_format={"name": JSON_LINES.name},
    )


def test_a_format_of_ones_own_reads_through_the_same_protocol(tmp_path: Path) -> None:
    info = lines_dataset(tmp_path)
    ds = DataSource(tmp_path, info, "train")
    assert len(ds) == 7 and ds[0]["x"] == 0 and ds[-1]["x"] == 6 and ds[3]["x"] == 3
    assert [e["x"] for e in ds] == list(range(7))
    assert [e["x"] for e in ds[[6, 1, 3]]] == [6, 1, 3]
    assert [e["x"] for e in ds[5:1:-2]] == [5, 3]
    assert ds.read_batch([0, 1]) is None  # no column codec: one by one
    both = DataSource(tmp_path, info, "train[-1:]+test", as_supervised=True)
    assert [(int(x), y) for x, y in both] == [(6, 0), (7, 1), (8, 0)]
    again = pickle.loads(pickle.dumps(ds))  # the format travels by reference
    assert again._records._format is JSON_LINES and again[4]["x"] == 4
    with pytest.raises(IndexError, match="out of range for lines split 'train' with 7"):
        ds[7]


def test_a_record_of_ones_own_format_that_does_not_decode_is_named(tmp_path: Path) -> None:
    ds = DataSource(tmp_path, lines_dataset(tmp_path, bad=4), "train")
    assert ds[3]["x"] == 3 and ds[5]["x"] == 5
    shard = tmp_path / "lines-train.jsonl-00001-of-00002"
    for read in (lambda: ds[4], lambda: ds[[0, 4]], lambda: list(ds)):
        with pytest.raises(SourceFormatError) as error:
            read()
        assert str(error.value).startswith(f"{shard}: record 1 (split 'train') cannot be decoded")
        assert str(error.value).endswith("; write the lines again")


# -- the layering ----------------------------------------------------------------------------
def test_catalog_read_imports_nothing_of_catalog_interop() -> None:
    found = []
    for path in sorted((ROOT / "catalog" / "read").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            found += [f"{path.name}: {n}" for n in names if n.startswith("catalog.interop")]
    assert found == []
