"""Croissant files as their publishers wrote them, found in public repositories with their
data (tests/data/real_croissant/<name>/, each with its PROVENANCE.md): every record set
prepared offline by catalog equals, record for record, what mlcroissant itself yields for
the same files. Where a file names its data by a URL (Kaggle's archive), catalog reads it
from a ``--mirror`` directory holding it under that URL and mlcroissant from the same bytes
named locally; a GitHub-hosted dataset (a ``git+https`` repository FileObject) is read from
its checkout, mlcroissant reading the same Croissant file without that FileObject. The Hugging
Face Hub's export (a ``git+https`` FileObject of the repository's ``refs/convert/parquet``
branch) is listed through the Hub's API: catalog asks a mirror on 127.0.0.1 answering in the
Hub's layout (the API's listing of the branch, the Parquet files under it) for the files
mlcroissant reads from the branch's checkout."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

import catalog
from catalog.features import ClassLabel, Scalar, Sequence, Text
from catalog.interop.croissant.recipe import feature_name
from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli

REAL = Path(__file__).parent.parent / "data" / "real_croissant"
#: The @context of mlcommons' own examples.
STANDARD_CONTEXT = json.loads(
    (REAL.parent / "croissant" / "simple-split" / "metadata.json").read_text()
)["@context"]


@dataclass(frozen=True)
class Case:
    """One real Croissant file: where it lies in its folder, the record sets it holds, the
    files its URLs name (``{URL: file in the folder}``) and the fills its nulls need."""

    folder: str
    croissant: str
    record_sets: tuple[str, ...]
    urls: dict[str, str] = field(default_factory=dict)
    fills: dict[str, dict[str, str]] = field(default_factory=dict)
    #: mlcroissant refuses the file as published (its @context maps ``name`` elsewhere):
    #: compared with mlcroissant's records of it under the standard @context.
    standard_context: bool = False
    #: Where the files of the ``git+https`` repository lie in the folder (its checkout), for
    #: mlcroissant: the Croissant file it reads is written there.
    checkout: str = ""
    #: The Hub's Parquet files as its API lists them (``{URL: file in the folder}``), served
    #: to catalog by a mirror on 127.0.0.1 with the API's listing of them.
    hub: dict[str, str] = field(default_factory=dict)


CASES = [
    # the Croissant editor's GitHub pattern: data/metadata.json inside its repository
    Case("sm3_text_to_query", "data/metadata.json", ("csv",)),
    # a statistics table in Parquet: list columns declared sc:Text (mlcroissant's lists),
    # nulls in text fields (mlcroissant's None: --fill) and in a float field (NaN)
    Case("nlrb_stats", "croissant.json", ("cells",),
         fills={"cells": {"value_raw": "", "parse_uncertainty": "(none)"}},
         standard_context=True),
    # Kaggle's export: a zip archive by URL (md5 in base64), a FileObject per CSV inside it
    Case(
        "catechol_kaggle", "metadata.json",
        ("acs_pca_descriptors_lookup.csv", "catechol_full_data_yields.csv",
         "catechol_single_solvent_yields.csv", "claisen_data_clean.csv", "smiles_lookup.csv",
         "spange_descriptors_lookup.csv"),
        urls={"https://www.kaggle.com/api/v1/datasets/download/aichemy/catechol-benchmark"
              "?datasetVersionNumber=4": "archive.zip"},
    ),
    # the Hugging Face Hub's export: the refs/convert/parquet branch as a git+https FileObject,
    # a FileSet of its Parquet files, the split from each file's path, float arrays
    # (isArray, arrayShape 19), an inline record set of the splits
    Case(
        "hf_apple_storage", "metadata.json", ("default", "default_splits"),
        checkout="data/repo",
        hub={"https://huggingface.co/api/datasets/pollen-robotics/apple_storage/parquet/default/"
             "train/0.parquet": "data/repo/default/train/0000.parquet"},
    ),
]  # fmt: skip

#: Run in a child process (mlcroissant's cache is fixed when imported): the records of each
#: record set as JSON, or the one line mlcroissant failed with.
_MLCROISSANT = """
import json, sys
import mlcroissant as mlc

def plain(value):
    if isinstance(value, bytes):
        return {"text": value.decode()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    return value.item() if hasattr(value, "item") else value

try:
    dataset = mlc.Dataset(sys.argv[1])
except Exception as error:
    print(json.dumps({"": str(error).strip().splitlines()[0]}))
    sys.exit(0)
out = {}
for record_set in sys.argv[2:]:
    try:
        out[record_set] = [{k: plain(v) for k, v in r.items()} for r in dataset.records(record_set)]
    except Exception as error:
        out[record_set] = str(error).splitlines()[0] if str(error) else type(error).__name__
print(json.dumps(out))
"""


def _theirs(croissant: Path, record_sets: tuple[str, ...], cache: Path) -> dict[str, Any]:
    env = {**os.environ, "CROISSANT_CACHE": str(cache), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, "-c", _MLCROISSANT, str(croissant), *record_sets],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _local_for_mlcroissant(case: Case, top: Path) -> Path:
    """The Croissant file as mlcroissant reads it offline, at the folder's top: a URL named
    by its local file, a git repository FileObject left out (its FileSets' paths are the
    checkout's)."""
    doc = json.loads((top / case.croissant).read_text())
    if case.standard_context:
        doc["@context"] = STANDARD_CONTEXT
    repos = [d["@id"] for d in doc["distribution"] if d.get("encodingFormat") == "git+https"]
    doc["distribution"] = [d for d in doc["distribution"] if d["@id"] not in repos]
    for node in doc["distribution"]:
        if node.get("contentUrl") in case.urls:
            node["contentUrl"] = case.urls[node["contentUrl"]]
        contained = node.get("containedIn")
        if isinstance(contained, dict) and contained.get("@id") in repos:
            del node["containedIn"]
    out = top / case.checkout / "mlcroissant_local.json"
    out.write_text(json.dumps(doc))
    return out


def _hub_mirror(case: Case, top: Path, server: LoopbackServer) -> str:
    """A mirror on 127.0.0.1 answering ``<host>/<path>`` for the Hub's API: its listing of
    the branch's Parquet files (``{config: {split: [URL, ...]}}``) and each file."""
    listing: dict[str, dict[str, list[str]]] = {}
    for url, name in case.hub.items():
        parts = urlsplit(url)
        server.add(f"/{parts.netloc}{parts.path}", (top / name).read_bytes())
        config, split = parts.path.split("/")[-3:-1]
        listing.setdefault(config, {}).setdefault(split, []).append(url)
        api = f"/{parts.netloc}{parts.path.rsplit('/', 3)[0]}"
    server.add(api, json.dumps(listing).encode())
    return server.url("/")


def _mirror(case: Case, top: Path, mirror: Path) -> None:
    """A ``--mirror`` directory holding each URL's file (`wget -x`'s layout)."""
    for url, name in case.urls.items():
        parts = urlsplit(url)
        target = mirror / parts.netloc / parts.path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(top / name, target)


def _fields(top: Path, case: Case, record_set: str) -> dict[str, str]:
    """mlcroissant's key (a field's @id) -> catalog's feature name."""
    doc = json.loads((top / case.croissant).read_text())
    rs = next(r for r in doc["recordSet"] if r["@id"] == record_set)
    return {f["@id"]: feature_name(f) for f in rs["field"]}


def _same(ours: Any, theirs: Any, feature: Any, fill: str | None, where: str) -> None:
    if theirs is None and fill is not None:
        assert str(ours) == fill, where
    elif isinstance(feature, ClassLabel):
        assert feature.names[int(ours)] == theirs["text"], where
    elif isinstance(feature, Text):  # mlcroissant's bytes from files, text held inline
        text = theirs["text"] if isinstance(theirs, dict) else theirs
        assert isinstance(text, str), f"{where}: {theirs!r}"
        assert ours == text, where
    elif isinstance(feature, Sequence):  # mlcroissant's list
        assert isinstance(theirs, list), f"{where}: {theirs!r}"
        assert [v["text"] if isinstance(v, dict) else v for v in theirs] == list(ours), where
    elif isinstance(feature, Scalar) and feature.dtype.kind == "f" and theirs is None:
        assert math.isnan(ours), where
    else:
        assert np.asarray(ours).tolist() == theirs, where


@pytest.mark.parametrize("case", CASES, ids=[c.folder for c in CASES])
def test_a_real_croissant_file_prepares_as_mlcroissant_reads_it(
    tmp_path: Path, case: Case, server: LoopbackServer
) -> None:
    top = tmp_path / case.folder
    shutil.copytree(REAL / case.folder, top)
    if case.standard_context:  # mlcroissant refuses the file as published
        as_published = _theirs(top / case.croissant, case.record_sets, tmp_path / "mlc")
        assert "" in as_published, as_published
    theirs = _theirs(_local_for_mlcroissant(case, top), case.record_sets, tmp_path / "mlc")
    assert "" not in theirs, theirs
    _mirror(case, top, tmp_path / "mirror")
    where = ["--offline"]
    if case.urls:
        where += ["--mirror", str(tmp_path / "mirror")]
    if case.hub:  # the Hub's API answered by a mirror on 127.0.0.1, never by the Hub
        where = ["--mirror", _hub_mirror(case, top, server)]
    for record_set in case.record_sets:
        data = tmp_path / "data" / record_set
        args = ["prepare", f"{top / case.croissant}#{record_set}", "--data-dir", str(data),
                "--download-dir", str(tmp_path / "dl"), *where]  # fmt: skip
        for name, value in case.fills.get(record_set, {}).items():
            args += ["--fill", f"{name}={value}"]
        done = catalog_cli(*args)
        expected = theirs[record_set]
        if isinstance(expected, str):  # mlcroissant fails: catalog's verdict is one line
            lines = [line for line in done.stderr.splitlines() if "error" in line]
            assert done.returncode != 0 and len(lines) == 1, done.stderr
            continue
        assert done.returncode == 0, done.stderr
        (prepared,) = [p.parent for p in data.rglob("dataset_info.json")]
        (ds,) = catalog.data_source(prepared).values()
        features = ds.info.features
        names = _fields(top, case, record_set)
        assert len(ds) == len(expected), record_set
        fills = case.fills.get(record_set, {})
        for i, (ours, other) in enumerate(zip(ds, expected, strict=True)):
            assert sorted(ours) == sorted(names[k] for k in other), record_set
            for key, value in other.items():
                name = names[key]
                _same(ours[name], value, features[name], fills.get(name),
                      f"{case.folder}#{record_set}[{i}].{name}")  # fmt: skip


def test_the_real_files_are_small() -> None:
    """Each folder under 500 KB, all under 4 MB, each with its provenance."""
    sizes = {p.name: sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
             for p in REAL.iterdir() if p.is_dir()}  # fmt: skip
    assert sorted(sizes) == sorted(c.folder for c in CASES)
    assert all(size < 500_000 for size in sizes.values()), sizes
    assert sum(sizes.values()) < 4_000_000
    assert all((REAL / name / "PROVENANCE.md").is_file() for name in sizes)


def test_a_record_set_prepared_as_a_config_is_found_by_the_plain_name(tmp_path: Path) -> None:
    """Kaggle's export holds six record sets of different fields, each a config
    (``NAME/RECORD_SET``): by the dataset's plain name, the one prepared is found; with two
    prepared, the error names both."""
    case = next(c for c in CASES if c.folder == "catechol_kaggle")
    top = tmp_path / case.folder
    shutil.copytree(REAL / case.folder, top)
    _mirror(case, top, tmp_path / "mirror")
    data = ["--data-dir", str(tmp_path / "data"), "--mirror", str(tmp_path / "mirror"),
            "--offline", "--download-dir", str(tmp_path / "dl")]  # fmt: skip
    done = catalog_cli("prepare", f"{top / case.croissant}#smiles_lookup.csv", *data)
    assert done.returncode == 0, done.stderr
    ds = catalog.data_source("catechol_benchmark", data_dir=tmp_path / "data")
    (split,) = ds.values()
    assert len(split) == 26
    shown = catalog_cli("info", "catechol_benchmark", "--data-dir", str(tmp_path / "data"))
    assert shown.returncode == 0 and "smiles_lookup_csv" in shown.stdout, shown.stderr
    done = catalog_cli("prepare", f"{top / case.croissant}#acs_pca_descriptors_lookup.csv", *data)
    assert done.returncode == 0, done.stderr
    with pytest.raises(catalog.DatasetNotFoundError, match="prepared as 2 configs; name one: "
                       "catechol_benchmark/acs_pca_descriptors_lookup_csv, "
                       "catechol_benchmark/smiles_lookup_csv"):  # fmt: skip
        catalog.data_source("catechol_benchmark", data_dir=tmp_path / "data")
    shown = catalog_cli("info", "catechol_benchmark", "--data-dir", str(tmp_path / "data"))
    assert shown.returncode != 0 and "Traceback" not in shown.stderr
    assert "catechol_benchmark/smiles_lookup_csv" in shown.stderr
    ds = catalog.data_source("catechol_benchmark/smiles_lookup_csv", data_dir=tmp_path / "data")
    assert len(next(iter(ds.values()))) == 26


def test_a_null_in_a_real_file_is_one_line_naming_fill(tmp_path: Path) -> None:
    """The statistics table without its fills: one line naming a field and --fill, nothing
    prepared, never the text 'None'."""
    shutil.copytree(REAL / "nlrb_stats", tmp_path / "nlrb_stats")
    done = catalog_cli("prepare", str(tmp_path / "nlrb_stats" / "croissant.json"),
                       "--data-dir", str(tmp_path / "data"))  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if "error:" in line]
    assert done.returncode != 0 and len(lines) == 1 and "Traceback" not in done.stderr
    assert "a missing value" in lines[0] and "--fill " in lines[0], lines[0]
    assert not list((tmp_path / "data").rglob("dataset_info.json"))
