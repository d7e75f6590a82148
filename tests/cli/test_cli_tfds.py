"""`catalog import`, `catalog export`, and `catalog info` / `show` on dataset directories,
run as subprocesses against the TFDS fixtures (tests/fixtures/tf/)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import catalog

from conftest import catalog_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf"
TFDS_TFRECORD = FIXTURES / "tfds_tfrecord" / "tiny_features" / "1.2.0"
TFDS_ARRAY_RECORD = FIXTURES / "tfds_array_record" / "tiny_features" / "1.2.0"


def run(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return catalog_cli(*args, env={"CATALOG_DATA_DIR": str(data_dir)}, timeout=120)


def assert_same(a: object, b: object) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        assert type(a) is type(b) and a == b


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATALOG_DATA_DIR", str(tmp_path / "data"))


@pytest.mark.parametrize("source", [TFDS_TFRECORD, TFDS_ARRAY_RECORD])
def test_import_makes_a_catalog_dataset_with_equal_values(tmp_path: Path, source: Path) -> None:
    data = tmp_path / "data"
    result = run("import", str(source), "--json", data_dir=data)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    target = Path(summary["path"])
    assert target == data / "tiny_features" / "1.2.0"
    assert summary["splits"] == {"train": 6, "test": 3}
    assert json.loads((target / "dataset_info.json").read_text())["record_format"]["name"] == (
        "catalog-record"
    )
    imported = catalog.data_source(target)
    original = catalog.open_tfds(source)
    for split in ("train", "test"):
        for a, b in zip(original[split], imported[split], strict=True):
            assert_same(a, b)
    # PNG/JPEG bytes were carried over, not re-encoded
    raw_original = catalog.open_tfds(source, split="train", decoders={"photo": False})
    raw_imported = catalog.data_source(target, split="train", decoders={"photo": False})
    assert raw_original[0]["photo"] == raw_imported[0]["photo"]


def test_import_refuses_to_overwrite_and_odd_paths(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run("import", str(TFDS_TFRECORD), data_dir=data).returncode == 0
    again = run("import", str(TFDS_TFRECORD), data_dir=data)
    assert again.returncode == 2 and "pass --overwrite" in again.stderr
    assert "Traceback" not in again.stderr
    assert run("import", str(TFDS_TFRECORD), "--overwrite", data_dir=data).returncode == 0
    other = run("import", str(TFDS_TFRECORD), "--name", "tiny_copy", data_dir=data)
    assert other.returncode == 0 and (data / "tiny_copy" / "1.2.0").is_dir()
    odd = run("import", str(tmp_path), data_dir=data)
    assert odd.returncode == 2 and "neither a TFDS-prepared directory" in odd.stderr


@pytest.mark.parametrize("fmt", ["tfds", "tfrecord"])
def test_export_round_trips(tmp_path: Path, fmt: str) -> None:
    data = tmp_path / "data"
    assert run("import", str(TFDS_TFRECORD), data_dir=data).returncode == 0
    imported = data / "tiny_features" / "1.2.0"
    out = tmp_path / "out"
    result = run("export", str(imported), "--format", fmt, "-o", str(out), data_dir=data)
    assert result.returncode == 0, result.stderr
    original = catalog.open_tfds(TFDS_TFRECORD)
    if fmt == "tfds":
        exported = catalog.open_tfds(out / "tiny_features" / "1.2.0")
        assert sorted(p.name for p in (out / "tiny_features" / "1.2.0").iterdir()) == [
            "dataset_info.json", "features.json", "label.labels.txt",
            "objects-kind.labels.txt", "tiny_features-test.tfrecord-00000-of-00001",
            "tiny_features-train.tfrecord-00000-of-00001",
        ]  # fmt: skip
        assert exported["train"].info.features == original["train"].info.features
        for split in ("train", "test"):
            for a, b in zip(original[split], exported[split], strict=True):
                assert_same(a, b)
    else:
        from catalog.interop.tfds.codec import ExampleCodec
        from catalog.interop.tfrecord import read_records

        codec = ExampleCodec(original["train"].info.features)
        records = read_records(out / "tiny_features-train.tfrecord-00000-of-00001")
        for a, record in zip(original["train"], records, strict=True):
            assert_same(a, codec.decode(record))


def test_export_of_an_unprepared_dataset_is_a_usage_error(tmp_path: Path) -> None:
    result = run("export", "mnist", "--format", "tfds", "-o", str(tmp_path), data_dir=tmp_path)
    assert result.returncode == 2 and "prepare it first" in result.stderr


def test_info_and_show_on_a_tfds_directory(tmp_path: Path) -> None:
    info = run("info", str(TFDS_ARRAY_RECORD), "--json", data_dir=tmp_path)
    assert info.returncode == 0, info.stderr
    document = json.loads(info.stdout)
    assert document["name"] == "tiny_features" and document["prepared"] is True
    assert list(document)[-6:] == [
        "configs", "default_config", "download_size", "prepared", "data_path", "prepared_size",
    ]  # fmt: skip
    assert document["splits"]["train"]["num_examples"] == 6
    text = run("info", str(TFDS_TFRECORD), data_dir=tmp_path).stdout
    assert "3 classes: cat, dog, bird" in text and "Sequence(Sequence(Scalar))" in text
    grid = tmp_path / "grid.png"
    shown = run("show", str(TFDS_TFRECORD), "--split", "test", "-o", str(grid), data_dir=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "3 examples of tiny_features test" in shown.stdout
    assert grid.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_import_of_a_builder_folder_reading_tfrecords(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`catalog import FOLDER` prepares a builder whose split reads TFRecord files. A user's
    own files come from a local mirror dir (file: URLs are refused in builder specs), here
    offline."""
    source = FIXTURES / "fashion_mnist_style.tfrecord.gz"
    folder = tmp_path / "my_records"
    folder.mkdir()
    url = f"https://data.example.org/records/{source.name}"
    mirror = tmp_path / "mirror"
    (mirror / "data.example.org" / "records").mkdir(parents=True)
    shutil.copy(source, mirror / "data.example.org" / "records" / source.name)
    monkeypatch.setenv("CATALOG_MIRRORS", str(mirror))
    monkeypatch.setenv("CATALOG_OFFLINE", "1")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    (folder / "checksums.tsv").write_text(
        f"{url}\t{source.stat().st_size}\t{digest}\t{source.name}\n"
    )
    (folder / "builder.yaml").write_text(
        "name: my_records\nversion: 1.0.0\nfeatures:\n"
        "  image: {type: Image, shape: [28, 28, 1]}\n"
        "  label: {type: ClassLabel, num_classes: 10}\n"
        f"downloads:\n  train: {{url: '{url}'}}\n"
        "splits:\n  train:\n    format: tfrecord\n    files: {records: train}\n"
        "    options: {keys: {image: image_raw, label: label}, "
        "shapes: {image: 'height,width,depth'}}\n    num_examples: 20\n"
    )
    data = tmp_path / "data"
    result = run("import", str(folder), "--json", data_dir=data)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["splits"] == {"train": 20}
    ds = catalog.data_source(data / "my_records" / "1.0.0", split="train")
    expected = json.loads((FIXTURES / "expected.json").read_text())["fashion_mnist_style"]
    assert [ex["label"] for ex in ds] == [e["label"] for e in expected["examples"]]
    # and back out, by the builder folder: raw images become PNG files in the Examples
    out = tmp_path / "out"
    result = run("export", str(folder), "--format", "tfds", "-o", str(out), data_dir=data)
    assert result.returncode == 0, result.stderr
    exported = catalog.open_tfds(out / "my_records" / "1.0.0", split="train")
    assert exported.features["image"] == catalog.Image((28, 28, 1), encoding="png")
    for a, b in zip(ds, exported, strict=True):
        assert_same(a, b)
