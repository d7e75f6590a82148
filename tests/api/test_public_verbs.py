"""Every command is a call of a public function (docs/architecture.md, "the CLI a thin layer"):
`catalog.show_dataset`, `catalog.croissant_metadata`, `catalog.build_site` and
`catalog.remove(..., downloads=True)` give what ``catalog show``, ``catalog croissant``,
``catalog site`` and ``catalog rm --downloads`` print or write, on a real prepared dataset."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import catalog
from catalog.cli import main
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder


@pytest.fixture
def prepared(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(builder folder, data dir, download dir) of a dataset of 12 images, prepared."""
    data, downloads = tmp_path / "data", tmp_path / "downloads"
    with LoopbackServer() as server:
        folder = idx_builder(tmp_path, server, 12)
        catalog.builder(folder, data_dir=data).download_and_prepare(download_dir=downloads)
    return folder, data, downloads


def test_show_dataset_draws_what_catalog_show_writes(
    prepared: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    folder, data, _ = prepared
    shown = catalog.show_dataset(folder, num_examples=4, seed=1, data_dir=data)
    assert shown.about.kind == "image" and shown.split == "train" and shown.count == 4
    assert shown.picture is not None and shown.text is None
    out = tmp_path / "grid.png"
    args = ["show", str(folder), "-n", "4", "--seed", "1", "-o", str(out), "--data-dir", str(data)]
    assert main(args) == 0
    assert np.array_equal(np.asarray(Image.open(out)), np.asarray(shown.picture))
    with pytest.raises(catalog.NotPreparedError):
        catalog.show_dataset(folder, data_dir=tmp_path / "empty")


def test_croissant_metadata_is_what_catalog_croissant_prints(
    prepared: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, data, _ = prepared
    metadata = catalog.croissant_metadata(folder, data_dir=data)
    assert metadata["@type"] == "sc:Dataset" and metadata["name"] == "tiny"
    assert main(["croissant", str(folder), "--data-dir", str(data)]) == 0
    assert json.loads(capsys.readouterr().out) == metadata


def test_build_site_writes_the_site_catalog_site_writes(
    prepared: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    folder, data, _ = prepared
    report = catalog.build_site(tmp_path / "site", [str(folder)], data_dir=data)
    assert [e.full_name for e in report.entries] == ["tiny"] and not report.problems
    assert report.grids == 1  # prepared, with images: its example grid drawn
    assert main(["site", "-o", str(tmp_path / "again"), str(folder), "--data-dir", str(data)]) == 0
    for page in ("index.html", report.entries[0].page):
        assert (tmp_path / "site" / page).read_bytes() == (tmp_path / "again" / page).read_bytes()


def test_remove_with_downloads_removes_the_cached_files(prepared: tuple[Path, Path, Path]) -> None:
    folder, data, downloads = prepared
    cached = sorted(p.name for p in downloads.iterdir() if p.is_file())
    assert len(cached) == 2  # the images and the labels
    asked = catalog.remove(
        folder, data_dir=data, downloads=True, download_dir=downloads, dry_run=True
    )
    assert asked.found and asked.downloads is not None and asked.downloads.files == 2
    assert sorted(p.name for p in downloads.iterdir() if p.is_file()) == cached  # dry run
    done = catalog.remove(folder, data_dir=data, downloads=True, download_dir=downloads)
    assert done.found and done.downloads is not None
    assert done.downloads.files == 2 and done.downloads.size > 0
    assert not [p for p in downloads.iterdir() if p.is_file()]
    assert catalog.builder(folder, data_dir=data).open() is None
    kept = catalog.remove(folder, data_dir=data)  # without downloads=True: not asked
    assert not kept.found and kept.downloads is None
