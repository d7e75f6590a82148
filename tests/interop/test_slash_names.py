"""Feature names holding '/' as TFDS writes them (cats_vs_dogs's ``image/filename``), beside
an ``image`` feature, through every writer and reader: the data source and its decoders,
Parquet export, Croissant out, TFDS export read back, the site."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import catalog
from catalog.errors import FeatureError
from catalog.features import FeaturesDict, Scalar, Text
from catalog.interop.croissant.write import to_croissant
from catalog.interop.parquet.export import export_parquet
from catalog.interop.tfds.export import export as tfds_export
from catalog.testing.http_server import LoopbackServer

from fixture_builders import photo_files, photos_builder

NAMES = sorted(n.rsplit("/", 1)[-1] for n in photo_files())


@pytest.fixture
def prepared(tmp_path: Path, server: LoopbackServer) -> catalog.DatasetBuilder:
    folder = photos_builder(tmp_path, server)
    spec = (folder / "builder.yaml").read_text()
    spec = spec.replace("  label:", "  image/filename: {type: Text}\n  label:")
    spec = spec.replace("{reencode_invalid: true}", "{reencode_invalid: true, "
                        "text_features: {image/filename: name}}")  # fmt: skip
    (folder / "builder.yaml").write_text(spec)
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    b.download_and_prepare(download_dir=tmp_path / "downloads")
    return b


def test_a_slash_name_is_one_feature_everywhere(
    prepared: catalog.DatasetBuilder, tmp_path: Path
) -> None:
    ds = prepared.as_data_source("train")
    assert list(ds.features) == ["image", "image/filename", "label"]
    assert [e["image/filename"] for e in ds] == NAMES
    raw = catalog.data_source(prepared.data_path, split="train",
                              decoders={"image/filename": False})  # fmt: skip
    assert raw[0]["image/filename"] == NAMES[0].encode() and raw[0]["image"].ndim == 3
    pixels = catalog.data_source(prepared.data_path, split="train", decoders={"image": False})
    assert pixels[0]["image/filename"] == NAMES[0] and isinstance(pixels[0]["image"], bytes)

    [parquet] = export_parquet(ds.info, prepared.data_path, tmp_path / "pq").values()
    table = pq.read_table(parquet)
    assert table.column_names == ["image", "image/filename", "label"]
    assert table.column("image/filename").to_pylist() == NAMES

    croissant = json.dumps(to_croissant(ds.info))
    assert '"name": "image/filename"' in croissant

    tfds_export(ds.info, prepared.data_path, tmp_path / "tfds", format="tfds")
    [version] = list((tmp_path / "tfds").glob("*/*"))
    features = json.loads((version / "features.json").read_text())["featuresDict"]["features"]
    assert list(features) == ["image", "image/filename", "label"]
    back = catalog.open_tfds(version, split="train")
    assert [e["image/filename"] for e in back] == NAMES


def test_a_slash_name_that_is_also_a_nested_path_is_refused() -> None:
    with pytest.raises(FeatureError, match="'meta/id' is also the path of a feature inside"):
        FeaturesDict({"meta": {"id": Scalar("int32")}, "meta/id": Text()})
    for bad in ["/id", "id/", "a//b", ""]:
        with pytest.raises(FeatureError, match="'/' only between words"):
            FeaturesDict({bad: Text()})
    ok = FeaturesDict({"image": Text(), "image/filename": Text(), "meta": {"id": Text()}})
    assert ok.feature_at("image/filename") is ok["image/filename"]
    assert ok.feature_at("meta/id") is ok["meta"]["id"]  # type: ignore[index]
    assert ok.feature_at("image/other") is None


def test_the_site_lists_a_slash_name(tmp_path: Path) -> None:
    from catalog.present.site.build import build_site

    report = build_site(tmp_path / "site", ["cats_vs_dogs"], data_dir=tmp_path / "empty")
    [entry] = report.entries
    page = (tmp_path / "site" / entry.page).read_text()
    assert ">image/filename<" in page
