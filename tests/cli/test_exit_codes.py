"""The `catalog` command's exit codes, run as a subprocess: 2 for usage errors, 3 for data
errors (a TFDS directory whose files or records are bad), one line on stderr, no traceback,
nothing after the error; the codes listed in `catalog --help`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from catalog import errors
from catalog.cli.common import EXIT_CODES, EXIT_DATA, EXIT_FAILED, EXIT_USAGE, exit_code
from catalog.interop.tfrecord import encode_example, parse_example, read_records, write_records

from conftest import catalog_cli

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "tf" / "tfds_tfrecord"
SOURCE = SOURCE / "tiny_features" / "1.2.0"
SHARD = "tiny_features-test.tfrecord-00000-of-00001"


def run(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return catalog_cli(*args, env={"CATALOG_DATA_DIR": str(data_dir)}, timeout=120)


def one_line(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("catalog: error: "), result.stderr
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    return lines[0]


def copy_of(tmp_path: Path) -> Path:
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(SOURCE, copy)
    return copy


def change_record(copy: Path, key: str, value: object) -> None:
    shard = copy / SHARD
    records = list(read_records(shard))
    parsed = parse_example(records[1])
    parsed[key] = value
    records[1] = encode_example(parsed)
    write_records(shard, records)


def test_every_catalog_error_has_its_exit_code() -> None:
    classes = [getattr(errors, n) for n in errors.__all__]
    assert set(EXIT_CODES) == set(classes)
    # a catalog error of no other class: failed, nothing wrong with the command or the data
    assert set(EXIT_CODES.values()) == {EXIT_FAILED, EXIT_USAGE, EXIT_DATA}
    assert EXIT_CODES[errors.CatalogError] == EXIT_FAILED
    assert exit_code(errors.SourceFormatError("x")) == exit_code(errors.ShardError("x")) == 3
    assert exit_code(errors.DatasetNotFoundError("x")) == exit_code(errors.SplitError("x")) == 2

    class Derived(errors.ChecksumError):
        pass

    assert exit_code(Derived("x")) == EXIT_DATA  # a subclass: its base's code


def test_help_lists_the_exit_codes(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "catalog", "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    codes = result.stdout.split("exit codes:\n")[1].split("\n\n")[0]
    for code, word in (("0", "done"), ("1", "failed"), ("2", "usage"), ("3", "data")):
        assert f"  {code}  " in codes and word in codes


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("label", np.array([3.7], np.float32), "feature 'label': expected an Int64List"),
        ("text", np.array([1 << 62], np.int64), "feature 'text': expected a BytesList"),
        ("image", np.array([600_000_000], np.int64), "feature 'image': expected a BytesList"),
        ("image", [b"\x89PNG\r\n\x1a\ngarbage"], "feature 'image':"),
    ],
)
def test_import_of_bad_records_exits_3(tmp_path: Path, key: str, value: object, words: str) -> None:
    copy = copy_of(tmp_path)
    change_record(copy, key, value)
    line = one_line(run("import", str(copy), data_dir=tmp_path / "data"), 3)
    assert f"{copy / SHARD}: record 1" in line and words in line, line
    assert not (tmp_path / "data" / "tiny_features" / "1.2.0").exists()


@pytest.mark.parametrize(
    ("lengths", "words"),
    [("-5", "shardLengths[0] is '-5'"), ("abc", "'abc'"), ("1e30", "'1e30'")],
)
def test_import_of_bad_shard_lengths_exits_3(tmp_path: Path, lengths: str, words: str) -> None:
    copy = copy_of(tmp_path)
    info = json.loads((copy / "dataset_info.json").read_text())
    info["splits"][1]["shardLengths"] = [lengths]
    (copy / "dataset_info.json").write_text(json.dumps(info))
    line = one_line(run("import", str(copy), data_dir=tmp_path / "data"), 3)
    assert str(copy / "dataset_info.json") in line and words in line, line


def test_import_of_a_dataset_info_json_that_is_not_json_exits_3(tmp_path: Path) -> None:
    copy = copy_of(tmp_path)
    (copy / "dataset_info.json").write_text("{ not json")
    line = one_line(run("import", str(copy), data_dir=tmp_path / "data"), 3)
    assert "dataset_info.json: not valid JSON" in line and "builder.yaml" not in line


def test_import_of_a_truncated_shard_exits_3_without_a_destructor_error(tmp_path: Path) -> None:
    copy = copy_of(tmp_path)
    shard = copy / SHARD
    shard.write_bytes(shard.read_bytes()[:-10])
    line = one_line(run("import", str(copy), data_dir=tmp_path / "data"), 3)
    assert SHARD in line


def test_usage_errors_still_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    one_line(run("import", str(tmp_path / "nowhere"), data_dir=data), 2)
    one_line(run("info", "no_such_dataset_here", data_dir=data), 2)
    one_line(run("import", str(SOURCE), "--frobnicate", data_dir=data), 2)
    assert run("import", str(SOURCE), data_dir=data).returncode == 0
    line = one_line(run("import", str(SOURCE), data_dir=data), 2)  # exists: --overwrite
    assert "--overwrite" in line
