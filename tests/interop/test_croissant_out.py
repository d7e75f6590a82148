"""`catalog croissant NAME`: Croissant 1.0 JSON-LD that mlcroissant validates for every dataset
of the registry, whose record sets mlcroissant reads back from the Parquet export, equal to the
prepared examples; and the web catalog's pages embed it as a data block."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import mlcroissant as mlc
import numpy as np
import pytest

import catalog
from catalog.api.builder import DatasetBuilder
from catalog.api.croissant import croissant_builder
from catalog.interop.croissant.write import to_croissant
from catalog.present.site.entries import Entry
from catalog.present.site.html import POLICY
from catalog.present.site.pages import Picture, dataset_page
from catalog.spec.registry import list_datasets
from catalog.testing.http_server import LoopbackServer

from fixture_builders import photos_builder, table_builder

#: mlcroissant's dependencies warn about their own deprecations (rdflib, pandas).
pytestmark = [
    pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame"),
]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env=os.environ,
    )  # fmt: skip


def every_builder() -> list[DatasetBuilder]:
    builders = []
    for name in list_datasets():
        spec = catalog.builder(name).spec
        builders += [catalog.builder(f"{name}/{c}") for c in spec.configs] or [
            catalog.builder(name)
        ]
    return builders


def test_every_registered_dataset_is_valid_croissant() -> None:
    builders = every_builder()
    assert len(builders) > 30
    for b in builders:
        doc = to_croissant(b.info)
        dataset = mlc.Dataset(jsonld=doc)  # raises ValidationError on any error
        assert not dataset.metadata.ctx.issues.errors, (b.full_name, dataset.metadata.ctx.issues)
        assert dataset.metadata.version == b.version
        splits = [rs.id for rs in dataset.metadata.record_sets if "." not in rs.id]
        assert splits == list(b.spec.splits)
        files = {f["contentUrl"]: f for f in doc["distribution"] if "contentUrl" in f}
        for download in b.spec.downloads.values():  # every source file with its checksum
            if download.manual:  # placed by hand, no checksum published: nothing to point at
                assert download.sha256 is None and download.url not in files, b.full_name
                continue
            assert files[download.url]["sha256"] == download.sha256, b.full_name
            assert files[download.url]["contentSize"] == f"{download.size} B"


def test_the_document_states_metadata_types_and_class_names(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = photos_builder(tmp_path, server)
    result = run("croissant", str(folder))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert doc["@type"] == "sc:Dataset"
    assert (doc["name"], doc["version"], doc["license"]) == ("photos", "1.2.0", "CC-BY-4.0")
    assert doc["citeAs"] == "@misc{photos, title={Photos}}"
    assert doc["url"] == "https://example.org/photos"
    assert doc["keywords"] == ["image", "image-classification"]
    record_sets = {rs["@id"]: rs for rs in doc["recordSet"]}
    assert sorted(record_sets) == ["label.classes", "train"]
    fields = {f["name"]: f for f in record_sets["train"]["field"]}
    assert fields["image"]["dataType"] == "sc:ImageObject"
    assert fields["label"]["dataType"] == "sc:Integer"
    assert fields["label"]["references"] == {"field": {"@id": "label.classes/index"}}
    classes = record_sets["label.classes"]
    assert classes["dataType"] == "sc:Enumeration"
    assert [row["label.classes/name"] for row in classes["data"]] == ["cat", "dog"]
    people = json.loads(run("croissant", str(table_builder(tmp_path, server))).stdout)
    types = {
        f["name"]: f["dataType"] for rs in people["recordSet"] if rs["@id"] == "test"
        for f in rs["field"]
    }  # fmt: skip
    assert types == {
        "name": "sc:Text", "age": "cr:Int32", "height": "cr:Float64", "kind": "sc:Integer",
    }  # fmt: skip
    assert run("croissant", "no_such_dataset").returncode == 2


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, str):
        return value.encode()  # mlcroissant gives text as bytes
    return value


def test_mlcroissant_reads_the_parquet_export_back_equal(
    tmp_path: Path, server: LoopbackServer
) -> None:
    data = tmp_path / "data"
    for make in (photos_builder, table_builder):
        b = catalog.builder(make(tmp_path, server), data_dir=data)
        b.download_and_prepare(download_dir=tmp_path / "downloads")
        out = tmp_path / f"export-{b.name}"
        assert (
            run("export", str(b.data_path), "--format", "parquet", "-o", str(out)).returncode == 0
        )
        result = run("croissant", str(b.data_path))  # a prepared directory, by path
        assert result.returncode == 0, result.stderr
        (out / "croissant.json").write_text(result.stdout)
        dataset = mlc.Dataset(out / "croissant.json")
        for split in b.spec.splits:
            records = list(dataset.records(split))
            ours = list(b.as_data_source(split))
            assert len(records) == len(ours) > 0
            for record, example in zip(records, ours, strict=True):
                got = {key.split("/", 1)[1]: value for key, value in record.items()}
                assert sorted(got) == sorted(example)
                for name, value in example.items():
                    if name == "image":
                        pixels = np.asarray(got[name].convert("RGB"))
                        np.testing.assert_array_equal(pixels, value)
                    else:
                        assert _plain(got[name]) == _plain(value), (split, name)
        # and catalog reads its own Croissant file back: the same examples
        back = croissant_builder(out / "croissant.json", data_dir=tmp_path / "back",
                                 download_dir=tmp_path / "back-dl")  # fmt: skip
        back.download_and_prepare()
        assert sorted(back.spec.splits) == sorted(b.spec.splits)
        for split in b.spec.splits:
            again, ours = back.as_data_source(split), b.as_data_source(split)
            assert len(again) == len(ours)
            for other, example in zip(again, ours, strict=True):
                assert sorted(other) == sorted(example)
                for name, value in example.items():
                    np.testing.assert_array_equal(other[name], value, err_msg=f"{split}.{name}")


def _json_ld(page: str) -> str:
    blocks = re.findall(r'<script type="application/ld\+json">\n(.*?)\n</script>', page, re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_dataset_pages_embed_the_document_as_data(tmp_path: Path, server: LoopbackServer) -> None:
    folder = photos_builder(tmp_path, server)  # its description holds "</script>" and "&"
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    page = dataset_page(Entry(b, b.info, False, 0, True), Picture(note="n"))
    block = _json_ld(page)
    assert "<" not in block and ">" not in block and "&" not in block
    assert json.loads(block) == to_croissant(b.info)
    assert "Cats & dogs </script> of all sizes." in json.loads(block)["description"]
    assert page.index(block) < page.index("</head>")
    assert f'content="{POLICY}"' in page  # the policy stays: data blocks never run
    result = run("site", "-o", str(tmp_path / "site"), str(folder), "--data-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    written = (tmp_path / "site" / "datasets" / "photos.html").read_text()
    assert json.loads(_json_ld(written)) == to_croissant(b.info)


@pytest.mark.parametrize("text", ["\ud800 lone", "</SCRIPT><!--", "\u2028\x85"])
def test_hostile_text_stays_inside_the_block(
    tmp_path: Path, server: LoopbackServer, text: str
) -> None:
    b = catalog.builder(photos_builder(tmp_path, server), data_dir=tmp_path / "data")
    info = b.info.__class__(**{**vars(b.info), "description": text})
    block = _json_ld(dataset_page(Entry(b, info, False, 0, True), Picture(note="n")))
    assert re.search(r"[<>&\u2028\x85]", block) is None
    assert json.loads(block)["description"] == text.replace("\ud800", "\ufffd")
