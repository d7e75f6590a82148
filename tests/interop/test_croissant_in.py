"""`catalog prepare path/or/url/to/metadata.json`: a dataset a Croissant file describes, prepared
through the same spec, download layer and readers as a builder.yaml; every record equal to
what mlcroissant itself yields for the same files (served by a loopback HTTP server)."""

from __future__ import annotations

import base64
import copy
import hashlib
import io
import json
import math
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog.api.builder import DatasetBuilder
from catalog.api.croissant import croissant_builder
from catalog.download import DownloadConfig, resolve_config
from catalog.errors import CatalogError, ChecksumError, DownloadError, SpecError
from catalog.features import ClassLabel, Image, Scalar, Text
from catalog.interop.croissant import is_croissant
from catalog.interop.croissant.read import parse
from catalog.interop.croissant.spec import MAX_CROISSANT_SIZE, croissant_spec
from catalog.interop.croissant.write import CONTEXT
from catalog.testing.http_server import LoopbackServer

from fixture_builders import photo, zip_of

CSV = (
    "island,bill_length_mm,year,tagged,mass,species\n"
    "Biscoe,39.1,2007,true,3750.5,Adelie\n"
    "Dream,46.5,2008,false,4200,Gentoo\n"
    '"Torgersen, north",41.05,2009,True,3300.25,Adelie\n'
)


def csv_croissant(url: str, data: bytes, *, size: bool = False) -> dict[str, Any]:
    def column(name: str, kind: str, col: str, **more: Any) -> dict[str, Any]:
        return {
            "@type": "cr:Field", "@id": f"penguins/{name}", "name": name, "dataType": kind,
            "source": {"fileObject": {"@id": "penguins.csv"}, "extract": {"column": col}},
            **more,
        }  # fmt: skip

    file: dict[str, Any] = {
        "@type": "cr:FileObject", "@id": "penguins.csv", "name": "penguins.csv",
        "contentUrl": url, "encodingFormat": "text/csv",
        "sha256": hashlib.sha256(data).hexdigest(),
    }  # fmt: skip
    if size:
        file["contentSize"] = f"{len(data)} B"
    species = {"field": {"@id": "species/name"}}
    return {
        "@context": CONTEXT, "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": "Penguins-Lite", "description": "Three penguins.", "license": "CC0-1.0",
        "url": "https://example.org/penguins", "version": "1.1", "citeAs": "@misc{p}",
        "distribution": [file],
        "recordSet": [
            {
                "@type": "cr:RecordSet", "@id": "species", "name": "species",
                "dataType": "sc:Enumeration", "key": {"@id": "species/name"},
                "field": [{"@type": "cr:Field", "@id": "species/name", "name": "name",
                           "dataType": "sc:Text"}],
                "data": [{"species/name": "Adelie"}, {"species/name": "Gentoo"}],
            },
            {
                "@type": "cr:RecordSet", "@id": "penguins", "name": "penguins",
                "field": [
                    column("island", "sc:Text", "island"),
                    column("bill_length", "sc:Float", "bill_length_mm"),
                    column("year", "sc:Integer", "year"),
                    column("tagged", "sc:Boolean", "tagged"),
                    column("mass", "cr:Float32", "mass"),
                    column("species", "sc:Text", "species", references=species),
                ],
            },
        ],
    }  # fmt: skip


def photo_zip() -> bytes:
    files = {
        "cat/a.png": photo(1, (20, 12), "PNG"),
        "cat/b.jpg": photo(2, (16, 16), "JPEG"),
        "cat/c.png": photo(3, (9, 30), "PNG", "L"),
        "dog/d.jpg": photo(4, (31, 7), "JPEG"),
        "dog/e.png": rgba_png(),
        "README.txt": b"not a photo",
    }
    return zip_of(files, "photos/")


def rgba_png() -> bytes:
    pixels = np.random.default_rng(9).integers(0, 256, (5, 6, 4), dtype=np.uint8)
    buffer = io.BytesIO()
    PILImage.fromarray(pixels, "RGBA").save(buffer, format="PNG")
    return buffer.getvalue()


def folder_croissant(url: str, data: bytes) -> dict[str, Any]:
    source = {"fileSet": {"@id": "photos"}}
    return {
        "@context": CONTEXT, "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": "pets", "description": "Cats and dogs.", "version": "2.0.1",
        "license": "CC-BY-4.0", "url": "https://example.org/pets", "citeAs": "@misc{pets}",
        "distribution": [
            {
                "@type": "cr:FileObject", "@id": "archive", "name": "archive",
                "contentUrl": url, "encodingFormat": "application/zip",
                "contentSize": f"{len(data)} B", "sha256": hashlib.sha256(data).hexdigest(),
            },
            {
                "@type": "cr:FileSet", "@id": "photos", "name": "photos",
                "containedIn": {"@id": "archive"}, "encodingFormat": "image/jpeg",
                "includes": ["photos/*/*.png", "photos/*/*.jpg"],
            },
        ],
        "recordSet": [
            {
                "@type": "cr:RecordSet", "@id": "images", "name": "images",
                "field": [
                    {"@type": "cr:Field", "@id": "images/image", "name": "image",
                     "dataType": "sc:ImageObject",
                     "source": {**source, "extract": {"fileProperty": "content"}}},
                    {"@type": "cr:Field", "@id": "images/label", "name": "label",
                     "dataType": "sc:Text",
                     "source": {**source, "extract": {"fileProperty": "fullpath"},
                                "transform": {"regex": "^photos/([^/]+)/[^/]+$"}}},
                    {"@type": "cr:Field", "@id": "images/file", "name": "file",
                     "dataType": "sc:Text",
                     "source": {**source, "extract": {"fileProperty": "filename"}}},
                ],
            }
        ],
    }  # fmt: skip


#: Run in a child process, so mlcroissant's download cache (fixed when it is imported) is a
#: temporary folder: every record of a record set as JSON (images as their pixels).
_MLCROISSANT = """
import base64, json, sys
import numpy as np
import mlcroissant as mlc

def plain(value):
    if hasattr(value, "convert"):
        pixels = np.asarray(value.convert("RGB"))
        return {"shape": list(pixels.shape), "pixels": base64.b64encode(pixels.tobytes()).decode()}
    if isinstance(value, bytes):
        return {"text": value.decode()}
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist") and value.ndim:
        return [plain(v) for v in value]
    return value.item() if hasattr(value, "item") else value

dataset = mlc.Dataset(sys.argv[1])
rows = [{k.split("/")[-1]: plain(v) for k, v in r.items()} for r in dataset.records(sys.argv[2])]
print(json.dumps(rows))
"""


def mlcroissant_records(path: Path, record_set: str, cache: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "CROISSANT_CACHE": str(cache), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, "-c", _MLCROISSANT, str(path), record_set],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env=os.environ,
    )  # fmt: skip


def _pixels(value: dict[str, Any]) -> np.ndarray[Any, Any]:
    data = np.frombuffer(base64.b64decode(value["pixels"]), np.uint8)
    return data.reshape(value["shape"])


def assert_same(ours: dict[str, Any], theirs: dict[str, Any], features: Any) -> None:
    assert sorted(ours) == sorted(theirs)
    for name, value in ours.items():
        feature, other = features[name], theirs[name]
        if isinstance(feature, Image):
            np.testing.assert_array_equal(value, _pixels(other))
        elif isinstance(feature, ClassLabel):  # mlcroissant gives the class name
            assert feature.names[value] == other["text"], name
        elif isinstance(feature, Text):
            assert value == other["text"], name
        else:
            assert value.item() == other, name


def test_a_csv_croissant_prepares_as_mlcroissant_reads_it(
    tmp_path: Path, server: LoopbackServer
) -> None:
    data = CSV.encode()
    url = server.add("/data/penguins.csv", data)
    path = tmp_path / "penguins.json"
    path.write_text(json.dumps(csv_croissant(url, data)))
    assert is_croissant(path) and is_croissant(url.replace(".csv", ".json"))
    done = run("prepare", str(path), "--data-dir", str(tmp_path / "data"),
               "--download-dir", str(tmp_path / "dl"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "penguins_lite 1.1.0: prepared" in done.stdout
    ds = catalog.data_source(tmp_path / "data" / "penguins_lite" / "1.1.0", split="penguins")
    info = ds.info
    assert (info.license, info.citation, info.homepage) == ("CC0-1.0", "@misc{p}", url_home())
    features = info.features
    assert features["species"].names == ["Adelie", "Gentoo"]
    assert features["mass"].dtype == np.float32 and features["tagged"].dtype == np.bool_
    assert features["year"].dtype == np.int64 and isinstance(features["island"], Text)
    theirs = mlcroissant_records(path, "penguins", tmp_path / "mlc")
    assert len(ds) == len(theirs) == 3
    for ours, other in zip(ds, theirs, strict=True):
        assert_same(ours, other, features)
    assert ds[2]["island"] == "Torgersen, north" and ds[1]["tagged"].item() is False
    again = run("prepare", str(path), "--data-dir", str(tmp_path / "data"),
                "--download-dir", str(tmp_path / "dl"), "--offline")  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "reused" in again.stdout


def url_home() -> str:
    return "https://example.org/penguins"


def test_an_image_folder_croissant_prepares_as_mlcroissant_reads_it(
    tmp_path: Path, server: LoopbackServer
) -> None:
    data = photo_zip()
    url = server.add("/pets.zip", data)
    meta = json.dumps(folder_croissant(url, data)).encode()
    meta_url = server.add("/pets/croissant.json", meta)
    (tmp_path / "pets.json").write_bytes(meta)
    done = run("prepare", meta_url, "--data-dir", str(tmp_path / "data"),
               "--download-dir", str(tmp_path / "dl"), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["datasets"][0]
    assert (entry["name"], entry["version"], entry["status"]) == ("pets", "2.0.1", "prepared")
    ds = catalog.data_source(entry["path"], split="images")
    features = ds.info.features
    assert isinstance(features["label"], Text)  # sc:Text, the regex's group
    theirs = mlcroissant_records(tmp_path / "pets.json", "images", tmp_path / "mlc")
    assert len(ds) == len(theirs) == 5
    for ours, other in zip(ds, theirs, strict=True):
        assert_same(ours, other, features)
    raw = catalog.data_source(entry["path"], split="images", decoders={"image": False})
    assert raw[0]["image"] == photo(1, (20, 12), "PNG")  # a valid file is stored as it is


def _config(tmp_path: Path, **more: Any) -> DownloadConfig:
    return resolve_config(
        DownloadConfig(progress="none", **more), data_dir=tmp_path, download_dir=tmp_path / "dl"
    )


def test_the_spec_is_the_same_one_a_builder_gets(tmp_path: Path, server: LoopbackServer) -> None:
    data = CSV.encode()
    url = server.add("/penguins.csv", data)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(csv_croissant(url, data, size=True)))
    spec = croissant_spec(str(path), _config(tmp_path))
    assert spec.splits["penguins"].format == "croissant"
    assert spec.splits["penguins"].num_examples == 3
    assert spec.downloads["penguins_csv"].size == len(data)
    assert isinstance(spec.features["year"], Scalar)
    info = DatasetBuilder(spec, data_dir=tmp_path / "data").download_and_prepare(
        download_dir=tmp_path / "dl"
    )
    assert info.fingerprint == spec.fingerprint
    assert croissant_spec(str(path), _config(tmp_path)).fingerprint == spec.fingerprint


def test_a_wrong_checksum_is_refused(tmp_path: Path, server: LoopbackServer) -> None:
    data = CSV.encode()
    url = server.add("/penguins.csv", data)
    for size in (False, True):
        doc = csv_croissant(url, data + b"x", size=size)
        path = tmp_path / f"p{size}.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(ChecksumError, match="sha256|size"):
            croissant_spec(str(path), _config(tmp_path))


def test_offline_mirrors_are_honoured(tmp_path: Path, server: LoopbackServer) -> None:
    data = CSV.encode()
    url = server.add("/data/penguins.csv", data)
    mirror = tmp_path / "mirror" / urlsplit(url).netloc / "data"  # <mirror>/<host>/<path>
    mirror.mkdir(parents=True)
    (mirror / "penguins.csv").write_bytes(data)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(csv_croissant(url, data, size=True)))
    config = _config(tmp_path, offline=True, mirrors=[str(tmp_path / "mirror")])
    spec = croissant_spec(str(path), config)
    assert spec.splits["penguins"].num_examples == 3
    assert not any("penguins" in r.path for r in server.requests)  # nothing asked the server


def _unsupported(doc: dict[str, Any], change: Any) -> str:
    doc = copy.deepcopy(doc)
    change(doc)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["recordSet"][1]["field"][2].update(dataType="sc:VideoObject"),
         "not supported yet: dataType sc:VideoObject, field penguins/year"),
        (lambda d: d["recordSet"][1]["field"][0].update(parentField={"@id": "x"}),
         "not supported yet: parentField, field penguins/island"),
        (lambda d: d["recordSet"][1]["field"][0].update(
            subField=[{"@id": "x", "dataType": "sc:VideoObject"}]),
         "not supported yet: dataType sc:VideoObject, field x"),
        (lambda d: d["distribution"][0].update(encodingFormat="application/x-hdf5"),
         "not supported yet: a column or jsonPath of a file of encodingFormat 'file'"),
        (lambda d: d["distribution"][0].update(contentUrl="file:///etc/passwd"),
         "not supported yet: contentUrl 'file:///etc/passwd'"),
    ],
)  # fmt: skip
def test_what_is_not_supported_is_one_clear_error(
    tmp_path: Path, server: LoopbackServer, change: Any, message: str
) -> None:
    data = CSV.encode()
    url = server.add("/penguins.csv", data)
    path = tmp_path / "p.json"
    path.write_text(_unsupported(csv_croissant(url, data, size=True), change))
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        croissant_spec(str(path), _config(tmp_path))
    done = run("prepare", str(path), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert not (tmp_path / "data").exists()


def test_md5_is_checked_and_a_missing_sha256_recorded(
    tmp_path: Path, server: LoopbackServer
) -> None:
    data = CSV.encode()
    url = server.add("/penguins.csv", data)
    doc = csv_croissant(url, data)
    doc["distribution"][0].pop("sha256")
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    spec = croissant_spec(str(path), _config(tmp_path))  # neither: fetched, sha256 recorded
    assert spec.downloads["penguins_csv"].sha256 == hashlib.sha256(data).hexdigest()
    doc["distribution"][0]["md5"] = hashlib.md5(data, usedforsecurity=False).hexdigest()
    path.write_text(json.dumps(doc))
    assert croissant_spec(str(path), _config(tmp_path)).fingerprint == spec.fingerprint
    doc["distribution"][0]["md5"] = "0" * 32
    path.write_text(json.dumps(doc))
    with pytest.raises(ChecksumError, match="md5 mismatch: the Croissant file says 0000"):
        croissant_spec(str(path), _config(tmp_path / "other"))


def _second_record_set(doc: dict[str, Any], fields: int) -> None:
    extra = copy.deepcopy(doc["recordSet"][1])
    extra["@id"] = extra["name"] = "Penguins!"  # becomes split "penguins" too, or differs
    extra["field"] = extra["field"][:fields]
    doc["recordSet"].append(extra)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: _second_record_set(d, 6), "two record sets become split 'penguins'"),
        (lambda d: d["recordSet"][1]["field"][5].update(
            references={"field": {"@id": "nowhere/name"}}),
         "field penguins/species names field 'nowhere/name', which no record set has"),
        (lambda d: d["recordSet"][1]["field"][1]["source"].update(transform={"separator": ","}),
         "not supported yet: transform separator, field penguins/bill_length"),
    ],
)  # fmt: skip
def test_record_sets_that_cannot_be_splits_are_refused(
    tmp_path: Path, server: LoopbackServer, change: Any, message: str
) -> None:
    data = CSV.encode()
    url = server.add("/penguins.csv", data)
    path = tmp_path / "p.json"
    path.write_text(_unsupported(csv_croissant(url, data, size=True), change))
    with pytest.raises(SpecError, match=re.escape(message)):
        croissant_spec(str(path), _config(tmp_path))


def test_a_bad_image_folder_description_fails_before_any_download(
    tmp_path: Path, server: LoopbackServer
) -> None:
    data = photo_zip()
    url = server.add("/pets.zip", data)
    doc = folder_croissant(url, data)
    label = doc["recordSet"][0]["field"][1]["source"]
    for regex, message in (("^(photos/[", "is not one RE2 runs"), (r"^(a)\1", "is not one RE2")):
        label["transform"] = {"regex": regex}
        path = tmp_path / "pets.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(SpecError, match=message):
            croissant_spec(str(path), _config(tmp_path))
    assert server.requests == []
    doc["recordSet"][0]["field"][1]["source"]["transform"] = {"regex": "^photos/([^/]+)/.*"}
    doc["distribution"].append(dict(doc["distribution"][1], **{"@id": "inner", "name": "inner"}))
    doc["distribution"][2] = {
        "@type": "cr:FileObject", "@id": "inner", "name": "inner", "encodingFormat": "text/csv",
        "containedIn": {"@id": "archive"}, "contentUrl": "../../etc/passwd",
    }  # fmt: skip
    doc["recordSet"].append(csv_croissant(url, data)["recordSet"][1])
    for field in doc["recordSet"][1]["field"]:
        field["source"]["fileObject"] = {"@id": "inner"}
    path.write_text(json.dumps(doc))
    with pytest.raises(SpecError, match="must be a relative path inside 'archive'"):
        croissant_spec(str(path), _config(tmp_path))
    assert server.requests == []


def test_the_python_api_gives_a_builder(tmp_path: Path, server: LoopbackServer) -> None:
    data = photo_zip()
    url = server.add("/pets.zip", data)
    path = tmp_path / "pets.json"
    path.write_text(json.dumps(folder_croissant(url, data)))
    b = croissant_builder(path, data_dir=tmp_path / "data", download_dir=tmp_path / "dl")
    assert (b.name, b.version, list(b.spec.splits)) == ("pets", "2.0.1", ["images"])
    assert b.spec.splits["images"].num_examples == 5
    assert not b.is_prepared
    b.download_and_prepare(download_dir=tmp_path / "dl")
    assert [e["file"] for e in b.as_data_source("images")] == ["a.png", "b.jpg", "c.png", "d.jpg",
                                                              "e.png"]  # fmt: skip
    assert is_croissant(path) and not is_croissant(tmp_path / "missing.json")


def test_a_table_inside_an_archive_as_kaggle_publishes_it(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """Kaggle's Croissant files: a CSV FileObject `containedIn` the dataset's zip."""
    data = zip_of({"tables/penguins.tsv": CSV.replace(",", "\t").replace('"Torgersen\t north"',
                                                                         "Torgersen north")
                   .encode()})  # fmt: skip
    url = server.add("/archive.zip", data)
    doc = csv_croissant(url, data, size=True)
    archive = doc["distribution"][0]
    archive.update(
        {"@id": "archive.zip", "name": "archive.zip", "encodingFormat": "application/zip"}
    )
    doc["distribution"].append(
        {"@type": "cr:FileObject", "@id": "penguins.tsv", "name": "penguins.tsv",
         "containedIn": {"@id": "archive.zip"}, "contentUrl": "tables/penguins.tsv",
         "encodingFormat": "text/tab-separated-values"}
    )  # fmt: skip
    for field in doc["recordSet"][1]["field"]:
        field["source"]["fileObject"] = {"@id": "penguins.tsv"}
    path = tmp_path / "kaggle.json"
    path.write_text(json.dumps(doc))
    b = croissant_builder(path, data_dir=tmp_path / "data", download_dir=tmp_path / "dl")
    assert '"kind": "tsv"' in b.spec.splits["penguins"].options["recipe"]
    b.download_and_prepare(download_dir=tmp_path / "dl")
    ds = b.as_data_source("penguins")
    theirs = mlcroissant_records(path, "penguins", tmp_path / "mlc")
    assert len(ds) == len(theirs) == 3
    for ours, other in zip(ds, theirs, strict=True):
        assert_same(ours, other, ds.info.features)
    assert ds[2]["island"] == "Torgersen north"


def _mutations(doc: Any, rng: random.Random) -> Any:
    """`doc` with one node (a value anywhere in it) replaced by a value of another shape."""
    doc = copy.deepcopy(doc)
    holders: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            holders.append((node, key))
            if isinstance(value, (dict, list)):
                walk(value)

    walk(doc)
    node, key = rng.choice(holders)
    node[key] = rng.choice([None, 7, -1.5, True, "x", "", [], {}, ["a", 1], {"@id": 3}, "../.."])
    return doc


def test_malformed_croissant_files_are_one_error(tmp_path: Path) -> None:
    rng = random.Random(24)
    data = CSV.encode()
    docs = [
        csv_croissant("http://127.0.0.1:9/p.csv", data, size=True),
        folder_croissant("http://127.0.0.1:9/pets.zip", data),
    ]
    outcomes, messages = set(), []
    for i in range(400):
        doc = _mutations(docs[i % 2], rng)
        try:
            parse(doc, "m.json")
            outcomes.add("parsed")
        except CatalogError as error:  # SpecError, or FeatureError for bad class names
            messages.append(str(error))
            outcomes.add(type(error).__name__)
    assert {"parsed", "SpecError"} <= outcomes
    assert all("\n" not in m and m.startswith("m.json: ") for m in messages)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SpecError, match="not JSON"):
        croissant_spec(str(deep), _config(tmp_path))


def test_a_croissant_url_is_read_within_a_size_limit(
    tmp_path: Path, server: LoopbackServer
) -> None:
    huge = b"[" + b" " * (MAX_CROISSANT_SIZE + 4 * 1024 * 1024) + b"]"
    url = server.add("/huge/croissant.json", huge)
    with pytest.raises(DownloadError, match=f"larger than {MAX_CROISSANT_SIZE} bytes"):
        croissant_spec(url, _config(tmp_path))
    held = [p.stat().st_size for p in (tmp_path / "dl").rglob("*") if p.is_file()]
    assert max(held, default=0) <= MAX_CROISSANT_SIZE  # the rest was never written
    done = run("prepare", url, "--data-dir", str(tmp_path / "data"), "--download-dir",
               str(tmp_path / "dl"))  # fmt: skip
    assert done.returncode == 3, done.stderr
    *progress, line = done.stderr.strip().splitlines()
    assert "larger than" in line and "--verbose lists every source tried" in line
    assert all(p.startswith("downloading ") for p in progress)


def _parquet_croissant(folder: Path) -> Path:
    """A Parquet file pyarrow writes with nulls in text, integer, float and list columns and
    list columns of text and integers, and a Croissant file of it beside it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir()
    table = pa.table({
        "name": ["a", None, "c", "d"],
        "tags": [["1", "2"], [], None, ["x"]],
        "n": [1, None, 3, 4],
        "x": [1.5, None, 2.0, -0.5],
        "ids": [[1, 2], [3], [4, 5, 6], []],
    })  # fmt: skip
    pq.write_table(table, folder / "stats.parquet")
    data = (folder / "stats.parquet").read_bytes()

    def field(name: str, kind: str) -> dict[str, Any]:
        source = {"fileObject": {"@id": "stats.parquet"}, "extract": {"column": name}}
        return {"@type": "cr:Field", "@id": f"rows/{name}", "name": name, "dataType": kind,
                "source": source}  # fmt: skip

    doc = {
        "@context": CONTEXT, "@type": "sc:Dataset", "name": "stats",
        "conformsTo": "http://mlcommons.org/croissant/1.0", "version": "1.0.0",
        "distribution": [{
            "@type": "cr:FileObject", "@id": "stats.parquet", "name": "stats.parquet",
            "contentUrl": "stats.parquet", "encodingFormat": "application/x-parquet",
            "sha256": hashlib.sha256(data).hexdigest(),
        }],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "rows", "name": "rows", "field": [
            field("name", "sc:Text"), field("tags", "sc:Text"), field("n", "sc:Integer"),
            field("x", "sc:Float"), field("ids", "sc:Integer"),
        ]}],
    }  # fmt: skip
    (folder / "metadata.json").write_text(json.dumps(doc))
    return folder / "metadata.json"


def test_nulls_and_lists_are_what_mlcroissant_gives_never_their_text(tmp_path: Path) -> None:
    """Parquet list columns are Sequence features holding mlcroissant's lists (never the
    text "['1']"); a null (mlcroissant's None) is one error naming the field and --fill,
    never the text 'None'; with --fill, the fill, every other value mlcroissant's."""
    path = _parquet_croissant(tmp_path / "stats")
    theirs = mlcroissant_records(path, "rows", tmp_path / "mlc")
    data = ["--data-dir", str(tmp_path / "data"), "--download-dir", str(tmp_path / "dl")]
    refused = run("prepare", str(path), *data)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert re.search(r"field rows/(n|name): a missing value .*--fill (n|name)=VALUE",
                     refused.stderr), refused.stderr  # fmt: skip
    assert not (tmp_path / "data" / "stats" / "1.0.0").exists()  # nothing half written
    done = run("prepare", str(path), *data, "--fill", "name=", "--fill", "n=-1",
               "--fill", "tags=[]")  # fmt: skip
    assert done.returncode == 0, done.stderr
    ds = catalog.data_source(tmp_path / "data" / "stats" / "1.0.0", split="rows")
    features = ds.info.features
    assert repr(features["tags"]) == "Sequence(Text())"
    assert repr(features["ids"]) == "Sequence(Scalar('int64'))"
    fills = {"name": "", "n": -1, "tags": []}
    assert len(ds) == len(theirs) == 4
    for ours, other in zip(ds, theirs, strict=True):
        for name, value in other.items():
            got = ours[name].tolist() if hasattr(ours[name], "tolist") else ours[name]
            if value is None and name == "x":
                assert math.isnan(got)  # a float's own missing value
                continue
            if isinstance(value, list):
                value = [v["text"] if isinstance(v, dict) else v for v in value]
            elif isinstance(value, dict):
                value = value["text"]
            assert got == (fills[name] if value is None else value), name
    assert [r["tags"] for r in ds] == [["1", "2"], [], [], ["x"]]
    assert [r["name"] for r in ds] == ["a", "", "c", "d"]


def test_a_repeated_field_is_a_sequence(tmp_path: Path) -> None:
    """``isArray`` (Croissant 1.1) and ``repeated`` (1.0, what catalog writes) make a
    Sequence of the element's feature; a list of what a Sequence here cannot hold is one
    clear error."""
    path = _parquet_croissant(tmp_path / "stats")
    doc = json.loads(path.read_text())
    fields = doc["recordSet"][0]["field"]
    fields[1]["isArray"] = True
    fields[4]["repeated"] = True
    features = parse(doc, str(path)).splits["rows"].features
    assert repr(features["tags"]) == "Sequence(Text())"
    assert repr(features["ids"]) == "Sequence(Scalar('int64'))"
    fields[1]["dataType"] = "sc:ImageObject"
    with pytest.raises(SpecError, match="not supported yet: repeated Image, field rows/tags"):
        parse(doc, str(path))
