"""A download dir that fills up: one clear StorageError, and the dir is left as it was found
apart from complete, verified files (each with its record), which a later run reuses. No part
file, lock file or temporary record stays behind. Real tmpfs file systems (skipped where they
cannot be mounted), a real loopback HTTP server."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

import catalog
from catalog.download import DownloadConfig, DownloadManager, Resource
from catalog.errors import StorageError
from catalog.testing.http_server import LoopbackServer

from conftest import small_disk, write_builder

MIB = 1 << 20


def random_bytes(size: int, seed: int) -> bytes:
    import numpy as np

    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()


def blobs(server: LoopbackServer, sizes: dict[str, int]) -> dict[str, Resource]:
    """Incompressible files of `sizes`, served by `server`, as registered resources."""
    resources = {}
    for seed, (name, size) in enumerate(sizes.items()):
        data = random_bytes(size, seed)
        url = server.add(f"/{name}", data)
        resources[name] = Resource((url,), size, hashlib.sha256(data).hexdigest(), name)
    return resources


def left_behind(download_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(download_dir)) for p in download_dir.rglob("*"))


def assert_only_complete_files(download_dir: Path) -> None:
    """Everything in the dir is a verified file named by its content, or its JSON record."""
    for path in download_dir.rglob("*"):
        if path.is_dir():
            assert path.name == ".meta", left_behind(download_dir)
            continue
        if path.parent.name == ".meta":
            assert path.suffix == ".json", left_behind(download_dir)
            assert (download_dir / path.stem).is_file(), left_behind(download_dir)
        else:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            assert path.name.startswith(digest[:16] + "-"), path


def fetch(resources: dict[str, Resource], tmp_path: Path, download_dir: Path) -> None:
    config = DownloadConfig(
        download_dir=download_dir, manual_dir=tmp_path / "manual", mirrors=(), offline=False,
        max_workers=len(resources), retries=0, progress="none",
    )  # fmt: skip
    DownloadManager(config).download_all(resources)


def test_a_file_larger_than_the_free_space_leaves_the_dir_as_found(
    tmp_path: Path, server: LoopbackServer
) -> None:
    resources = blobs(server, {"big.bin": 8 * MIB})
    with small_disk(tmp_path / "disk", "5m") as disk:
        with pytest.raises(StorageError, match=r"not enough free space in .* 8\.0 MiB needed"):
            fetch(resources, tmp_path, disk / "downloads")
        assert left_behind(disk) == []  # not even the download dir it would have made


def test_a_disk_that_fills_up_mid_download_keeps_only_complete_files(
    tmp_path: Path, server: LoopbackServer
) -> None:
    # Each file fits alone, so the free-space check passes for both; together they do not.
    resources = blobs(server, {"a.bin": 3 * MIB, "b.bin": 3 * MIB, "small.bin": 1000})
    with small_disk(tmp_path / "disk", "5m") as disk:
        downloads = disk / "downloads"
        with pytest.raises(StorageError) as info:
            fetch(resources, tmp_path, downloads)
        message = str(info.value)
        assert "no space left in" in message or "not enough free space in" in message
        assert "CATALOG_DOWNLOAD_DIR" in message and "Traceback" not in message
        assert_only_complete_files(downloads)
        kept = [p for p in downloads.iterdir() if p.is_file()]
        assert 1 <= len(kept) <= 2  # small.bin, and a.bin or b.bin if it finished first
        # With room again, the next run reuses what was kept and fetches only the rest.
        subprocess.run(["mount", "-o", "remount,size=20m", str(disk)], check=True, timeout=30)
        before = len(server.requests)
        fetch(resources, tmp_path, downloads)
        assert len(server.requests) - before == 3 - len(kept)
        assert_only_complete_files(downloads)
        assert len([p for p in downloads.iterdir() if p.is_file()]) == 3


def test_a_full_disk_in_the_data_source_api_is_one_storage_error(
    tmp_path: Path, server: LoopbackServer
) -> None:
    files = {"a.bin": random_bytes(3 * MIB, 1), "b.bin": random_bytes(3 * MIB, 2)}
    # (an IDX split of the two files: never prepared, the downloads fail first)
    folder = write_builder(tmp_path / "blobs", server, files, splits={"t": ("a.bin", "b.bin", 1)})
    with small_disk(tmp_path / "disk", "5m") as disk:
        config = DownloadConfig(download_dir=disk / "dl", retries=0)
        with pytest.raises(StorageError):
            catalog.data_source(folder, data_dir=tmp_path / "data", download_config=config)
        assert_only_complete_files(disk / "dl")
