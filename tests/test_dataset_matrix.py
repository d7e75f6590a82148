"""Every command and the Python calls on every kind of dataset, in a local data dir and in a
bucket (S3 on moto): the same answers, or one clear error where a combination cannot apply.

The kinds: a registered dataset (not prepared: offline, its upstream files cannot be
fetched), a builder folder, a CSV file and an image folder prepared by path, a Croissant file,
and a TFDS directory imported with `catalog import`. Each is prepared once per data dir (a
module-scoped fixture); the commands then name it as a user would: the registered name, the
builder folder's path, or the name it was prepared as. `rm` runs last and the dataset is then
gone from `list --prepared`. Each command runs in a process of its own, as users run it:
forked from a server that has imported catalog (`cli_forks`), which saves the second or two of
imports each of the hundred commands would cost.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.errors import CatalogError
from catalog.interop.croissant.write import CONTEXT
from catalog.testing.http_server import LoopbackServer

from cli_forks import CatalogForks
from conftest import catalog_cli, idx_builder
from s3server import S3Server, forget_filesystems

pytest.importorskip("moto")

ROOT = Path(__file__).resolve().parent
TFDS_DIR = ROOT / "fixtures" / "tf" / "tfds_tfrecord" / "tiny_features" / "1.2.0"
CSV = "city,temp,label\nOslo,3.5,cold\nRome,18.25,warm\nCairo,30.0,warm\nNuuk,-8.0,cold\n"
KINDS = ["registered", "builder", "csv", "images", "croissant", "tfds"]
DIRS = ["local", "s3"]


@dataclass
class Source:
    """One dataset as the commands name it, its first split, and whether it is prepared."""

    arg: str
    split: str
    prepared: bool = True
    has_builder: bool = True


@dataclass
class World:
    data_dirs: dict[str, str]
    sources: dict[tuple[str, str], Source]
    root: Path
    cli: CatalogForks


def _croissant(url: str, data: bytes) -> dict[str, object]:
    def column(name: str, kind: str) -> dict[str, object]:
        return {
            "@type": "cr:Field", "@id": f"weather/{name}", "name": name, "dataType": kind,
            "source": {"fileObject": {"@id": "weather.csv"}, "extract": {"column": name}},
        }  # fmt: skip

    return {
        "@context": CONTEXT, "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": "Weather-Lite", "description": "Four cities.", "license": "CC0-1.0",
        "url": "https://example.org/weather", "version": "1.0.0",
        "distribution": [{
            "@type": "cr:FileObject", "@id": "weather.csv", "name": "weather.csv",
            "contentUrl": url, "encodingFormat": "text/csv",
            "sha256": hashlib.sha256(data).hexdigest(),
        }],
        "recordSet": [{
            "@type": "cr:RecordSet", "@id": "weather", "name": "weather",
            "field": [column("city", "sc:Text"), column("temp", "sc:Float")],
        }],
    }  # fmt: skip


def _image_folder(root: Path) -> Path:
    from PIL import Image

    for label, colour in (("cat", (200, 30, 30)), ("dog", (30, 30, 200))):
        (root / label).mkdir(parents=True)
        for i in range(3):
            Image.new("RGB", (8 + i, 6), colour).save(root / label / f"{i}.png")
    return root


def _ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


@pytest.fixture(scope="module")
def forks() -> Iterator[CatalogForks]:
    with CatalogForks() as server:
        yield server


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, forks: CatalogForks) -> Iterator[World]:
    run = forks.run
    root = tmp_path_factory.mktemp("matrix")
    with pytest.MonkeyPatch.context() as mp, LoopbackServer() as server, S3Server() as s3:
        for key, value in s3.env().items():
            mp.setenv(key, value)
        mp.setenv("CATALOG_DOWNLOAD_DIR", str(root / "downloads"))
        mp.setenv("CATALOG_CACHE_DIR", str(root / "cache"))
        mp.delenv("CATALOG_DATA_DIR", raising=False)
        s3.make_bucket("matrix")
        forget_filesystems()
        builder = idx_builder(root, server, 12, name="tinyidx")
        (root / "table.csv").write_text(CSV)
        photos = _image_folder(root / "photos")
        data = CSV.encode()
        url = server.add("/weather/weather.csv", data)
        croissant = root / "weather.json"
        croissant.write_text(json.dumps(_croissant(url, data)))
        dirs = {"local": str(root / "data"), "s3": "s3://matrix/team"}
        here = root / "cwd"  # the user's working dir: nothing may be written there
        here.mkdir()
        mp.chdir(here)
        sources = {}
        for where, data_dir in dirs.items():
            _ok(run("prepare", str(builder), str(croissant), "-q", "--data-dir", data_dir))
            _ok(run("prepare", str(root / "table.csv"), "--name", "mytable", "-q",
                    "--label", "label", "--data-dir", data_dir))  # fmt: skip
            _ok(run("prepare", str(photos), "--name", "photos", "-q", "--data-dir", data_dir))
            _ok(run("import", str(TFDS_DIR), "--name", "imported", "--data-dir", data_dir))
            sources[where, "registered"] = Source("mnist", "train", prepared=False)
            sources[where, "builder"] = Source(str(builder), "train")
            sources[where, "csv"] = Source("mytable", "train")
            sources[where, "images"] = Source("photos", "train")
            sources[where, "croissant"] = Source("weather_lite", "weather")
            sources[where, "tfds"] = Source("imported", "train", has_builder=False)
        assert not list(here.iterdir())
        yield World(dirs, sources, root, forks)
        forget_filesystems()


CASES = [(where, kind) for where in DIRS for kind in KINDS]
IDS = [f"{where}-{kind}" for where, kind in CASES]


def _case(world: World, where: str, kind: str) -> tuple[Source, str]:
    return world.sources[where, kind], world.data_dirs[where]


def _one_error(result: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("catalog: error:"), result.stderr
    return lines[0]


@pytest.mark.parametrize(("where", "kind"), CASES, ids=IDS)
def test_info_says_where_it_is_prepared(world: World, where: str, kind: str) -> None:
    source, data_dir = _case(world, where, kind)
    doc = json.loads(
        _ok(world.cli.run("info", source.arg, "--json", "--data-dir", data_dir)).stdout
    )
    assert doc["prepared"] is source.prepared
    assert doc["data_path"].startswith(data_dir if where == "s3" else str(Path(data_dir)))
    assert source.split in doc["splits"]


@pytest.mark.parametrize(("where", "kind"), CASES, ids=IDS)
def test_show_verify_export_croissant(world: World, where: str, kind: str, tmp_path: Path) -> None:
    source, data_dir = _case(world, where, kind)
    croissant = json.loads(
        _ok(world.cli.run("croissant", source.arg, "--data-dir", data_dir)).stdout
    )
    assert croissant["@type"] == "sc:Dataset"
    show = world.cli.run(
        "show", source.arg, "-o", str(tmp_path / "grid.png"), "--data-dir", data_dir
    )
    verify = world.cli.run("verify", source.arg, "--json", "--data-dir", data_dir)
    out = tmp_path / "export"
    export = world.cli.run("export", source.arg, "--format", "tfrecord", "-o", str(out),
                           "--data-dir", data_dir)  # fmt: skip
    if not source.prepared:  # one clear error each, naming the command that prepares it
        for result in (show, verify, export):
            assert "catalog prepare mnist" in _one_error(result)
        return
    _ok(show)
    assert json.loads(_ok(verify).stdout)["ok"] is True
    _ok(export)
    assert list(out.glob("*.tfrecord*"))


@pytest.mark.parametrize(("where", "kind"), CASES, ids=IDS)
def test_python_calls(world: World, where: str, kind: str) -> None:
    source, data_dir = _case(world, where, kind)
    if not source.prepared:
        b = catalog.builder(source.arg, data_dir=data_dir)
        assert not b.is_prepared
        with pytest.raises(catalog.NotPreparedError, match="catalog prepare mnist"):
            catalog.data_source(source.arg, data_dir=data_dir, split="train", download=False)
        return
    ds = catalog.data_source(source.arg, data_dir=data_dir, split=source.split)
    assert len(ds) > 0 and isinstance(ds[0], dict)
    every = catalog.data_source(source.arg, data_dir=data_dir)
    assert source.split in every
    if source.has_builder:
        b = catalog.builder(source.arg, data_dir=data_dir)
        assert b.is_prepared and b.info.splits[source.split].num_examples == len(ds)
        first = b.as_data_source(source.split)[0]
        for key, value in ds[0].items():
            assert np.array_equal(np.asarray(value), np.asarray(first[key]))
    else:  # imported from TFDS: data, no builder to prepare it again
        with pytest.raises(catalog.DatasetNotFoundError, match="data_source"):
            catalog.builder(source.arg, data_dir=data_dir)
    checked = catalog.verify(source.arg, data_dir=data_dir)
    assert checked.ok and checked.num_examples >= len(ds)
    names = {d.name for d in catalog.list_prepared(data_dir)}
    assert ds.info.full_name in names


@pytest.mark.parametrize("where", DIRS)
def test_site_and_list_prepared(world: World, where: str, tmp_path: Path) -> None:
    data_dir = world.data_dirs[where]
    listed = json.loads(
        _ok(world.cli.run("list", "--prepared", "--json", "--data-dir", data_dir)).stdout
    )
    names = {e["name"] for e in listed}
    assert {"tinyidx", "mytable", "photos", "weather_lite", "imported"} <= names
    builder = world.sources[where, "builder"].arg
    site = world.cli.run("site", "-o", str(tmp_path / "site"), "mnist", builder, "mytable",
                         "photos", "weather_lite", "--data-dir", data_dir)  # fmt: skip
    _ok(site)
    assert "5 dataset pages" in site.stdout


@pytest.mark.parametrize("command", ["info", "show", "verify", "rm", "export", "croissant",
                                     "list", "site", "prepare", "import"])  # fmt: skip
@pytest.mark.parametrize("bad", ["file", "scheme"])
def test_a_data_dir_that_is_a_file_or_of_an_unknown_scheme_is_one_error(
    tmp_path: Path, command: str, bad: str, forks: CatalogForks
) -> None:
    data_dir = str(tmp_path / "a-file") if bad == "file" else "ftp://host/data"
    (tmp_path / "a-file").write_text("not a directory")
    args = {
        "info": ["info", "mytable"],
        "show": ["show", "mytable"],
        "verify": ["verify", "mytable"],
        "rm": ["rm", "mytable"],
        "export": ["export", "mytable", "--format", "tfds", "-o", str(tmp_path / "out")],
        "croissant": ["croissant", "mytable"],
        "list": ["list", "--prepared"],
        "site": ["site", "-o", str(tmp_path / "site"), "mnist"],
        "prepare": ["prepare", "mnist"],
        "import": ["import", str(TFDS_DIR)],
    }[command]
    line = _one_error(forks.run(*args, "--data-dir", data_dir))
    if bad == "file":
        assert "is a file, not a directory" in line and "--data-dir" in line
    else:
        assert "ftp://" in line and "s3://" in line


def test_writing_into_https_is_one_clear_error(tmp_path: Path) -> None:
    line = _one_error(catalog_cli("import", str(TFDS_DIR), "--data-dir", "https://example.org/d"))
    assert "read-only" in line


def test_python_calls_refuse_a_data_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    for call in (
        lambda: catalog.list_prepared(tmp_path / "f"),
        lambda: catalog.builder("mnist", data_dir=tmp_path / "f"),
        lambda: catalog.data_source("mytable", data_dir=tmp_path / "f"),
    ):
        with pytest.raises(CatalogError, match="is a file, not a directory"):
            call()


def _listed(world: World, data_dir: str) -> set[str]:
    result = _ok(world.cli.run("list", "--prepared", "--json", "--data-dir", data_dir))
    return {entry["name"] for entry in json.loads(result.stdout)}


@pytest.mark.parametrize("where", DIRS)
def test_rm_removes_each_and_list_no_longer_shows_them(world: World, where: str) -> None:
    """Last: every kind removed by the name the user knows it by (one command for all)."""
    data_dir = world.data_dirs[where]
    args = [world.sources[where, kind].arg for kind in KINDS]
    removed = _ok(world.cli.run("rm", *args, "--data-dir", data_dir)).stdout.splitlines()
    assert len(removed) == len(KINDS), removed
    for kind, line in zip(KINDS, removed, strict=True):
        expected = ": removed " if world.sources[where, kind].prepared else "nothing to remove"
        assert expected in line, (kind, line)
    assert not _listed(world, data_dir) & {
        "tinyidx",
        "mytable",
        "photos",
        "weather_lite",
        "imported",
    }
    assert catalog.list_prepared(data_dir) == []


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
