"""Exit codes come from one table (catalog.cli.common.EXIT_CODES, the one `catalog --help`
prints), command by command: a bad source file is 3 wherever it is found (inferring a spec
or preparing), a failed download 3, a missing shard of a TFDS dir in `catalog import` 3, a
usage error 2, some datasets failed while others were done 1."""

from __future__ import annotations

import errno
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from catalog.cli import main
from catalog.cli.common import EXIT_CODES, EXIT_HELP, exit_code, os_error_message
from catalog.prepare.work_unit import WorkerLostError
from catalog.testing.http_server import LoopbackServer
from tests.bombs import small

from conftest import catalog_cli, idx_builder

TFDS = Path(__file__).resolve().parents[1] / "fixtures" / "tf"


def one_error(run: object, code: int) -> str:
    assert run.returncode == code, (run.returncode, run.stderr)  # type: ignore[attr-defined]
    stderr: str = run.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr, stderr
    assert [ln for ln in stderr.splitlines() if ln.startswith("catalog: error:")], stderr
    return stderr


def image_folder(root: Path, broken: bytes) -> Path:
    for label in ("cat", "dog"):
        (root / "train" / label).mkdir(parents=True)
        (root / "train" / label / "0.png").write_bytes(small("PNG"))
    (root / "train" / "cat" / "1.png").write_bytes(broken)
    return root


def csv_file(root: Path, text: str) -> Path:
    root.mkdir(parents=True)
    (root / "people.csv").write_text(text)
    return root / "people.csv"


BAD_SOURCES: dict[str, Callable[[Path], Path]] = {
    # found while inferring the spec (used to be 2)
    "not-an-image": lambda d: image_folder(d / "photos", b"not a png at all"),
    "csv-broken-quote": lambda d: csv_file(d / "t", 'name,age\nA,1\n"B,2\n'),
    # far into the file, past any sample (used to be 1; a short row is now read as pandas
    # reads it, its absent field missing, so the long row is the bad one)
    "csv-long-row": lambda d: csv_file(d / "t", "name,age\n" + "A,1\n" * 1200 + "B,2,3\n"),
}


@pytest.mark.parametrize("case", list(BAD_SOURCES))
def test_a_bad_source_file_is_3_wherever_it_is_found(tmp_path: Path, case: str) -> None:
    path = BAD_SOURCES[case](tmp_path)
    stderr = one_error(catalog_cli("prepare", str(path), "--data-dir", str(tmp_path / "d")), 3)
    assert path.name in stderr or "1.png" in stderr, stderr


MANUAL_TAR = """\
name: manualtar
version: 1.0.0
description: a tar placed by hand, with no published checksum
features:
  image: {type: Image, shape: [null, null, 3], encoding: jpeg}
  label: {type: ClassLabel, names: [a, b], allow_unlabeled: true}
downloads:
  test: {manual: images.tar}
splits:
  test:
    format: image_tar
    files: {archive: test}
    options: {unlabeled: label}
    num_examples: 2
"""


def test_a_directory_where_a_manual_tar_belongs_is_3_naming_it(tmp_path: Path) -> None:
    """It was 1 with a raw ``[Errno 21] Is a directory``."""
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "builder.yaml").write_text(MANUAL_TAR)
    (tmp_path / "manual" / "images.tar").mkdir(parents=True)
    run = catalog_cli("prepare", str(tmp_path / "b"), "--manual-dir", str(tmp_path / "manual"),
                      "--data-dir", str(tmp_path / "d"))  # fmt: skip
    stderr = one_error(run, 3)
    line = next(ln for ln in stderr.splitlines() if ln.startswith("catalog: error:"))
    assert str(tmp_path / "manual" / "images.tar") in line and "[Errno" not in line, line
    # refused before it is opened (catalog.download.digest), saying what was there instead
    assert "is a directory, not a regular file" in line, line


@pytest.mark.parametrize(
    ("exc", "code", "says"),
    [
        (PermissionError(errno.EACCES, "Permission denied", "/m/x.tar"), 3, "permission to read"),
        (IsADirectoryError(errno.EISDIR, "Is a directory", "/m/x.tar"), 3, "where a file belongs"),
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "/m/x.tar"), 3, "put"),
        (OSError(errno.ENOSPC, "No space left on device", "/d/x"), 1, "free some space"),
        (OSError(errno.ENOSPC, "No space left on device"), 1, "free some space"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, OSError) else str(v),
)
def test_an_os_error_is_one_line_naming_the_path(exc: OSError, code: int, says: str) -> None:
    """What main() prints for an OSError no catalog error describes: the path, what the
    system said, what to do; 3 when a file cannot be read, else 1."""
    assert exit_code(exc) == code
    message = os_error_message(exc)
    assert "\n" not in message and "[Errno" not in message and says in message, message
    if exc.filename is not None:
        assert message.startswith(f"{exc.filename}: "), message


def test_missing_values_without_a_fill_are_a_usage_error_naming_fill(tmp_path: Path) -> None:
    """Nothing is wrong with the file (pandas reads the gap as missing): the command needs
    --fill, so 2, found while inferring the spec, before anything is prepared."""
    path = csv_file(tmp_path / "t", "name,age\nA,1\n,2\n")
    stderr = one_error(catalog_cli("prepare", str(path), "--data-dir", str(tmp_path / "d")), 2)
    assert "--fill name=VALUE" in stderr and "line 3" in stderr, stderr
    assert not (tmp_path / "d").exists()


def test_a_failed_download_alone_is_3(tmp_path: Path, server: LoopbackServer) -> None:
    """(One failure among datasets that were done is 1: tests/cli/test_cli.py.)"""
    bad = idx_builder(tmp_path, server, 5, name="bad")
    server.add("/files/bad/i.gz", b"<html>gone</html>", status=404)
    one_error(catalog_cli("prepare", str(bad), "--data-dir", str(tmp_path / "data")), 3)


def test_a_missing_shard_of_a_tfds_dir_in_import_is_3(tmp_path: Path) -> None:
    expected = json.loads((TFDS / "expected.json").read_text("utf-8"))
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(TFDS / expected["tfds"]["array_record"]["path"], copy)
    (copy / "tiny_features-test.array_record-00000-of-00001").unlink()
    run = catalog_cli("import", str(copy), "--data-dir", str(tmp_path / "d"))
    assert "shard 0 of split 'test'" in one_error(run, 3)
    as_json = catalog_cli("import", str(copy), "--data-dir", str(tmp_path / "d"), "--json")
    document = json.loads(as_json.stdout)  # one document, for exit 3 too
    assert document["exit_code"] == 3 and "shard 0 of split 'test'" in document["errors"][0]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("prepare", "no_such_dataset"), 2),
        (("list", "--no-such-flag"), 2),
        (("info", "no_such_dataset"), 2),
        (("show", "mnist", "--data-dir", "{d}", "-o", "{d}/g.png"), 2),  # not prepared
        (("verify", "mnist", "--data-dir", "{d}"), 2),
        # a plain name nothing answers to is nothing to remove (exit 0, test_cli_rm.py); a
        # path that names no dataset is a usage error
        (("rm", "{d}/no_such.csv", "--data-dir", "{d}"), 2),
        (("import", "{d}"), 2),  # neither a TFDS dir nor a builder folder
        (("export", "mnist", "--data-dir", "{d}", "--format", "parquet", "-o", "{d}/x"), 2),
        (("croissant", "no_such_dataset"), 2),
        (("site", "no_such_dataset", "-o", "{d}/site"), 2),
    ],
    ids=lambda v: v[0] if isinstance(v, tuple) else str(v),
)
def test_usage_errors_of_every_command_are_2(
    tmp_path: Path, args: tuple[str, ...], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """In this process (`catalog.cli.main`, what ``python -m catalog`` runs): the same code
    and one error line, without a process start per command."""
    try:
        got = main([a.format(d=tmp_path) for a in args])
    except SystemExit as stop:  # argparse's usage errors
        got = int(stop.code or 0)
    stderr = capsys.readouterr().err
    assert got == code, stderr
    assert stderr.startswith("catalog: error: ") and "Traceback" not in stderr, stderr


def test_errors_of_no_class_in_the_table_are_1_as_help_says() -> None:
    assert exit_code(WorkerLostError("x")) == 1  # nothing wrong with the command or the data
    assert exit_code(OSError("x")) == 1
    assert "worker process was killed" in EXIT_HELP.split("\n  2  ")[0]
    for code in set(EXIT_CODES.values()):
        assert f"\n  {code}  " in EXIT_HELP
