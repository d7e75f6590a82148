"""``--json`` prints exactly one JSON document on stdout, for every exit code: the command's
own, or, when it stopped before printing it (a usage error, a local file or a Croissant file
that fails), ``{"ok": false, "exit_code": N, "errors": [...]}`` with the lines stderr shows."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli, idx_builder

CSV = b"name,age\nada,36\nalan,41\n"


def _croissant(folder: Path, sha256: str, name: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "people.csv").write_bytes(CSV)

    def field(name: str, kind: str) -> dict[str, Any]:
        source = {"fileObject": {"@id": "table"}, "extract": {"column": name}}
        return {"@type": "cr:Field", "@id": f"people/{name}", "name": name, "dataType": kind,
                "source": source}  # fmt: skip

    doc = {
        "@type": "sc:Dataset", "name": name, "conformsTo": "http://mlcommons.org/croissant/1.0",
        "distribution": [{"@type": "cr:FileObject", "@id": "table", "name": "table",
                          "contentUrl": "people.csv", "encodingFormat": "text/csv",
                          "sha256": sha256}],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "people", "name": "people",
                       "field": [field("name", "sc:Text"), field("age", "sc:Integer")]}],
    }  # fmt: skip
    path = folder / "metadata.json"
    path.write_text(json.dumps(doc))
    return path


def _files(root: Path) -> dict[str, Path]:
    root.mkdir()
    (root / "bad.csv").write_bytes(b'name,age\nA,1\n"B,2\n')
    (root / "good.csv").write_bytes(CSV)
    (root / "broken.json").write_text('{"@type": "sc:Dataset", "recordSet": [')
    return {
        "bad_csv": root / "bad.csv",
        "good_csv": root / "good.csv",
        "broken_json": root / "broken.json",
        "wrong_sha": _croissant(root / "wrong", "0" * 64, "wrong"),
        "good_croissant": _croissant(root / "ok", hashlib.sha256(CSV).hexdigest(), "people"),
    }


CASES = [
    # (arguments, exit code); {name} is a path from _files, {d} the data dir
    (("prepare", "{bad_csv}"), 3),
    (("prepare", "{wrong_sha}"), 3),
    (("prepare", "{broken_json}"), 2),
    (("prepare", "no_such_dataset"), 2),
    (("prepare", "{good_csv}", "--no-such-flag"), 2),
    (("prepare", "{good_csv}", "--num-proc", "0"), 2),
    (("prepare", "{good_croissant}"), 0),
    (("info", "no_such_dataset"), 2),
    (("info", "{bad_csv}"), 2),  # prepare it first
    (("info", "mnist", "--image-max-side", "x"), 2),
    (("list", "--bogus"), 2),
    (("list", "--prepared"), 0),
    (("verify", "mnist"), 2),
    (("verify", "{bad_csv}"), 2),
    (("import", "{d}"), 2),
    (("import", "{bad_csv}"), 2),
]


@pytest.mark.parametrize(
    ("args", "code"), CASES, ids=lambda v: "-".join(v) if isinstance(v, tuple) else str(v)
)
def test_json_prints_one_document_for_every_exit_code(
    tmp_path: Path, args: tuple[str, ...], code: int
) -> None:
    paths = {k: str(v) for k, v in _files(tmp_path / "files").items()}
    data = tmp_path / "data"
    argv = [a.format(d=data, **paths) for a in args]
    run = catalog_cli(*argv, "--json", "--data-dir", str(data))
    assert run.returncode == code, (run.returncode, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr, run.stderr
    doc = json.loads(run.stdout)  # exactly one document: anything more fails to parse
    if code == 0:
        return
    errors = [ln.removeprefix("catalog: error: ") for ln in run.stderr.splitlines()]
    if isinstance(doc, dict) and "exit_code" in doc:  # the document of a command stopped early
        assert doc["ok"] is False and doc["exit_code"] == code, doc
        assert doc["errors"] and all(e in errors for e in doc["errors"]), (doc, errors)
    else:  # the command's own: it says it failed
        assert doc["ok"] is False, doc


def test_verify_finding_a_corrupt_shard_prints_its_own_document(tmp_path: Path) -> None:
    path = _files(tmp_path / "files")["good_croissant"]
    data = tmp_path / "data"
    assert catalog_cli("prepare", str(path), "--data-dir", str(data)).returncode == 0
    (shard,) = [p for p in data.rglob("*.array_record-*") if not p.is_symlink()][:1]
    shard.write_bytes(shard.read_bytes()[:-1000])
    run = catalog_cli("verify", "people", "--json", "--data-dir", str(data))
    assert run.returncode == 1, run.stderr
    doc = json.loads(run.stdout)
    assert doc["ok"] is False and doc["datasets"][0]["problems"], doc


def test_a_failed_download_prints_the_prepare_document(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """Alone (3), and beside a dataset that is done (1): the command's own document."""
    bad = idx_builder(tmp_path, server, 5, name="bad")
    server.add("/files/bad/i.gz", b"<html>gone</html>", status=404)
    good = _files(tmp_path / "files")["good_croissant"]
    data = str(tmp_path / "data")
    for paths, code in (([bad], 3), ([good, bad], 1)):
        run = catalog_cli("prepare", *map(str, paths), "--json", "--data-dir", data)
        assert run.returncode == code, run.stderr
        doc = json.loads(run.stdout)
        assert doc["ok"] is False and doc["datasets"][-1]["status"] == "failed", doc
