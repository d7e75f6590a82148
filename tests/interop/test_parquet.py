"""`catalog export NAME --format parquet`: one Parquet file per split in Hugging Face datasets'
layout, read back with pyarrow and pandas and compared with the prepared examples."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image as PILImage

import catalog
from catalog.errors import SpecError
from catalog.features import Audio, FeaturesDict
from catalog.info.dataset_info import DatasetInfo, SplitInfo
from catalog.interop.parquet import export as parquet_export
from catalog.interop.parquet.export import export_parquet
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder, tabular_builder
from fixture_builders import photo_files, photos_builder, table_builder


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env=os.environ,
    )  # fmt: skip


def prepared(folder: Path, data_dir: Path) -> catalog.DatasetBuilder:
    b = catalog.builder(folder, data_dir=data_dir)
    b.download_and_prepare(download_dir=data_dir / "downloads")
    return b


def test_photos_keep_their_stored_bytes_and_class_names(
    tmp_path: Path, server: LoopbackServer
) -> None:
    b = prepared(photos_builder(tmp_path, server), tmp_path / "data")
    done = run("export", str(b.data_path), "--format", "parquet", "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    path = tmp_path / "out" / "photos-train.parquet"
    assert str(path) in done.stdout
    table = pq.read_table(path)
    assert table.schema.field("image").type.names == ["bytes", "path"]
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert features == {
        "image": {"_type": "Image"},
        "label": {"names": ["cat", "dog"], "_type": "ClassLabel"},
    }
    rows = table.to_pylist()
    files = photo_files()
    ds = b.as_data_source("train")
    assert len(rows) == len(ds) == 5
    for row, (name, data) in zip(rows, sorted(files.items()), strict=True):
        assert row["image"]["bytes"] == data  # the file as stored (a grayscale PNG too)
        assert row["image"]["path"] is None
        assert row["label"] == ["cat", "dog"].index(name.split("/")[0])
    for row, example in zip(rows, ds, strict=True):
        pixels = np.asarray(PILImage.open(io.BytesIO(row["image"]["bytes"])).convert("RGB"))
        np.testing.assert_array_equal(pixels, example["image"])
    frame = pd_read(path)
    assert list(frame.columns) == ["image", "label"]
    assert frame["image"][0] == {"bytes": files["cat/a.png"], "path": None}


def pd_read(path: Path):  # type: ignore[no-untyped-def]
    import pandas as pd

    return pd.read_parquet(path)


def test_raw_images_become_png_and_tables_keep_their_types(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "data"
    mnist = prepared(idx_builder(tmp_path, server, 7), data_dir)
    monkeypatch.setattr(parquet_export, "GROUP_BYTES", 1)  # a row group per row
    files = export_parquet(mnist.info, mnist.data_path, tmp_path / "out")
    assert pq.ParquetFile(files["train"]).metadata.num_row_groups == 7
    monkeypatch.undo()
    rows = pq.read_table(files["train"]).to_pylist()
    for row, example in zip(rows, mnist.as_data_source("train"), strict=True):
        assert row["image"]["bytes"].startswith(b"\x89PNG")
        pixels = np.asarray(PILImage.open(io.BytesIO(row["image"]["bytes"])))
        np.testing.assert_array_equal(pixels, example["image"][..., 0])
        assert row["label"] == example["label"]

    people = prepared(table_builder(tmp_path, server), data_dir)
    files = export_parquet(people.info, people.data_path, tmp_path / "out")
    assert sorted(files) == ["test", "train"]
    for split, path in files.items():
        table = pq.read_table(path)
        types = {f.name: str(f.type) for f in table.schema}
        assert types == {"name": "string", "age": "int32", "height": "double", "kind": "int64"}
        got = table.to_pylist()
        want = [
            {k: (v.item() if hasattr(v, "item") else v) for k, v in e.items()}
            for e in people.as_data_source(split)
        ]
        assert got == want
    assert pq.read_table(files["train"]).to_pylist()[2]["name"] == 'Cy "the third"'


def test_an_existing_file_needs_overwrite_and_audio_is_refused(
    tmp_path: Path, server: LoopbackServer
) -> None:
    b = prepared(idx_builder(tmp_path, server, 3), tmp_path / "data")
    export_parquet(b.info, b.data_path, tmp_path / "out")
    with pytest.raises(SpecError, match="exists already; pass --overwrite"):
        export_parquet(b.info, b.data_path, tmp_path / "out")
    export_parquet(b.info, b.data_path, tmp_path / "out", overwrite=True)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["tiny-train.parquet"]
    info = DatasetInfo(
        "sounds",
        "1.0.0",
        FeaturesDict({"a": Audio(sample_rate=16000)}),
        {"train": SplitInfo("train", 1)},
    )
    with pytest.raises(SpecError, match=r"not supported yet: feature 'a' \(Audio\)"):
        export_parquet(info, tmp_path, tmp_path / "sounds")
    assert not (tmp_path / "sounds").exists()


def test_a_failed_export_leaves_no_file(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = prepared(idx_builder(tmp_path, server, 5), tmp_path / "data")
    batches = parquet_export._batches

    def broken(ds: Any, convert: Any) -> Any:
        yield next(batches(ds, convert))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(parquet_export, "_batches", broken)
    with pytest.raises(OSError, match="No space left"):
        export_parquet(b.info, b.data_path, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


#: Hugging Face datasets reads the files, in a child process with its cache in a temporary
#: folder: its features and every row as JSON (images as their pixels).
_HF = """
import base64, json, sys
import numpy as np
import datasets

ds = datasets.load_dataset("parquet", data_files={"train": sys.argv[1]}, split="train")
def plain(value):
    if hasattr(value, "convert"):
        pixels = np.asarray(value.convert("RGB"))
        return {"shape": list(pixels.shape), "pixels": base64.b64encode(pixels.tobytes()).decode()}
    return value
rows = [{k: plain(v) for k, v in row.items()} for row in ds]
print(json.dumps({"features": {k: repr(v) for k, v in ds.features.items()}, "rows": rows}))
"""


def hf_read(path: Path, home: Path) -> dict[str, Any]:
    env = {**os.environ, "HF_HOME": str(home), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _HF, str(path)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_hugging_face_datasets_reads_images_labels_and_tensors(
    tmp_path: Path, server: LoopbackServer
) -> None:
    data_dir = tmp_path / "data"
    photos = prepared(photos_builder(tmp_path, server), data_dir)
    files = export_parquet(photos.info, photos.data_path, tmp_path / "out")
    got = hf_read(files["train"], tmp_path / "hf")
    assert got["features"] == {
        "image": "Image(mode=None, decode=True)",
        "label": "ClassLabel(names=['cat', 'dog'])",
    }
    for row, example in zip(got["rows"], photos.as_data_source("train"), strict=True):
        pixels = np.frombuffer(base64.b64decode(row["image"]["pixels"]), np.uint8)
        np.testing.assert_array_equal(pixels.reshape(row["image"]["shape"]), example["image"])
        assert row["label"] == example["label"]
    vectors = prepared(
        tabular_builder(
            tmp_path, server, "vectors", [[1.5, 2, 3], [4, 5, 6.25]], [1, 0], ["a", "b"]
        ),
        data_dir,
    )
    files = export_parquet(vectors.info, vectors.data_path, tmp_path / "out")
    got = hf_read(files["train"], tmp_path / "hf")
    assert got["features"]["label"] == "ClassLabel(names=['a', 'b'])"
    assert "float32" in got["features"]["values"]
    assert got["rows"] == [
        {"values": [1.5, 2, 3], "label": 1},
        {"values": [4, 5, 6.25], "label": 0},
    ]
