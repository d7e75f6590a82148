"""`catalog.export_dataset` and `catalog.import_dataset`, the functions `catalog export` and
`catalog import` call: a dataset exported as a TFDS directory comes back by import with the
same examples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder


def test_export_as_tfds_then_import_gives_the_same_examples(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        folder = idx_builder(tmp_path, server, 30)
        catalog.builder(folder, data_dir=tmp_path / "data").download_and_prepare()
    written = catalog.export_dataset(
        folder, tmp_path / "tfds", format="tfds", data_dir=tmp_path / "data"
    )
    assert (written / "dataset_info.json").is_file() and (written / "features.json").is_file()
    info, target = catalog.import_dataset(written, data_dir=tmp_path / "other", name="again")
    assert info.name == "again" and Path(str(target)).is_relative_to(tmp_path / "other")
    before = catalog.data_source(folder, split="train", data_dir=tmp_path / "data")
    after = catalog.data_source("again", split="train", data_dir=tmp_path / "other")
    assert len(before) == len(after) == 30  # type: ignore[arg-type]
    for i in (0, 17, 29):
        for key in ("image", "label"):
            np.testing.assert_array_equal(before[i][key], after[i][key])  # type: ignore[index]


def test_import_of_neither_a_tfds_dir_nor_a_builder_folder_says_so(tmp_path: Path) -> None:
    with pytest.raises(catalog.DatasetNotFoundError, match="neither a TFDS-prepared directory"):
        catalog.import_dataset(tmp_path, data_dir=tmp_path / "data")


def test_export_of_a_dataset_not_prepared_says_so(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        folder = idx_builder(tmp_path, server, 5)
    with pytest.raises(catalog.NotPreparedError):
        catalog.export_dataset(folder, tmp_path / "out", format="tfrecord", data_dir=tmp_path)


def test_an_unknown_export_format_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="format 'jsonl': catalog exports tfrecord, tfds, parquet"):
        catalog.export_dataset("no_such_dataset", tmp_path / "out", format="jsonl")  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()
