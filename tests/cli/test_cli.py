"""The `catalog` command, run as a subprocess like a user or a CI job would."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import catalog
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from conftest import write_builder


def run(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})}, cwd=cwd,
    )  # fmt: skip


def tiny(tmp_path: Path, server: LoopbackServer, name: str = "tiny") -> Path:
    write_idx(tmp_path / f"{name}-i.gz", pattern_images(5))
    write_idx(tmp_path / f"{name}-l.gz", pattern_labels(5))
    files = {
        "i.gz": (tmp_path / f"{name}-i.gz").read_bytes(),
        "l.gz": (tmp_path / f"{name}-l.gz").read_bytes(),
    }
    return write_builder(
        tmp_path / name, server, files, name=name, splits={"train": ("i.gz", "l.gz", 5)}
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("catalog: error: "), result.stderr
    return result.stderr


def test_list_shows_registered_datasets() -> None:
    result = run("list")
    assert result.returncode == 0, result.stderr
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert names[:6] == [
        "ag_news_subset",
        "beans",
        "binarized_mnist",
        "caltech101",
        "caltech_birds2011",
        "cars196",
    ]
    assert "fashion_mnist" in names and "tf_flowers" in names
    assert "train 60000, test 10000" in result.stdout


def test_prepare_by_path_then_reuse(tmp_path: Path, server: LoopbackServer) -> None:
    folder = tiny(tmp_path, server)
    data = tmp_path / "data"
    first = run("prepare", str(folder), "--data-dir", str(data))
    assert first.returncode == 0, first.stderr
    assert "tiny 1.0.0: prepared in" in first.stdout and "train 5 examples" in first.stdout
    assert (data / "tiny" / "1.0.0" / "dataset_info.json").is_file()
    second = run("prepare", str(folder), "--data-dir", str(data))
    assert second.returncode == 0 and "tiny 1.0.0: reused: train 5 examples" in second.stdout


def test_data_dir_from_the_environment(tmp_path: Path, server: LoopbackServer) -> None:
    folder = tiny(tmp_path, server)
    result = run("prepare", str(folder), env={"CATALOG_DATA_DIR": str(tmp_path / "envdata")})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "envdata" / "tiny" / "1.0.0" / "dataset_info.json").is_file()
    assert (tmp_path / "envdata" / "downloads").is_dir()


def test_one_failure_exits_1_and_the_other_is_still_prepared(
    tmp_path: Path, server: LoopbackServer
) -> None:
    good, bad = tiny(tmp_path, server, "good"), tiny(tmp_path, server, "bad")
    server.add(
        "/files/bad/i.gz", b"<!DOCTYPE html><html>rate limited</html>", content_type="text/html"
    )
    result = run("prepare", str(bad), str(good), "--data-dir", str(tmp_path / "data"))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "catalog: error: bad: " in result.stderr and "HTML page" in result.stderr
    assert (tmp_path / "data" / "good" / "1.0.0" / "dataset_info.json").is_file()
    assert not (tmp_path / "data" / "bad" / "1.0.0").exists()


def test_unknown_dataset_is_a_usage_error_with_suggestions() -> None:
    stderr = assert_one_line_error(run("prepare", "fashion_mnst"), 2)
    assert "no dataset named 'fashion_mnst'; did you mean fashion_mnist?" in stderr
    assert len(stderr.strip().splitlines()) == 1


#: Each usage error: the arguments, and words its one line must contain.
USAGE_ERRORS = [
    (("frobnicate",), "invalid choice: 'frobnicate'"),
    ((), "required: COMMAND"),
    (("prepare",), "required: NAME"),
    (("prepare", "mnist", "--frobnicate"), "unrecognized arguments: --frobnicate"),
    (("prepare", "mnist", "--max-examples-per-split", "0"), "expected a positive integer"),
    (("prepare", "no_such_dataset"), "no dataset named 'no_such_dataset'"),
    (("show", "mnist", "-n", "0"), "expected a positive integer, got '0'"),
    (("show", "mnist", "-n", "many"), "expected a positive integer, got 'many'"),
    (("show", "mnist", "-n", "5000"), "at most 1024"),
    (("show", "fashion_mnst"), "did you mean fashion_mnist?"),
    (("verify",), "required: NAME"),
    (("rm", "mnist", "--yes-really"), "unrecognized arguments: --yes-really"),
    (("info", "mnist", "extra"), "unrecognized arguments: extra"),
]


@pytest.mark.parametrize(("args", "words"), USAGE_ERRORS)
def test_usage_errors_exit_2_with_one_line(
    args: tuple[str, ...], words: str, tmp_path: Path
) -> None:
    result = run(*args, env={"CATALOG_DATA_DIR": str(tmp_path)})
    stderr = assert_one_line_error(result, 2)
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert words in stderr
    assert result.stdout == ""


@pytest.mark.parametrize("command", ["prepare", "list", "info", "show", "verify", "rm", "clean"])
def test_every_command_has_help_with_an_example_and_the_environment(command: str) -> None:
    result = run(command, "--help")
    assert result.returncode == 0, result.stderr
    example = result.stdout.split("example:\n")[1].splitlines()[0]
    assert example.strip().startswith("catalog "), result.stdout
    for variable in ENVIRONMENT_VARIABLES:
        assert variable in result.stdout


ENVIRONMENT_VARIABLES = ("CATALOG_DATA_DIR", "CATALOG_DOWNLOAD_DIR", "CATALOG_MIRRORS",
                         "CATALOG_OFFLINE", "CATALOG_MIN_DOWNLOAD_RATE")  # fmt: skip


def test_top_level_help_lists_commands_and_environment() -> None:
    result = run("--help")
    assert result.returncode == 0
    for command in ("prepare", "list", "info", "show", "verify", "rm"):
        assert f"\n    {command}" in result.stdout, command
    for variable in ENVIRONMENT_VARIABLES:
        assert variable in result.stdout
    # The docs' "Environment variables" section names the same variables.
    page = Path(__file__).resolve().parents[2] / "docs" / "reference" / "environment.md"
    section = page.read_text().split("## Environment variables")[1].split("\n## ")[0]
    for variable in ENVIRONMENT_VARIABLES:
        assert variable in section


def test_without_network_prepare_names_the_url_that_failed(tmp_path: Path) -> None:
    # Route all HTTP(S) through a proxy port nothing listens on: no packet leaves the machine.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    env = {"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "http_proxy": dead, "https_proxy": dead,
           "NO_PROXY": "", "no_proxy": ""}  # fmt: skip
    result = run("prepare", "fashion_mnist", "--data-dir", str(tmp_path), env=env)
    assert result.returncode == 3, result  # a failed download
    assert "Traceback" not in result.stderr
    assert (
        "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/train-images-idx3-ubyte.gz"
        in result.stderr
    )
    assert not (tmp_path / "fashion_mnist" / "3.0.1").exists()
    assert not [
        p for p in (tmp_path / "downloads").rglob("*") if p.is_file() and p.suffix != ".lock"
    ]


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0 and result.stdout == f"catalog {catalog.__version__}\n"


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "catalog"
    result = subprocess.run([str(script), "list"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "fashion_mnist" in result.stdout


def test_a_closed_pipe_is_not_an_error() -> None:
    # `catalog list --json | head`: the reader is gone before catalog writes (it closes its
    # end at once; the child needs ~100 ms just to import), so the write hits a broken pipe.
    proc = subprocess.Popen(
        [sys.executable, "-m", "catalog", "list", "--json"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    proc.stdout.close()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr
