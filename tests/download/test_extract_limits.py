"""Disk stays bounded when extracting: bombs (zip, gzip, tar.gz, bz2) stop at a limit counted
while the bytes stream, unless the download declares its size; free space is checked first;
a full disk is a StorageError; an over-long member name is one clear error naming the archive.
Every archive is generated here, for real."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import subprocess
import sys
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from catalog.download import DownloadConfig, DownloadManager, Resource
from catalog.download.extract import RATIO_ALLOWANCE, extract, extraction_limit
from catalog.errors import SourceFormatError, StorageError
from catalog.testing.http_server import LoopbackServer

MiB = 1 << 20
BOMB = 128 * MiB  # zeros: compresses ~1000:1, past 100x its archive + 64 MiB
SMALL = 8 * MiB


class Zeros(io.RawIOBase):
    """`n` zero bytes, as a stream (nothing held in memory)."""

    def __init__(self, n: int) -> None:
        self.left = n

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def gz_bomb(path: Path, n: int = BOMB) -> Path:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # a gzip stream
    with open(path, "wb") as f:
        for _ in range(n // MiB):
            f.write(compressor.compress(b"\0" * MiB))
        f.write(compressor.flush())
    return path


def bz2_bomb(path: Path, n: int = BOMB) -> Path:
    compressor = bz2.BZ2Compressor(9)
    with open(path, "wb") as f:
        for _ in range(n // MiB):
            f.write(compressor.compress(b"\0" * MiB))
        f.write(compressor.flush())
    return path


def zip_bomb(path: Path, n: int = BOMB) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("zeros.bin", "w") as f:
        for _ in range(n // MiB):
            f.write(b"\0" * MiB)
    return path


def tar_gz_bomb(path: Path, n: int = BOMB) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("zeros.bin")
        info.size = n
        tar.addfile(info, io.BufferedReader(Zeros(n)))
    return path


BOMBS: dict[str, Callable[[Path], Path]] = {
    "zeros.gz": gz_bomb, "zeros.bz2": bz2_bomb, "zeros.zip": zip_bomb, "zeros.tar.gz": tar_gz_bomb,
}  # fmt: skip


@pytest.mark.parametrize("name", BOMBS)
def test_bombs_are_refused_and_leave_nothing(tmp_path: Path, name: str) -> None:
    archive = BOMBS[name](tmp_path / name)
    assert archive.stat().st_size * 100 + RATIO_ALLOWANCE < BOMB
    with pytest.raises(SourceFormatError) as info:
        extract(archive, tmp_path / "x")
    message = str(info.value)
    assert f"refusing to extract {archive}: it expands to more than" in message
    assert "max_extracted_size" in message and "builder.yaml" in message
    assert [p.name for p in (tmp_path / "x").iterdir() if not p.name.endswith(".lock")] == []


def test_a_declared_size_replaces_the_limit(tmp_path: Path) -> None:
    archive = gz_bomb(tmp_path / "zeros.gz", SMALL)
    with pytest.raises(SourceFormatError, match="expands to more than 7.0 MiB"):
        extract(archive, tmp_path / "y", max_size=SMALL - MiB)
    out = extract(archive, tmp_path / "x", max_size=SMALL)
    assert (out / "zeros").stat().st_size == SMALL


def test_a_lying_gzip_trailer_is_not_trusted(tmp_path: Path) -> None:
    archive = gz_bomb(tmp_path / "zeros.gz")
    data = bytearray(archive.read_bytes())
    data[-4:] = (10).to_bytes(4, "little")  # claims 10 bytes; the counting still stops it
    archive.write_bytes(bytes(data))
    with pytest.raises(SourceFormatError, match="expands to more than"):
        extract(archive, tmp_path / "x")


def test_the_manager_passes_the_declared_size(server: LoopbackServer, tmp_path: Path) -> None:
    body = gz_bomb(tmp_path / "zeros.gz", SMALL).read_bytes()
    url = server.add("/zeros.gz", body)
    sha = hashlib.sha256(body).hexdigest()
    config = DownloadConfig(
        download_dir=tmp_path / "dl", mirrors=(), offline=False, progress="none"
    )
    with DownloadManager(config) as dm:
        small = Resource((url,), len(body), sha, "zeros.gz", max_extracted_size=MiB)
        with pytest.raises(SourceFormatError, match="expands to more than 1.0 MiB"):
            dm.extract(dm.download(small))
        declared = Resource((url,), len(body), sha, "zeros.gz", max_extracted_size=SMALL)
        assert (dm.extract(dm.download(declared)) / "zeros").stat().st_size == SMALL


def test_limit_scales_with_the_archive_and_is_capped() -> None:
    assert extraction_limit(MiB) == 100 * MiB + RATIO_ALLOWANCE
    assert extraction_limit(1 << 40) == 64 << 30
    assert extraction_limit(1 << 40, max_size=200 << 30) == 200 << 30


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_a_5000_character_member_name_is_one_clear_error(tmp_path: Path, kind: str) -> None:
    name = "a" * 5000 + ".txt"
    if kind == "tar":
        archive = tmp_path / "long.tar"
        with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"hi"))
    else:
        archive = tmp_path / "long.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr(name, b"hi")
    with pytest.raises(SourceFormatError) as info:
        extract(archive, tmp_path / "x")
    assert f"refusing to extract {archive}: member 'aaaa" in str(info.value)
    assert "has a name of 5004 bytes" in str(info.value) and len(str(info.value)) < 600


def test_a_long_name_for_a_single_compressed_file_is_one_clear_error(tmp_path: Path) -> None:
    archive = tmp_path / "data.gz"
    archive.write_bytes(gzip.compress(b"data"))
    with pytest.raises(SourceFormatError, match=r"its name 'bbbb.*\(303 characters\) is too long"):
        extract(archive, tmp_path / "x", name="b" * 300 + ".gz")


def test_too_little_free_space_is_refused_before_extracting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = zip_bomb(tmp_path / "zeros.zip", 8 * MiB)
    import catalog.storage.diskspace

    usage = catalog.storage.diskspace.shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        catalog.storage.diskspace.shutil, "disk_usage", lambda p: usage._replace(free=MiB)
    )  # a nearly full disk
    with pytest.raises(StorageError) as info:
        extract(archive, tmp_path / "x")
    message = str(info.value)
    assert f"not enough free space in {tmp_path / 'x'} for extracting zeros.zip" in message
    assert "1.0 MiB free, 8.0 MiB needed" in message


def test_too_little_free_space_is_refused_before_downloading(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = b"x" * (2 * MiB)
    url = server.add("/big.bin", body)
    import catalog.storage.diskspace

    usage = catalog.storage.diskspace.shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        catalog.storage.diskspace.shutil, "disk_usage", lambda p: usage._replace(free=MiB)
    )
    config = DownloadConfig(
        download_dir=tmp_path / "dl", mirrors=(), offline=False, progress="none"
    )
    resource = Resource((url,), len(body), hashlib.sha256(body).hexdigest(), "big.bin")
    with pytest.raises(StorageError, match=r"1.0 MiB free, 2.0 MiB needed"):
        DownloadManager(config).download(resource)
    assert server.requests == []  # refused before asking


FULL_DISK = """
import resource, signal, sys
from catalog.download.extract import extract
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)          # a write past the limit fails: EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))
try:
    extract(sys.argv[1], sys.argv[2])
except Exception as error:
    print(type(error).__name__, error)
"""


def test_a_full_disk_while_extracting_is_a_storage_error(tmp_path: Path) -> None:
    archive = tmp_path / "random.gz"
    archive.write_bytes(gzip.compress(bytes(range(256)) * 8192))  # 2 MiB, little compressible
    # The limit on file size is set in the child, after the archive exists.
    result = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(archive), str(tmp_path / "x")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.stdout.startswith("StorageError extracting "), result
    assert "File too large" in result.stdout and "free" in result.stdout
    assert [p.name for p in (tmp_path / "x").iterdir() if not p.name.endswith(".lock")] == []
