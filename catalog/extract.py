"""Extract archives safely, and only once: zip, tar (plain, gz, bz2, xz), gz, bz2, xz.

::

    extract(archive, dest_root)  ->  dest_root/<sha256[:16]>-<name>/

The format is recognised by the file's content (magic bytes; for a compressed file, whether
what it holds is a tar), not by its name. A single compressed file becomes one file,
``<name>`` without its ``.gz``/``.bz2``/``.xz`` suffix, in the extraction dir.

The extraction dir is keyed by the archive's content, so it is reused by every dataset and
version that needs the same archive. Extraction goes into a temporary directory beside it,
renamed into place when complete, under a file lock: a crash or a second process never sees
half of it. No member may land outside it: absolute paths, ``..`` escapes, symlinks and hard
links pointing out, and device files or FIFOs make the whole archive refused, by our own
checks with tarfile's ``data`` filter behind them.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import posixpath
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock

from catalog.checksums import CHUNK_SIZE, content_name, sha256_file
from catalog.errors import SourceFormatError
from catalog.locking import make_dir

__all__ = ["FORMATS", "archive_format", "extract"]

#: What :func:`extract` handles, as :func:`archive_format` names them.
FORMATS = ("zip", "tar", "tar.gz", "tar.bz2", "tar.xz", "gz", "bz2", "xz")

_MAGIC = {"gz": b"\x1f\x8b", "bz2": b"BZh", "xz": b"\xfd7zXZ\x00"}
_TAR_MODES: dict[str, Literal["r|", "r|gz", "r|bz2", "r|xz"]] = {
    "tar": "r|", "tar.gz": "r|gz", "tar.bz2": "r|bz2", "tar.xz": "r|xz",
}  # fmt: skip
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header; an empty archive's end
_SUFFIXES = (".gz", ".gzip", ".bz2", ".xz")
_CORRUPT = (tarfile.TarError, zipfile.BadZipFile, gzip.BadGzipFile, EOFError, zlib.error,
            lzma.LZMAError)  # fmt: skip
_DRIVE = re.compile(r"^[A-Za-z]:")


def archive_format(path: str | os.PathLike[str]) -> str | None:
    """One of :data:`FORMATS`, from the file's first bytes; None if it is none of them."""
    with open(path, "rb") as f:
        head = f.read(tarfile.BLOCKSIZE)
    if head.startswith(_ZIP_MAGIC):
        return "zip"
    if _is_tar_block(head):
        return "tar"
    for name, magic in _MAGIC.items():
        if head.startswith(magic):
            try:
                with _open_compressed(name, path) as inner:
                    first = inner.read(tarfile.BLOCKSIZE)
            except (*_CORRUPT, OSError):
                return name  # corrupt: extracting it reports the problem
            return f"tar.{name}" if _is_tar_block(first) else name
    return None


def extract(
    archive: str | os.PathLike[str],
    dest_root: str | os.PathLike[str],
    *,
    name: str | None = None,
    sha256: str | None = None,
) -> Path:
    """Extract ``archive`` into ``dest_root/<sha256[:16]>-<name>/`` (reused when present).

    ``name`` defaults to the archive's file name; ``sha256`` (of the archive) saves hashing
    it when the caller knows it. Raises SourceFormatError for an unknown, corrupt or unsafe
    archive, leaving nothing behind.
    """
    archive, dest_root = Path(archive), Path(dest_root)
    name = name or archive.name
    if name in ("", ".", "..") or "/" in name or "\\" in name:
        raise ValueError(f"name must be a plain file name, got {name!r}")
    fmt = archive_format(archive)
    if fmt is None:
        raise SourceFormatError(
            f"{archive} is not an archive or compressed file catalog can extract (by its "
            f"content; known: {', '.join(FORMATS)})"
        )
    target = dest_root / content_name(sha256 or sha256_file(archive), name)
    if target.is_dir():
        return target
    dest_root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(dest_root / f".{target.name}.lock")):
        if target.is_dir():  # another process finished it while we waited
            return target
        for stale in dest_root.glob(f".{target.name}.incomplete-*"):
            shutil.rmtree(stale, ignore_errors=True)  # left by a run that was killed
        work = make_dir(dest_root, f".{target.name}.incomplete-")
        try:
            if fmt == "zip":
                _extract_zip(archive, work, target)
            elif fmt.startswith("tar"):
                _extract_tar(archive, fmt, work, target)
            else:
                _decompress(archive, fmt, work / _strip_suffix(name))
            os.rename(work, target)
        except _CORRUPT as error:
            shutil.rmtree(work, ignore_errors=True)
            raise SourceFormatError(f"{archive} is not a valid {fmt} file: {error}") from None
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return target


def _extract_tar(archive: Path, fmt: str, work: Path, target: Path) -> None:
    # Stream mode ("r|..."): one pass over the archive, each member checked before it is
    # written. The data filter stays behind our checks and also catches what depends on
    # links already on disk.
    with tarfile.open(archive, _TAR_MODES[fmt]) as tar:
        try:
            tar.extractall(work, members=_checked_members(tar, archive, target), filter="data")
        except tarfile.FilterError as error:
            raise SourceFormatError(f"refusing to extract {archive}: {error}") from None


def _checked_members(tar: tarfile.TarFile, archive: Path, target: Path) -> Iterator[Any]:
    for member in tar:
        _check_path(member.name, archive, target)
        refuse = f"refusing to extract {archive}: member {member.name!r}"
        if member.isdev():
            kind = "a FIFO" if member.isfifo() else "a device file"
            raise SourceFormatError(f"{refuse} is {kind}")
        if member.issym() or member.islnk():
            # A symlink's target is relative to its directory, a hard link's to the root.
            base = posixpath.dirname(member.name) if member.issym() else ""
            link = member.linkname
            if _escapes(posixpath.join(base, link)) or _absolute(link):
                kind = "symlink" if member.issym() else "hard link"
                raise SourceFormatError(
                    f"{refuse} is a {kind} pointing outside {target} (to {link!r})"
                )
        yield member


def _extract_zip(archive: Path, work: Path, target: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            _check_path(info.filename, archive, target)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise SourceFormatError(
                    f"refusing to extract {archive}: member {info.filename!r} is a symlink "
                    "(not supported in zip archives)"
                )
        zf.extractall(work)


def _decompress(archive: Path, fmt: str, out: Path) -> None:
    with _open_compressed(fmt, archive) as source, open(out, "wb") as sink:
        shutil.copyfileobj(source, sink, CHUNK_SIZE)


def _open_compressed(fmt: str, path: str | os.PathLike[str]) -> io.BufferedIOBase:
    if fmt == "gz":
        return gzip.open(path, "rb")
    if fmt == "bz2":
        return bz2.open(path, "rb")
    return lzma.open(path, "rb")


def _check_path(member: str, archive: Path, target: Path) -> None:
    if _absolute(member) or _escapes(member):
        raise SourceFormatError(
            f"refusing to extract {archive}: member {member!r} would land outside {target}"
        )


def _absolute(name: str) -> bool:
    return name.startswith(("/", "\\")) or bool(_DRIVE.match(name))


def _escapes(name: str) -> bool:
    """Whether a relative archive path leads out of the directory it is extracted into."""
    normal = posixpath.normpath(name.replace("\\", "/"))
    return normal == ".." or normal.startswith("../")


def _strip_suffix(name: str) -> str:
    for suffix in _SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _is_tar_block(block: bytes) -> bool:
    """Whether a 512-byte block is a tar header (ustar/GNU magic, or a valid v7 checksum)."""
    if len(block) < tarfile.BLOCKSIZE:
        return False
    if block[257:262] == b"ustar":
        return True
    try:
        tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True
