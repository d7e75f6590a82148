"""`catalog rm` / `catalog clean`: prepared data and downloads removed, under the prepare lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env=os.environ,
    )  # fmt: skip


def cached(downloads: Path) -> list[str]:
    """The download cache's files and records (not its lock files)."""
    return sorted(
        str(p.relative_to(downloads))
        for p in downloads.rglob("*")
        if p.is_file() and p.suffix != ".lock"
    )


def test_rm_removes_the_prepared_version_then_downloads(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = str(idx_builder(tmp_path, server, 5))
    data = tmp_path / "data"
    target = data / "tiny" / "1.0.0"
    assert run("prepare", folder, "--data-dir", str(data)).returncode == 0
    downloads = cached(data / "downloads")
    assert len(downloads) == 4  # two files and their records

    dry = run("rm", folder, "--data-dir", str(data), "--downloads", "--dry-run")
    assert dry.returncode == 0 and target.is_dir() and cached(data / "downloads") == downloads
    assert dry.stdout.startswith(f"tiny 1.0.0: would remove {target} (")

    result = run("rm", folder, "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"tiny 1.0.0: removed {target} (") and "KiB)" in result.stdout
    assert not target.exists() and cached(data / "downloads") == downloads

    again = run("rm", folder, "--data-dir", str(data))
    assert again.returncode == 0
    assert again.stdout == f"tiny 1.0.0: not prepared in {data}; nothing to remove\n"

    requests = len(server.requests)
    assert run("prepare", folder, "--data-dir", str(data)).returncode == 0
    assert len(server.requests) == requests  # prepared again from the download cache

    result = run("clean", folder, "--data-dir", str(data), "--downloads")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"tiny 1.0.0: removed {target}")
    assert lines[1].startswith("tiny 1.0.0: removed 2 downloads (")
    assert lines[1].endswith(f"from {data / 'downloads'}")
    assert not target.exists() and cached(data / "downloads") == []
    result = run("rm", folder, "--data-dir", str(data), "--downloads")
    assert result.stdout.splitlines()[1] == (
        f"tiny 1.0.0: no downloads in {data / 'downloads'}; nothing to remove"
    )


def test_rm_waits_for_a_prepare_holding_the_lock(tmp_path: Path, server: LoopbackServer) -> None:
    folder = str(idx_builder(tmp_path, server, 3))
    data = tmp_path / "data"
    assert run("prepare", folder, "--data-dir", str(data)).returncode == 0
    lock = FileLock(str(data / "tiny" / ".1.0.0.lock"))  # what a running prepare holds
    with lock:
        proc = subprocess.Popen(
            [sys.executable, "-m", "catalog", "rm", folder, "--data-dir", str(data)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stderr is not None
        line = proc.stderr.readline()  # rm says it waits, and waits
        assert line.startswith("waiting for another process preparing ")
        assert (data / "tiny" / "1.0.0" / "dataset_info.json").is_file()
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "removed" in stdout
    assert not (data / "tiny" / "1.0.0").exists()


def test_rm_of_a_name_nothing_answers_to_removes_nothing_and_names_close_ones(
    tmp_path: Path,
) -> None:
    """Nothing to remove is not an error, for a name nothing answers to too (a dataset
    prepared from files and removed already is such a name): exit 0, and a typo of a
    registered name is pointed out. An argument that cannot name a dataset is a usage error."""
    result = run("rm", "fashion_mnst", "--data-dir", str(tmp_path))
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert "fashion_mnst: nothing prepared under that name" in result.stdout
    assert "did you mean fashion_mnist?" in result.stdout
    files = run("rm", str(tmp_path / "nope.csv"), "--data-dir", str(tmp_path))
    assert files.returncode == 2 and "Traceback" not in files.stderr
