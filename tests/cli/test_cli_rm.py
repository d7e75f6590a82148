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


def _prepared_csv(tmp_path: Path) -> Path:
    table = tmp_path / "people.csv"
    table.write_text("name,age\n" + "".join(f"p{i},{i}\n" for i in range(50)))
    data = tmp_path / "data"
    prepared = run("prepare", str(table), "--data-dir", str(data))
    assert prepared.returncode == 0, prepared.stderr
    return data


def test_rm_of_a_dataset_prepared_from_files_frees_it(tmp_path: Path) -> None:
    """Found by name through its own generation (the pin that found it is no reader): it
    used to say "removed (0 B); 1 generation still read by a running process is left" and
    leave the data on disk, unreachable by name."""
    data = _prepared_csv(tmp_path)
    size = sum(f.stat().st_size for f in (data / "people").rglob("*") if f.is_file())
    first = run("rm", "people", "--data-dir", str(data))
    assert first.returncode == 0, first.stderr
    assert "people 1.0.0: removed " in first.stdout and "(0 B)" not in first.stdout, first.stdout
    assert "still read" not in first.stdout and size > 100_000, (first.stdout, size)
    assert sorted(p.name for p in (data / "people").iterdir()) == [".1.0.0.lock"]
    again = run("rm", "people", "--data-dir", str(data))
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert "people: nothing prepared under that name" in again.stdout, again.stdout


def test_rm_again_removes_what_a_reader_in_another_process_held(tmp_path: Path) -> None:
    """The first rm leaves the generation a reader holds and says to run rm again: the
    second, by the same name (which no longer resolves), removes it once the reader is gone."""
    data = _prepared_csv(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, catalog\n"
         f"ds = catalog.data_source('people', split='train', data_dir={str(data)!r})\n"
         "print(len(ds), flush=True)\nsys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdin is not None and holder.stdout is not None
        assert holder.stdout.readline().strip() == "50"
        first = run("rm", "people", "--data-dir", str(data))
        assert first.returncode == 0, first.stderr
        assert "1 generation still read by a running process" in first.stdout, first.stdout
        holder.communicate("\n", timeout=60)  # the reader closes its data source and exits
        assert holder.returncode == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.communicate()
    left = [p.name for p in (data / "people").iterdir() if ".gen-" in p.name]
    assert left, "the held generation was left by the first rm"
    dry = run("rm", "people", "--data-dir", str(data), "--dry-run")
    assert dry.returncode == 0 and "would remove" in dry.stdout, dry.stdout
    again = run("rm", "people", "--data-dir", str(data))
    assert again.returncode == 0, again.stderr
    assert "removed" in again.stdout and "(0 B)" not in again.stdout, again.stdout
    assert sorted(p.name for p in (data / "people").iterdir()) == [".1.0.0.lock"]
    last = run("rm", "people", "--data-dir", str(data))
    assert last.returncode == 0 and "nothing to remove" in last.stdout, last.stdout
