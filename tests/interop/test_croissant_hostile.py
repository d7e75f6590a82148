"""Croissant files nobody checked: each hostile one is one clear error (the CLI: one line, no
traceback), nothing is read outside the Croissant file's folder, nothing is left behind, and
every pattern runs in bounded time (RE2)."""

from __future__ import annotations

import copy
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

from catalog.download import DownloadConfig, resolve_config
from catalog.errors import (
    CatalogError,
    ChecksumError,
    DownloadError,
    SourceFormatError,
    SpecError,
)
from catalog.interop.croissant.spec import croissant_spec
from catalog.testing.http_server import Fault, LoopbackServer

from conftest import catalog_cli

CSV = b"name,age\nada,36\nalan,41\n"


def _doc(content_url: str, data: bytes = CSV, **file: Any) -> dict[str, Any]:
    def field(name: str, kind: str, **source: Any) -> dict[str, Any]:
        file = {"fileObject": {"@id": "table"}, "extract": {"column": name}}
        return {"@type": "cr:Field", "@id": f"people/{name}", "name": name, "dataType": kind,
                "source": {**file, **source}}  # fmt: skip

    return {
        "@type": "sc:Dataset", "name": "people", "conformsTo": "http://mlcommons.org/croissant/1.0",
        "distribution": [{"@type": "cr:FileObject", "@id": "table", "name": "table",
                          "contentUrl": content_url, "encodingFormat": "text/csv",
                          "sha256": hashlib.sha256(data).hexdigest(), **file}],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "people", "name": "people",
                       "field": [field("name", "sc:Text"), field("age", "sc:Integer")]}],
    }  # fmt: skip


def _config(tmp_path: Path) -> DownloadConfig:
    return resolve_config(
        DownloadConfig(), data_dir=tmp_path / "data", download_dir=tmp_path / "dl"
    )


def _write(folder: Path, doc: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data" / "people.csv").write_bytes(CSV)
    path = folder / "metadata.json"
    path.write_text(json.dumps(doc))
    return path


def _refused(
    tmp_path: Path, path: Path | str, error: type[CatalogError], message: str, cli: bool = False
) -> None:
    """One error from Python and (`cli`) from the CLI (one line, exit 2 or 3), nothing left
    behind."""
    with pytest.raises(error, match=message):
        croissant_spec(str(path), _config(tmp_path))
    assert not (tmp_path / "data").exists()
    if not cli:
        return
    done = catalog_cli("prepare", str(path), "--data-dir", str(tmp_path / "data"),
                       "--download-dir", str(tmp_path / "dl"))  # fmt: skip
    assert done.returncode in (2, 3), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "data").exists()
    left = (
        [p for p in (tmp_path / "dl").rglob("*") if p.is_file()]
        if (tmp_path / "dl").exists()
        else []
    )
    assert all(p.suffix == ".json" or "croissant" in p.name for p in left), left  # fmt: skip


def test_a_relative_content_url_is_read_from_the_croissant_folder(tmp_path: Path) -> None:
    path = _write(tmp_path / "set", _doc("data/people.csv"))
    spec = croissant_spec(str(path), _config(tmp_path))
    assert spec.splits["people"].num_examples == 2
    assert spec.downloads["table"].url == (tmp_path / "set" / "data" / "people.csv").as_uri()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("../secret.csv", "must be a path inside the Croissant file's folder"),
        ("data/../../secret.csv", "must be a path inside the Croissant file's folder"),
        ("/etc/passwd", "must be a path inside the Croissant file's folder"),
        ("file:///etc/passwd", "not supported yet: contentUrl 'file:///etc/passwd'"),
        ("data/link.csv", "leads outside"),
    ],
)
def test_a_content_url_escaping_the_folder_is_refused(
    tmp_path: Path, url: str, message: str
) -> None:
    (tmp_path / "secret.csv").write_bytes(CSV)
    path = _write(tmp_path / "set", _doc(url))
    (tmp_path / "set" / "data" / "link.csv").symlink_to(tmp_path / "secret.csv")
    _refused(tmp_path, path, SpecError, message, cli=url.startswith(".."))


@pytest.mark.parametrize("glob", ["../*.csv", "/etc/*", "../../**"])
def test_a_file_set_glob_outside_the_folder_is_refused(tmp_path: Path, glob: str) -> None:
    doc = _doc("data/people.csv")
    doc["distribution"][0] = {"@type": "cr:FileSet", "@id": "table", "name": "table",
                              "encodingFormat": "text/csv", "includes": glob}  # fmt: skip
    for f in doc["recordSet"][0]["field"]:
        f["source"] = {"fileSet": {"@id": "table"}, "extract": f["source"]["extract"]}
    (tmp_path / "secret.csv").write_bytes(CSV)
    _refused(tmp_path, _write(tmp_path / "set", doc), SpecError, "includes")
    if glob == "../*.csv":  # a symlink in the set's folder leading out: not even hashed
        doc["distribution"][0]["includes"] = "data/*.csv"
        path = _write(tmp_path / "inner", doc)
        (tmp_path / "inner" / "data" / "link.csv").symlink_to(tmp_path / "secret.csv")
        _refused(tmp_path, path, SpecError, "is a symlink leading outside")


def test_a_sha256_mismatch_is_refused(tmp_path: Path) -> None:
    doc = _doc("data/people.csv")
    doc["distribution"][0]["sha256"] = "0" * 64
    _refused(tmp_path, _write(tmp_path / "set", doc), ChecksumError, "has sha256 .* says 0000")


def test_a_huge_declared_size_is_refused(tmp_path: Path, server: LoopbackServer) -> None:
    url = server.add("/people.csv", CSV)
    doc = _doc(url, contentSize=f"{1 << 50} B")
    with pytest.raises(CatalogError, match=r"size|space"):
        croissant_spec(str(_write(tmp_path / "set", doc)), _config(tmp_path))
    assert not (tmp_path / "data").exists()


def test_a_reference_to_a_missing_field_is_refused(tmp_path: Path) -> None:
    doc = _doc("data/people.csv")
    doc["recordSet"][0]["field"].append(
        {"@type": "cr:Field", "@id": "people/team", "name": "team", "dataType": "sc:Text",
         "source": {"field": {"@id": "teams/name"}}}
    )  # fmt: skip
    _refused(tmp_path, _write(tmp_path / "set", doc), SpecError, "names field 'teams/name'")


def test_a_catastrophic_regex_runs_in_linear_time(tmp_path: Path) -> None:
    """``^photos/cat/(a+)+b$`` against a 31-character path took 75-170 s with Python's re."""
    folder = tmp_path / "set"
    (folder / "photos" / "cat").mkdir(parents=True)
    member = "photos/cat/" + "a" * 20  # 31 characters, no b: backtracking's worst case
    (folder / member).write_bytes(b"x")
    source = {"fileSet": {"@id": "photos"}, "extract": {"fileProperty": "fullpath"}}
    doc = {
        "@type": "sc:Dataset", "name": "cats",
        "distribution": [{"@type": "cr:FileSet", "@id": "photos", "name": "photos",
                          "encodingFormat": "text/plain", "includes": "photos/**"}],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "cats", "name": "cats", "field": [
            {"@type": "cr:Field", "@id": "cats/path", "name": "path", "dataType": "sc:Text",
             "source": source},
            {"@type": "cr:Field", "@id": "cats/label", "name": "label", "dataType": "sc:Text",
             "source": {**source, "transform": {"regex": "^photos/cat/(a+)+b$"}}}]}],
    }  # fmt: skip
    path = folder / "cats.json"
    path.write_text(json.dumps(doc))
    started = time.monotonic()
    spec = croissant_spec(str(path), _config(tmp_path))
    done = catalog_cli("prepare", str(path), "--data-dir", str(tmp_path / "data"),
                       "--download-dir", str(tmp_path / "dl"), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60  # the CLI's start-up included; the match is microseconds
    import catalog

    ds = catalog.data_source(json.loads(done.stdout)["datasets"][0]["path"], split="cats")
    assert spec.splits["cats"].num_examples == 1
    assert ds[0]["label"] == member  # no match: the value as it is (mlcroissant's rule)


@pytest.mark.parametrize(
    ("regex", "message"),
    [(r"(a)\1", "is not one RE2 runs"), ("(?=a)b", "is not one RE2 runs"),
     ("a" * 5000, "at most 4096 characters")],
)  # fmt: skip
def test_a_regex_rre2_cannot_bound_is_one_error_naming_the_field(
    tmp_path: Path, regex: str, message: str
) -> None:
    doc = _doc("data/people.csv")
    doc["recordSet"][0]["field"][0]["source"]["transform"] = {"regex": regex}
    path = _write(tmp_path / "set", doc)
    _refused(tmp_path, path, SpecError, f"field people/name.*{message}", cli=regex == r"(a)\1")


def test_a_json_path_outside_the_plain_subset_is_one_error(tmp_path: Path) -> None:
    doc = _doc("data/people.csv")
    doc["recordSet"][0]["field"][0]["source"]["extract"] = {"jsonPath": "$..[?(@.a > 1)]"}
    _refused(tmp_path, _write(tmp_path / "set", doc), SpecError, "not supported yet: JSON path")


def test_a_100_mb_or_deeply_nested_croissant_file_is_one_error(tmp_path: Path) -> None:
    big = tmp_path / "big" / "metadata.json"
    big.parent.mkdir()
    with open(big, "wb") as f:  # 100 MB: refused after reading at most 16 MiB of it
        f.write(b'{"recordSet": [], "pad": "')
        f.truncate(100 << 20)
    _refused(tmp_path, big, SpecError, "larger than 16 MiB")
    deep = tmp_path / "deep" / "metadata.json"
    deep.parent.mkdir()
    deep.write_text("[" * 200_000 + "]" * 200_000)
    _refused(tmp_path, deep, SpecError, "not JSON", cli=True)


def test_a_deeply_nested_data_file_is_one_error(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    (folder / "data").mkdir(parents=True)
    data = b'{"a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    (folder / "data" / "deep.json").write_bytes(data)
    doc = copy.deepcopy(_doc("data/deep.json", data, encodingFormat="application/json"))
    for f in doc["recordSet"][0]["field"]:
        f["source"]["extract"] = {"jsonPath": "$.a[*]"}
    path = folder / "metadata.json"
    path.write_text(json.dumps(doc))
    _refused(tmp_path, path, SourceFormatError, "nested too deeply")


def _archive_doc(archive: str, encoding: str) -> dict[str, Any]:
    source = {"fileSet": {"@id": "texts"}}
    return {
        "@type": "sc:Dataset", "name": "texts",
        "distribution": [
            {"@type": "cr:FileObject", "@id": "archive", "name": "archive",
             "contentUrl": f"data/{archive}", "encodingFormat": encoding},
            {"@type": "cr:FileSet", "@id": "texts", "name": "texts", "containedIn": {
                "@id": "archive"}, "encodingFormat": "text/plain", "includes": "*.txt"}],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "texts", "name": "texts", "field": [
            {"@type": "cr:Field", "@id": "texts/path", "name": "path", "dataType": "sc:Text",
             "source": {**source, "extract": {"fileProperty": "fullpath"}}},
            {"@type": "cr:Field", "@id": "texts/line", "name": "line", "dataType": "sc:Text",
             "source": {**source, "extract": {"fileProperty": "lines"}}}]}],
    }  # fmt: skip


def test_archive_members_named_outside_never_land_outside(tmp_path: Path) -> None:
    """A zip FileSet is read in place: its member ``../../escaped/evil.txt`` is the set's
    ``escaped/evil.txt`` (as zipfile extracts it) and nothing is written. A tar FileSet is
    extracted, and a member escaping the folder is refused."""
    import io
    import tarfile
    import zipfile

    folder = tmp_path / "set"
    (folder / "data").mkdir(parents=True)
    with zipfile.ZipFile(folder / "data" / "x.zip", "w") as zf:
        zf.writestr("../../escaped/evil.txt", "hello\n")
    path = folder / "zip.json"
    path.write_text(json.dumps(_archive_doc("x.zip", "application/zip")))
    before = sorted(p.name for p in tmp_path.parent.iterdir())
    spec = croissant_spec(str(path), _config(tmp_path))
    assert spec.splits["texts"].num_examples == 1
    assert sorted(p.name for p in tmp_path.parent.iterdir()) == before
    assert not list(tmp_path.rglob("evil.txt"))  # read from the zip, never written
    with tarfile.open(folder / "data" / "x.tar", "w") as tar:
        info = tarfile.TarInfo("../../escaped/evil.txt")
        info.size = 6
        tar.addfile(info, io.BytesIO(b"hello\n"))
    path = folder / "tar.json"
    path.write_text(json.dumps(_archive_doc("x.tar", "application/x-tar")))
    _refused(tmp_path, path, SourceFormatError, "refusing to extract .* would land outside")
    assert not list(tmp_path.rglob("escaped")) and not (tmp_path.parent / "escaped").exists()


def _inline_doc(value: str) -> str:
    """A record set of inline ``cr:data`` whose integer field holds `value` (JSON text)."""
    doc = _doc("data/people.csv")
    doc["distribution"] = []
    doc["recordSet"][0]["field"] = [
        {"@type": "cr:Field", "@id": "people/age", "name": "age", "dataType": "sc:Integer"}
    ]
    doc["recordSet"][0]["data"] = [{"people/age": 1}, {"people/age": "VALUE"}]
    return json.dumps(doc).replace('"VALUE"', value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("9" * 5000, "metadata.json: an integer of 5000 digits"),  # beyond Python's int limit
        ("-" + "9" * 200, "an integer of 200 digits"),
        (
            '"' + "9" * 5000 + '"',
            r"field people/age: 999999999999\.\.\. \(5000 characters\) does "
            "not fit int64",
        ),
        ("9" * 30, "does not fit int64"),
    ],
    ids=["5000-digits", "200-digits-negative", "5000-digit-text", "30-digits"],
)
def test_a_huge_integer_in_inline_data_is_one_error(
    tmp_path: Path, value: str, message: str
) -> None:
    path = tmp_path / "folder" / "metadata.json"
    path.parent.mkdir()
    path.write_text(_inline_doc(value))
    started = time.monotonic()
    error = SpecError if "digits" in message and '"' not in value else SourceFormatError
    _refused(tmp_path, path, error, message, cli=True)
    assert time.monotonic() - started < 60
    done = catalog_cli("prepare", str(path), "--data-dir", str(tmp_path / "data"))
    assert "set_int_max_str_digits" not in done.stderr and "not JSON" not in done.stderr


def _quick(tmp_path: Path) -> DownloadConfig:
    """Short download deadlines (the download layer's own knobs), no retries."""
    return resolve_config(
        DownloadConfig(read_timeout=0.3, connect_timeout=1.0, retries=0, min_rate=1e9),
        data_dir=tmp_path / "data",
        download_dir=tmp_path / "dl",
    )


@pytest.mark.parametrize("kind", ["hold", "stall", "drip"])
@pytest.mark.parametrize("which", ["croissant", "content"])
def test_a_server_that_stalls_or_drips_is_one_error_within_the_deadlines(
    tmp_path: Path, server: LoopbackServer, kind: str, which: str
) -> None:
    """The Croissant file itself, or its contentUrl, on a server that never answers, stops
    sending or sends a byte at a time: one DownloadError naming the URL and what happened,
    within the download deadlines (here a 0.3 s read timeout, no retry)."""
    payload = CSV * 2000  # long enough to drip
    fault = Fault(kind="drip", interval=0.05) if kind == "drip" else Fault(kind=kind, at=2)
    content = server.add("/people.csv", payload, fault=fault if which == "content" else None)
    doc = json.dumps(_doc(content, payload)).encode()
    url = server.add("/metadata.json", doc, fault=fault if which == "croissant" else None)
    started = time.monotonic()
    with pytest.raises(DownloadError) as caught:
        croissant_spec(url, _quick(tmp_path))
    elapsed = time.monotonic() - started
    server.release()
    text = str(caught.value)
    assert (url if which == "croissant" else content) in text and elapsed < 30, (elapsed, text)
    assert text.startswith("could not download ")
    assert ("stalled" if kind == "drip" else "timed out") in text
    assert not (tmp_path / "data").exists()
