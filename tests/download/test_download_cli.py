"""Downloads through the whole stack: DatasetBuilder, data_source and `catalog prepare`
with --offline, --mirror, --manual-dir and --register-checksums."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import catalog
from catalog.download import DownloadConfig
from catalog.download.checksums import read_checksums
from catalog.errors import ChecksumError
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from conftest import write_builder

SPLITS = {"train": ("i.gz", "l.gz", 5)}


def idx_files(tmp_path: Path) -> dict[str, bytes]:
    write_idx(tmp_path / "i.gz", pattern_images(5))
    write_idx(tmp_path / "l.gz", pattern_labels(5))
    return {"i.gz": (tmp_path / "i.gz").read_bytes(), "l.gz": (tmp_path / "l.gz").read_bytes()}


def mirror_dir(root: Path, server: LoopbackServer, files: dict[str, bytes]) -> Path:
    """A local mirror of the builder's files in the `wget -x` layout."""
    host = server.base_url.removeprefix("http://")
    for filename, data in files.items():
        path = root / host / "files" / "tiny" / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_data_source_offline_from_a_mirror_directory(
    tmp_path: Path, server: LoopbackServer
) -> None:
    files = idx_files(tmp_path)
    folder = write_builder(tmp_path / "tiny", server, files, splits=SPLITS)
    mirror = mirror_dir(tmp_path / "mirror", server, files)
    config = DownloadConfig(offline=True, mirrors=[str(mirror)], progress="none")
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "d", download_config=config)
    assert len(ds) == 5 and server.requests == []


def test_register_checksums_merges_sorted_and_keeps_other_entries(
    tmp_path: Path, server: LoopbackServer
) -> None:
    files = idx_files(tmp_path)
    folder = write_builder(tmp_path / "tiny", server, files, splits=SPLITS, register=False)
    keep = ["http://0.example/first.bin\t3\t" + "a" * 64 + "\tfirst.bin",
            "https://z.example/last.bin\t5\t" + "b" * 64 + "\tlast.bin"]  # fmt: skip
    (folder / "checksums.tsv").write_text(
        "# checksums of tiny\n" + "\n".join(reversed(keep)) + "\n"
    )
    b = catalog.builder(folder, data_dir=tmp_path / "d")
    config = DownloadConfig(register_checksums=True, mirrors=(), offline=False, progress="none")
    info = b.download_and_prepare(download_config=config)
    assert info.splits["train"].num_examples == 5
    lines = (folder / "checksums.tsv").read_text().splitlines()
    assert lines[0] == "# checksums of tiny"
    urls = [line.split("\t")[0] for line in lines[1:]]
    assert urls == sorted(urls) and len(urls) == 4
    assert lines[1] == keep[0] and lines[-1] == keep[1]  # never dropped
    table = read_checksums(folder / "checksums.tsv")
    for filename, data in files.items():
        url = server.url(f"/files/tiny/{filename}")
        assert table[url] == (len(data), hashlib.sha256(data).hexdigest(), filename)


def test_register_checksums_updates_a_changed_file(tmp_path: Path, server: LoopbackServer) -> None:
    files = idx_files(tmp_path)
    folder = write_builder(tmp_path / "tiny", server, files, splits=SPLITS)
    before = read_checksums(folder / "checksums.tsv")
    write_idx(tmp_path / "l2.gz", pattern_labels(5, seed=7))  # the upstream file changed
    changed = (tmp_path / "l2.gz").read_bytes()
    assert changed != files["l.gz"]
    server.add("/files/tiny/l.gz", changed)
    quiet = DownloadConfig(mirrors=(), offline=False, progress="none")
    with pytest.raises(ChecksumError):
        catalog.builder(folder, data_dir=tmp_path / "d").download_and_prepare(download_config=quiet)
    register = DownloadConfig(register_checksums=True, mirrors=(), offline=False, progress="none")
    info = catalog.builder(folder, data_dir=tmp_path / "d").download_and_prepare(
        download_config=register
    )
    assert info.splits["train"].num_examples == 5
    after = read_checksums(folder / "checksums.tsv")
    url = server.url("/files/tiny/l.gz")
    assert after[url][1] != before[url][1] and after[url][0] == len(changed)
    assert {u: v for u, v in after.items() if u != url} == {
        u: v for u, v in before.items() if u != url
    }


def test_cli_offline_needs_a_local_source(tmp_path: Path, server: LoopbackServer) -> None:
    files = idx_files(tmp_path)
    folder = write_builder(tmp_path / "tiny", server, files, splits=SPLITS)
    data = str(tmp_path / "data")
    result = run("prepare", str(folder), "--data-dir", data, env={"CATALOG_OFFLINE": "1"})
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert "catalog: error: tiny: " in result.stderr
    assert "2 of 2 files are needed but catalog is offline" in result.stderr
    assert "no local source has them (i.gz, l.gz)" in result.stderr
    assert "--manual-dir" in result.stderr and "--mirror" in result.stderr
    assert server.requests == []
    mirror = mirror_dir(tmp_path / "mirror", server, files)
    result = run("prepare", str(folder), "--data-dir", data, "--offline", "--mirror", str(mirror))
    assert result.returncode == 0, result.stderr
    assert "tiny 1.0.0: prepared" in result.stdout and server.requests == []


def test_cli_manual_dir_and_register_checksums(tmp_path: Path, server: LoopbackServer) -> None:
    files = idx_files(tmp_path)
    folder = write_builder(tmp_path / "tiny", server, files, splits=SPLITS, register=False)
    manual = tmp_path / "manual"
    manual.mkdir()
    for filename, data in files.items():
        (manual / filename).write_bytes(data)
    args = ["prepare", str(folder), "--data-dir", str(tmp_path / "data"), "--offline"]
    result = run(*args, "--manual-dir", str(manual), "--register-checksums")
    assert result.returncode == 0, result.stderr
    assert "registered 2 checksums in" in result.stderr
    assert len(read_checksums(folder / "checksums.tsv")) == 2 and server.requests == []


def test_cli_bad_offline_value_is_a_usage_error(tmp_path: Path) -> None:
    result = run("prepare", "mnist", "--data-dir", str(tmp_path), env={"CATALOG_OFFLINE": "maybe"})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("catalog: error: CATALOG_OFFLINE='maybe'")
