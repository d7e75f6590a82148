"""The pattern of GitHub-hosted Croissant files (what the Croissant editor writes): a
FileObject ``contentUrl: https://github.com/OWNER/REPO`` with ``encodingFormat: git+https``
and FileSets ``containedIn`` it. Read from a checkout, the files beside the Croissant file
are the dataset's, record for record what mlcroissant gives for the same files named
locally; anywhere else, one line saying to clone the repository. No network is touched."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_croissant_in import mlcroissant_records, run

import catalog
from catalog.interop.croissant.write import CONTEXT
from catalog.testing.http_server import LoopbackServer

REPO = "https://github.com/example-owner/text-to-query"


def _checkout(root: Path, inside: str = "") -> Path:
    """A checkout: the Croissant file at its top (or in its folder `inside`, as SM3's
    data/metadata.json), CSV files in data/train_dev/."""
    (root / "data" / "train_dev").mkdir(parents=True)
    (root / "data" / "train_dev" / "sql.csv").write_text(
        "question,query,kind\nHow many?,SELECT COUNT(*) FROM t,count\nWho?,SELECT name FROM t,"
        "lookup\n"
    )
    (root / "data" / "train_dev" / "sparql.csv").write_text(
        'question,query,kind\n"Where, then?",SELECT ?x WHERE {?x a ?y},lookup\n'
    )
    (root / "README.md").write_text("a repository\n")

    def field(name: str) -> dict[str, Any]:
        return {
            "@type": "cr:Field", "@id": f"csv/{name}", "name": name, "dataType": "sc:Text",
            "source": {"fileSet": {"@id": "csv-files"}, "extract": {"column": name}},
        }  # fmt: skip

    doc = {
        "@context": CONTEXT, "@type": "sc:Dataset", "name": "text_to_query",
        "conformsTo": "http://mlcommons.org/croissant/1.0", "version": "1.0.0",
        "url": REPO,
        "distribution": [
            {"@type": "cr:FileObject", "@id": "github-repository", "name": "github-repository",
             "contentUrl": REPO, "encodingFormat": "git+https", "sha256": "main"},
            {"@type": "cr:FileSet", "@id": "csv-files", "name": "csv-files",
             "containedIn": {"@id": "github-repository"}, "encodingFormat": "text/csv",
             "includes": "data/train_dev/*.csv"},
        ],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "csv", "name": "csv",
                       "field": [field("question"), field("query"), field("kind")]}],
    }  # fmt: skip
    (root / inside).mkdir(parents=True, exist_ok=True)
    (root / inside / "croissant.json").write_text(json.dumps(doc))
    return root / inside / "croissant.json"


def _without_repository(path: Path, root: Path) -> Path:
    """The same Croissant file with the repository FileObject removed (what mlcroissant reads
    without cloning): the FileSet names the same files locally, from the checkout's top."""
    doc = json.loads(path.read_text())
    local = copy.deepcopy(doc)
    local["distribution"] = [d for d in local["distribution"] if d["@id"] != "github-repository"]
    for node in local["distribution"]:
        node.pop("containedIn", None)
    out = root / "local.json"
    out.write_text(json.dumps(local))
    return out


@pytest.mark.parametrize("inside", ["", "data", "meta/croissant"])
def test_a_checkout_is_read_from_the_files_beside_it(tmp_path: Path, inside: str) -> None:
    """The FileSet's paths, relative to the repository, from the Croissant file's folder or
    the checkout's top above it."""
    path = _checkout(tmp_path / "repo", inside)
    data = ["--data-dir", str(tmp_path / "data"), "--download-dir", str(tmp_path / "dl")]
    done = run("prepare", str(path), *data)
    assert done.returncode == 0, done.stderr
    ds = catalog.data_source(tmp_path / "data" / "text_to_query" / "1.0.0", split="csv")
    theirs = mlcroissant_records(
        _without_repository(path, tmp_path / "repo"), "csv", tmp_path / "mlc"
    )
    assert len(ds) == len(theirs) == 3
    ours = sorted((r["question"], r["query"], r["kind"]) for r in ds)
    assert ours == sorted((t["question"]["text"], t["query"]["text"], t["kind"]["text"])
                          for t in theirs)  # fmt: skip
    assert ("Where, then?", "SELECT ?x WHERE {?x a ?y}", "lookup") in ours


def test_a_file_object_inside_the_repository_is_read_from_the_checkout(tmp_path: Path) -> None:
    path = _checkout(tmp_path / "repo")
    doc = json.loads(path.read_text())
    doc["distribution"][1] = {
        "@type": "cr:FileObject", "@id": "sql.csv", "name": "sql.csv",
        "containedIn": {"@id": "github-repository"}, "encodingFormat": "text/csv",
        "contentUrl": "data/train_dev/sql.csv",
    }  # fmt: skip
    for f in doc["recordSet"][0]["field"]:
        f["source"] = {"fileObject": {"@id": "sql.csv"}, "extract": f["source"]["extract"]}
    path.write_text(json.dumps(doc))
    done = run("prepare", str(path), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 0, done.stderr
    ds = catalog.data_source(tmp_path / "data" / "text_to_query" / "1.0.0", split="csv")
    assert [r["kind"] for r in ds] == ["count", "lookup"]


def test_without_a_checkout_one_line_says_to_clone(tmp_path: Path, server: LoopbackServer) -> None:
    """The Croissant file alone (copied out of its checkout, or read from a URL): one line
    naming the repository and what to do; nothing fetched from it."""
    path = _checkout(tmp_path / "repo")
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(path, alone / "croissant.json")
    url = server.add("/croissant.json", path.read_bytes())
    for where in (str(alone / "croissant.json"), url):
        done = run("prepare", where, "--data-dir", str(tmp_path / "data"),
                   "--download-dir", str(tmp_path / "dl"))  # fmt: skip
        assert done.returncode != 0 and "Traceback" not in done.stderr
        lines = [line for line in done.stderr.splitlines() if "error" in line]
        assert len(lines) == 1, done.stderr
        assert f"lies in the git repository {REPO}" in lines[0]
        assert f"git clone {REPO}" in lines[0] and "inside the clone" in lines[0]
    assert not (tmp_path / "data" / "text_to_query" / "1.0.0").exists()
