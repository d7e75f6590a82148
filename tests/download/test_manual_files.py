"""Unverified manual files (builder.yaml's ``manual:``, `catalog.download.manual`): taken from
the manual dir only, measured and said to be unverified, recorded in dataset_info.json; a later
prepare and `catalog verify` notice a changed file; the CLI shows no traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from catalog.api.builder import DatasetBuilder
from catalog.api.manage import verify
from catalog.download.config import DownloadConfig
from catalog.errors import DownloadError, SpecError
from catalog.info.dataset_info import INFO_FILE
from catalog.spec.load import load_spec

from conftest import catalog_cli

SPEC = """\
name: by_hand
version: 1.0.0
features:
  x: {type: Scalar, dtype: int64}
  label: {type: ClassLabel, names: [a, b]}
downloads:
  table: {manual: table.csv}
splits:
  train:
    format: delimited
    files: {file: table}
    options: {columns: {x: x, label: label}}
    num_examples: 3
"""
TABLE = "x,label\n1,a\n2,b\n3,a\n"


def builder_folder(tmp_path: Path, spec: str = SPEC) -> Path:
    folder = tmp_path / "by_hand"
    folder.mkdir()
    (folder / "builder.yaml").write_text(spec)
    return folder


def prepare(folder: Path, tmp_path: Path, manual: Path) -> DatasetBuilder:
    builder = DatasetBuilder(load_spec(folder), data_dir=tmp_path / "data")
    config = DownloadConfig(manual_dir=manual, progress="lines")
    builder.download_and_prepare(download_dir=tmp_path / "downloads", download_config=config)
    return builder


def recorded(tmp_path: Path) -> dict[str, object]:
    info = json.loads(next((tmp_path / "data").rglob(INFO_FILE)).read_text())
    entry: dict[str, object] = info["downloads"]["table"]
    return entry


def test_a_manual_file_is_measured_said_unverified_and_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, manual = builder_folder(tmp_path), tmp_path / "manual"
    manual.mkdir()
    (manual / "table.csv").write_text(TABLE)
    builder = prepare(folder, tmp_path, manual)
    assert [e["x"] for e in builder.as_data_source("train")] == [1, 2, 3]
    import hashlib

    sha = hashlib.sha256(TABLE.encode()).hexdigest()
    assert recorded(tmp_path) == {
        "manual": "table.csv", "size": len(TABLE), "sha256": sha, "verified": False,
    }  # fmt: skip
    said = capsys.readouterr().err
    assert "UNVERIFIED" in said and sha in said and str(manual / "table.csv") in said
    assert "table.csv (placed in the manual dir by hand; unverified" in str(builder.info)
    assert verify(tmp_path / "data" / "by_hand" / "1.0.0", manual_dir=manual).ok


def test_a_missing_manual_file_says_where_to_put_it_and_leaves_nothing(tmp_path: Path) -> None:
    folder, manual = builder_folder(tmp_path), tmp_path / "manual"
    with pytest.raises(DownloadError, match="no published checksum: place it at .*table.csv"):
        prepare(folder, tmp_path, manual)
    assert not list(tmp_path.rglob(INFO_FILE))


def test_a_later_prepare_prepares_again_when_the_file_changed_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, manual = builder_folder(tmp_path), tmp_path / "manual"
    manual.mkdir()
    (manual / "table.csv").write_text(TABLE)
    prepare(folder, tmp_path, manual)
    first = recorded(tmp_path)
    prepare(folder, tmp_path, manual)  # the same file: reused, nothing said about it
    assert "changed" not in capsys.readouterr().err and recorded(tmp_path) == first
    (manual / "table.csv").write_text(TABLE.replace("3,a", "30,b"))
    builder = prepare(folder, tmp_path, manual)
    assert "table.csv in the manual dir changed since it was prepared" in capsys.readouterr().err
    assert [e["x"] for e in builder.as_data_source("train")] == [1, 2, 30]
    assert recorded(tmp_path)["size"] == len(TABLE) + 1
    (manual / "table.csv").unlink()  # gone from the manual dir: the prepared copy still serves
    prepare(folder, tmp_path, manual)
    assert "changed" not in capsys.readouterr().err


def test_verify_rehashes_the_manual_file_and_names_a_change(tmp_path: Path) -> None:
    folder, manual = builder_folder(tmp_path), tmp_path / "manual"
    manual.mkdir()
    (manual / "table.csv").write_text(TABLE)
    data = tmp_path / "data"
    args = ["--data-dir", str(data), "--download-dir", str(tmp_path / "downloads")]
    done = catalog_cli("prepare", str(folder), *args, "--manual-dir", str(manual))
    assert done.returncode == 0, done.stderr
    assert "UNVERIFIED" in done.stderr
    checked = catalog_cli(
        "verify", str(folder), "--data-dir", str(data), "--manual-dir", str(manual)
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (manual / "table.csv").write_text(TABLE.replace("3,a", "3,b"))  # same size, other bytes
    checked = catalog_cli(
        "verify", str(folder), "--data-dir", str(data), "--manual-dir", str(manual), "--json"
    )
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    (problem,) = json.loads(checked.stdout)["datasets"][0]["problems"]
    assert problem["kind"] == "source" and problem["file"] == "table.csv"
    assert "changed since the dataset was prepared" in problem["message"]
    missing = catalog_cli(
        "prepare", str(folder), "--data-dir", str(tmp_path / "other"),
        "--download-dir", str(tmp_path / "downloads"), "--manual-dir", str(tmp_path / "none"),
    )  # fmt: skip
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "no published checksum: place it at" in missing.stderr


def test_a_manual_folder_is_measured_by_its_manifest(tmp_path: Path) -> None:
    spec = SPEC.replace("{manual: table.csv}", "{manual: tables}").replace(
        "files: {file: table}", "files: {file: {download: table, member: t/table.csv}}"
    )
    folder, manual = builder_folder(tmp_path, spec), tmp_path / "manual"
    (manual / "tables" / "t").mkdir(parents=True)
    (manual / "tables" / "t" / "table.csv").write_text(TABLE)
    prepare(folder, tmp_path, manual)
    entry = recorded(tmp_path)
    assert entry["manual"] == "tables" and entry["size"] == len(TABLE)
    (manual / "tables" / "t" / "extra.txt").write_text("more")  # the folder changed
    problems = verify(tmp_path / "data" / "by_hand" / "1.0.0", manual_dir=manual).problems
    assert [p.kind for p in problems] == ["source"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{manual: a/table.csv}", "expected a plain file or folder name"),
        ("{manual: ..}", "expected a plain file or folder name"),
        # beside a url, manual is true or false (downloaded by hand, checked)
        ("{manual: table.csv, url: 'https://example.com/t.csv'}", "manual"),
    ],
)
def test_a_malformed_manual_entry_is_named(tmp_path: Path, entry: str, message: str) -> None:
    folder = builder_folder(tmp_path, SPEC.replace("{manual: table.csv}", entry))
    with pytest.raises(SpecError, match=message):
        load_spec(folder)


def test_register_checksums_leaves_manual_files_unregistered(tmp_path: Path) -> None:
    folder, manual = builder_folder(tmp_path), tmp_path / "manual"
    manual.mkdir()
    (manual / "table.csv").write_text(TABLE)
    builder = DatasetBuilder(load_spec(folder), data_dir=tmp_path / "data")
    config = DownloadConfig(manual_dir=manual, register_checksums=True, progress="none")
    builder.download_and_prepare(download_dir=tmp_path / "downloads", download_config=config)
    assert (
        not (folder / "checksums.tsv").exists()
        or "table.csv" not in (folder / "checksums.tsv").read_text()
    )
    assert recorded(tmp_path)["verified"] is False


@pytest.mark.parametrize("kind", ["fifo", "device", "directory of a file"])
def test_a_special_file_is_refused_before_it_is_opened(tmp_path: Path, kind: str) -> None:
    """A FIFO would block `open`, /dev/zero would be read forever: each is one line naming
    the file and what it is, exit 3, before anything reads it."""
    folder, manual = builder_folder(tmp_path), tmp_path / "manual"
    manual.mkdir()
    path = manual / "table.csv"
    if kind == "fifo":
        os.mkfifo(path)
        what = "is a FIFO (named pipe), not a regular file"
    elif kind == "device":
        path.symlink_to("/dev/zero")
        what = "is a character device, not a regular file"
    else:
        path.mkdir()
        (path / "sub").symlink_to("/dev/zero")  # a folder's special files are not its files
        what = "is a directory"
    result = catalog_cli(
        "prepare", str(folder), "--manual-dir", str(manual),
        "--data-dir", str(tmp_path / "data"), "--download-dir", str(tmp_path / "dl"),
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr and "[Errno" not in result.stderr
    assert str(path) in result.stderr and what in result.stderr, result.stderr
    assert not list(tmp_path.rglob(INFO_FILE))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_manual_file_is_one_line(tmp_path: Path) -> None:
    folder, manual = builder_folder(tmp_path), tmp_path / "manual"
    manual.mkdir()
    (manual / "table.csv").write_text(TABLE)
    (manual / "table.csv").chmod(0)
    result = catalog_cli(
        "prepare", str(folder), "--manual-dir", str(manual),
        "--data-dir", str(tmp_path / "data"), "--download-dir", str(tmp_path / "dl"),
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "permission denied" in result.stderr and "Traceback" not in result.stderr
