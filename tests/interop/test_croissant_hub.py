"""The Hugging Face Hub's Croissant files: a ``git+https`` repository FileObject whose
converted Parquet files a FileSet selects, split by a regex on their paths. Checked against a
server on 127.0.0.1 answering in the Hub's layout (the API's listing of the parquet branch, the
files under it), with the Hub's own Croissant file for mnist."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image as PILImage

import catalog.formats.croissant.records as croissant_records
from catalog.api.croissant import croissant_builder
from catalog.download import DownloadConfig
from catalog.errors import CatalogError
from catalog.testing.http_server import LoopbackServer

HUB = Path(__file__).parent.parent / "data" / "croissant" / "huggingface-mnist" / "metadata.json"


def _png(seed: int) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, (28, 28), dtype=np.uint8)
    buffer = io.BytesIO()
    PILImage.fromarray(pixels, "L").save(buffer, format="PNG")
    return buffer.getvalue()


def _parquet(seeds: list[int]) -> bytes:
    images = [{"bytes": _png(s), "path": None} for s in seeds]
    table = pa.table({"image": images, "label": [s % 10 for s in seeds]})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def test_a_hub_croissant_prepares_from_its_parquet_files(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {("train", "0000"): [1, 2, 3], ("train", "0001"): [4, 5], ("test", "0000"): [6, 7]}
    listing: dict[str, dict[str, list[str]]] = {"mnist": {}}
    for (split, n), seeds in files.items():
        url = server.add(f"/api/datasets/ylecun/mnist/parquet/mnist/{split}/{n}.parquet",
                         _parquet(seeds))  # fmt: skip
        listing["mnist"].setdefault(split, []).append(url)
    server.add("/api/datasets/ylecun/mnist/parquet", json.dumps(listing).encode())
    doc = HUB.read_text().replace("https://huggingface.co", server.url("/").rstrip("/"))
    path = tmp_path / "mnist.json"
    path.write_text(doc)
    with monkeypatch.context() as patched:  # the splits counted from the files' footers
        patched.setattr(croissant_records, "file_rows", None)  # no row is read
        b = croissant_builder(path, data_dir=tmp_path / "data", download_dir=tmp_path / "dl")
    assert sorted(b.spec.splits) == ["test", "train"]
    assert (b.spec.splits["train"].num_examples, b.spec.splits["test"].num_examples) == (5, 2)
    b.download_and_prepare()
    for split, seeds in (("train", [1, 2, 3, 4, 5]), ("test", [6, 7])):
        ds = b.as_data_source(split=split)
        assert [int(e["label"]) for e in ds] == [s % 10 for s in seeds]
        for example, seed in zip(ds, seeds, strict=True):
            grey = np.asarray(PILImage.open(io.BytesIO(_png(seed))))
            np.testing.assert_array_equal(example["image"][:, :, 0], grey)
            assert example["split"] == split
    again = croissant_builder(path, data_dir=tmp_path / "data", download_dir=tmp_path / "dl")
    assert again.spec.fingerprint == b.spec.fingerprint  # the files' sha256 as recorded
    assert again.is_prepared


def test_a_hub_croissant_prepares_offline_from_what_was_fetched(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """The Hub's listing and its Parquet files have no checksum in the Croissant file: their
    sha256 is recorded when fetched, and offline the bytes fetched last are used, from the
    download cache, without a request."""
    listing = {"mnist": {"train": [server.add("/api/datasets/ylecun/mnist/parquet/mnist/train/"
                                              "0000.parquet", _parquet([1, 2, 3]))]}}  # fmt: skip
    server.add("/api/datasets/ylecun/mnist/parquet", json.dumps(listing).encode())
    doc = HUB.read_text().replace("https://huggingface.co", server.url("/").rstrip("/"))
    path = tmp_path / "mnist.json"
    path.write_text(doc)
    online = croissant_builder(path, data_dir=tmp_path / "data", download_dir=tmp_path / "dl")
    online.download_and_prepare(download_dir=tmp_path / "dl")
    asked = len(server.requests)
    config = DownloadConfig(offline=True)
    offline = croissant_builder(path, data_dir=tmp_path / "again", download_dir=tmp_path / "dl",
                                download_config=config)  # fmt: skip
    offline.download_and_prepare(download_dir=tmp_path / "dl", download_config=config)
    assert [r.path for r in server.requests[asked:]] == []  # nothing asked of the server
    assert offline.spec.fingerprint == online.spec.fingerprint
    assert [int(e["label"]) for e in offline.as_data_source(split="train")] == [1, 2, 3]
    elsewhere = DownloadConfig(offline=True)
    with pytest.raises(CatalogError, match="offline"):  # never fetched into this cache: one error
        croissant_builder(path, data_dir=tmp_path / "x", download_dir=tmp_path / "empty",
                          download_config=elsewhere)  # fmt: skip
