"""Reads are honest: a damaged shard, a dataset_info.json that no longer describes the data, or a
copy prepared again under an open data source give a catalog error naming what and where;
never a wrong example, and never array_record's raw errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import catalog
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels

from conftest import idx_builder


def prepared(tmp_path: Path, server: LoopbackServer, count: int = 200) -> tuple[Path, Path]:
    folder = idx_builder(tmp_path, server, count)
    data = tmp_path / "data"
    catalog.data_source(folder, data_dir=data)
    return folder, data / "tiny" / "1.0.0"


def edit_info(path: Path, change: object) -> None:
    info = json.loads((path / "dataset_info.json").read_text())
    change(info)  # type: ignore[operator]
    (path / "dataset_info.json").write_text(json.dumps(info))


def verify(folder: Path, data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", "verify", str(folder), "--data-dir", str(data)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_corrupt_record_names_shard_and_record_and_spares_the_others(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder, path = prepared(tmp_path, server)
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "data")
    shard = Path(ds._records.paths[0])
    blob = bytearray(shard.read_bytes())
    # The pixels of a record from 100 on (each image is unique; one that a 64 KiB block
    # boundary splits is skipped) get one byte flipped.
    images = pattern_images(200)
    at = next(a for k in range(100, 200) if (a := blob.find(images[k].tobytes())) > 0)
    blob[at + 5] ^= 0xFF
    shard.write_bytes(bytes(blob))
    fresh = catalog.DataSource(path, ds.info, "train")  # sizes are not what is checked here
    with pytest.raises(catalog.ShardError, match=r"record 1\d\d cannot be read") as info:
        fresh[list(range(200))]
    assert str(shard) in str(info.value) and "catalog verify" in str(info.value)
    # Healthy records before and after it still read, with the right values.
    labels = pattern_labels(200)
    assert fresh[0]["label"] == labels[0] and fresh[199]["label"] == labels[199]
    assert fresh[[3, 4]][1]["label"] == labels[4]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda i: i["features"]["features"]["image"].update(shape=[27, 28, 1]),
            "records have 786 bytes, but the features in dataset_info.json encode to 758",
        ),
        (
            lambda i: i["splits"]["train"].update(shards=[]),
            "split 'train' says 200 examples but its shards hold 0",
        ),
        (
            lambda i: i["splits"]["train"]["shards"][0].update(
                file="tiny-test.array_record-00000-of-00001"
            ),
            "lists shard tiny-test.array_record-00000-of-00001, which is not one of its own",
        ),
        (
            lambda i: (
                i["splits"]["train"]["shards"][0].update(num_examples=150)
                or i["splits"]["train"].update(num_examples=150)
            ),
            "it holds 200 records, dataset_info.json says 150",
        ),
    ],
)
def test_a_description_that_does_not_fit_the_data_is_refused(
    tmp_path: Path, server: LoopbackServer, change: object, message: str
) -> None:
    folder, path = prepared(tmp_path, server)
    edit_info(path, change)
    with pytest.raises(catalog.ShardError, match=message.replace("(", r"\(")):
        catalog.data_source(folder, split="train", data_dir=tmp_path / "data", download=False)[0]


def test_verify_checks_record_sizes_and_survives_bad_types(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder, path = prepared(tmp_path, server)
    edit_info(path, lambda i: i["features"]["features"]["image"].update(shape=[27, 28, 1]))
    result = verify(folder, tmp_path / "data")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "record 0 has 786 bytes, but the features in dataset_info.json encode to 758" in (
        result.stdout + result.stderr
    )
    edit_info(path, lambda i: i["splits"]["train"].update(num_examples="200"))
    result = verify(folder, tmp_path / "data")
    assert result.returncode in (1, 2) and "Traceback" not in result.stderr
    assert "num_examples must be a whole number" in result.stdout + result.stderr


def test_a_copy_prepared_again_under_an_open_source_keeps_serving_its_generation(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder, _ = prepared(tmp_path, server)
    data = tmp_path / "data"
    ds = catalog.data_source(folder, split="train", data_dir=data)
    assert len(ds) == 200  # no reader opened yet
    expected = catalog.data_source(folder, split="train", data_dir=data)[150]["label"]
    catalog.builder(folder, data_dir=data).download_and_prepare(
        overwrite=True, max_examples_per_split=50
    )
    assert len(ds) == 200 and ds[150]["label"] == expected  # the generation it opened
    assert len(ds[:10]) == 10 and len(list(ds)) == 200  # views and iteration too
    assert len(catalog.data_source(folder, split="train", data_dir=data, download=False)) == 50
