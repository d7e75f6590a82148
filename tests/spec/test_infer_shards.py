"""WebDataset shards prepared with no builder.yaml (catalog.spec.infer.shards and
catalog.formats.shards.webdataset): features by member extension, every example equal to its
members,
a sample missing a member named by shard and key."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog.api.files import files_builder
from catalog.errors import SourceFormatError
from catalog.features import Image, Scalar, Text

RNG = np.random.default_rng(3)


def _png(shape: tuple[int, ...], fmt: str = "PNG") -> bytes:
    out = io.BytesIO()
    PILImage.fromarray(RNG.integers(0, 256, shape, dtype=np.uint8)).save(out, format=fmt)
    return out.getvalue()


def write_shard(path: Path, samples: list[dict[str, bytes]], start: int) -> list[str]:
    keys = []
    with tarfile.open(path, "w") as tar:
        for i, sample in enumerate(samples):
            key = f"{start + i:06d}"
            keys.append(key)
            for extension, data in sample.items():
                info = tarfile.TarInfo(f"{key}.{extension}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return keys


def samples(n: int) -> list[dict[str, bytes]]:
    out = []
    for i in range(n):
        fmt = "PNG" if i % 2 else "JPEG"
        out.append({
            "jpg": _png((8 + i, 5 + 2 * i, 3), fmt),
            "cls": f"{i % 3}\n".encode(),
            "txt": f"a caption, number {i} ✓".encode(),
            "json": json.dumps({"i": i, "tags": ["x"]}).encode(),
        })  # fmt: skip
    return out


def test_shards_are_prepared_exactly_split_by_name(tmp_path: Path) -> None:
    train, test = samples(7), samples(3)
    write_shard(tmp_path / "train-000.tar", train[:4], 0)
    write_shard(tmp_path / "train-001.tar", train[4:], 4)
    write_shard(tmp_path / "test-000.tar", test, 0)
    b = catalog.prepare_files(str(tmp_path / "*.tar"), "wds", data_dir=tmp_path / "d")
    features = b.info.features
    assert features["jpg"] == Image((None, None, 3), encoding="png")
    assert features["cls"] == Scalar("int64")
    assert features["txt"] == Text() and features["json"] == Text()
    for split, expected in (("train", train), ("test", test)):
        ds = b.as_data_source(split)
        raw = b.as_data_source(split, decoders={"jpg": False})
        assert len(ds) == len(expected)
        for i, sample in enumerate(expected):
            assert raw[i]["jpg"] == sample["jpg"]  # the member's bytes, stored as they are
            with PILImage.open(io.BytesIO(sample["jpg"])) as img:
                np.testing.assert_array_equal(ds[i]["jpg"], np.array(img.convert("RGB")))
            assert int(ds[i]["cls"]) == int(sample["cls"])
            assert ds[i]["txt"] == sample["txt"].decode()
            assert ds[i]["json"] == sample["json"].decode()


def test_a_sample_missing_a_member_is_named(tmp_path: Path) -> None:
    rows = samples(5)
    del rows[3]["txt"]
    write_shard(tmp_path / "data.tar", rows, 0)
    b = files_builder(tmp_path / "data.tar", "wds", data_dir=tmp_path / "d")
    with pytest.raises(SourceFormatError, match=r"data.tar: key '000003' has no .txt member"):
        b.download_and_prepare()


def test_scattered_members_of_a_key_are_refused(tmp_path: Path) -> None:
    with tarfile.open(tmp_path / "bad.tar", "w") as tar:
        for name in ("1.txt", "2.txt", "1.cls"):
            info = tarfile.TarInfo(name)
            info.size = 1
            tar.addfile(info, io.BytesIO(b"1"))
    with pytest.raises(SourceFormatError, match="members of key '1' are not next to each other"):
        files_builder(tmp_path / "bad.tar", "bad")
