"""Builder specs: malformed ones name the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

import catalog
from catalog.errors import DatasetNotFoundError, SpecError
from catalog.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
GOOD = (ROOT / "builders" / "mnist" / "builder.yaml").read_text()


def spec_with(tmp_path: Path, old: str, new: str) -> Path:
    assert old in GOOD
    (tmp_path / "builder.yaml").write_text(GOOD.replace(old, new, 1))
    return tmp_path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("name: mnist", "name: Bad Name", "field 'name': invalid value 'Bad Name'"),
        ("version: 3.0.1", "version: 3", "field 'version': expected str, got 3"),
        (
            "    num_examples: 60000",
            "    num_examples: lots",
            "field 'splits.train.num_examples': expected int",
        ),
        (
            "    format: idx",
            "    format: parquet",
            "field 'splits.train.format': unknown format 'parquet'",
        ),
        (
            "{images: train_images,",
            "{images: nope,",
            "field 'splits.train.files.images': no download named 'nope'",
        ),
        (
            "label: {type: ClassLabel, num_classes: 10}",
            "label: {type: Label}",
            "field 'features': unknown feature type 'Label'",
        ),
        (
            "supervised_keys: [image, label]",
            "supervised_keys: [image, target]",
            "field 'supervised_keys'",
        ),
        ("name: mnist", "name: [oops", "not valid YAML"),
    ],
)
def test_malformed_spec_names_file_and_field(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    folder = spec_with(tmp_path, old, new)
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("{", r"\{")) as info:
        load_spec(folder)
    assert str(folder / "builder.yaml") in str(info.value)


def test_bad_checksum_line_names_file_and_line(tmp_path: Path) -> None:
    folder = spec_with(tmp_path, "name: mnist", "name: mnist")
    (folder / "checksums.tsv").write_text("# comment\nhttp://x/a.gz\t12\tnot-a-sha\n")
    with pytest.raises(SpecError, match=r"checksums.tsv:2: expected 'url<TAB>size<TAB>sha256"):
        load_spec(folder)


def test_builder_folder_by_path(tmp_path: Path) -> None:
    spec = load_spec(ROOT / "builders" / "kmnist")
    assert spec.downloads["train_images"].filename == "train-images-idx3-ubyte.gz"
    assert catalog.builder(ROOT / "builders" / "kmnist").name == "kmnist"
    with pytest.raises(DatasetNotFoundError, match="has no builder.yaml"):
        catalog.builder(tmp_path)


def test_list_datasets() -> None:
    assert catalog.list_datasets() == ["fashion_mnist", "kmnist", "mnist"]
