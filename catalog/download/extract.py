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
links pointing out, device files, FIFOs and sparse files make the whole archive refused, by
our own checks with tarfile's ``data`` filter behind them, as does a member name longer than
the file system allows.

Disk stays bounded: the bytes an archive expands to are counted as they stream (declared sizes
are checked first, never trusted alone), and extraction stops with an error past
``max_size``: by default :data:`MAX_RATIO` times the archive's size (plus
:data:`RATIO_ALLOWANCE`), and never more than :data:`MAX_EXTRACTED_SIZE`. A download whose
archive really is larger declares it in builder.yaml (``max_extracted_size: 200GiB``). Free
space is checked first against the size the archive declares.
"""

from __future__ import annotations

import bz2
import contextlib
import errno
import gzip
import io
import lzma
import os
import posixpath
import re
import shutil
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock

from catalog._util.hashing import CHUNK_SIZE, sha256_file
from catalog._util.units import format_size
from catalog.download.checksums import content_name
from catalog.errors import SourceFormatError, StorageError
from catalog.storage.diskspace import free_space, require_free
from catalog.storage.locking import make_dir

__all__ = [
    "FORMATS",
    "MAX_EXTRACTED_SIZE",
    "MAX_RATIO",
    "RATIO_ALLOWANCE",
    "archive_format",
    "extract",
    "extraction_limit",
]

#: By default an archive may expand to MAX_RATIO times its size plus RATIO_ALLOWANCE...
MAX_RATIO = 100
RATIO_ALLOWANCE = 64 << 20
#: ... and never past MAX_EXTRACTED_SIZE, unless its download declares ``max_extracted_size``.
MAX_EXTRACTED_SIZE = 64 << 30
_NAME_MAX, _PATH_MAX = 255, 4096  # bytes, when the file system does not say
_STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}

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


def extraction_limit(archive_size: int, max_size: int | None = None) -> int:
    """The most an archive of `archive_size` bytes may expand to: `max_size` when its
    download declares one, else MAX_RATIO times its size plus RATIO_ALLOWANCE, at most
    MAX_EXTRACTED_SIZE.

    >>> extraction_limit(2 << 20) == 264 << 20, extraction_limit(1 << 40) == 64 << 30
    (True, True)
    """
    if max_size is not None:
        return max_size
    return min(MAX_RATIO * archive_size + RATIO_ALLOWANCE, MAX_EXTRACTED_SIZE)


def extract(
    archive: str | os.PathLike[str],
    dest_root: str | os.PathLike[str],
    *,
    name: str | None = None,
    sha256: str | None = None,
    max_size: int | None = None,
) -> Path:
    """Extract ``archive`` into ``dest_root/<sha256[:16]>-<name>/`` (reused when present).

    ``name`` defaults to the archive's file name; ``sha256`` (of the archive) saves hashing
    it when the caller knows it; ``max_size`` (bytes) replaces the default expansion limit
    (see :func:`extraction_limit`). Raises SourceFormatError for an unknown, corrupt or
    unsafe archive (a bomb among them), StorageError when the disk is too small, leaving
    nothing behind.
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
    work_name = f".{target.name}.incomplete-00000000"  # the longest name extract() makes
    if len(os.fsencode(work_name)) > _limits(dest_root)[0]:
        raise SourceFormatError(
            f"refusing to extract {archive}: its name {name[:60]!r}... ({len(name)} characters) "
            f"is too long for the file system to hold its extraction dir in {dest_root}"
        )
    with FileLock(str(dest_root / f".{target.name}.lock")):
        if target.is_dir():  # another process finished it while we waited
            return target
        for stale in dest_root.glob(f".{target.name}.incomplete-*"):
            shutil.rmtree(stale, ignore_errors=True)  # left by a run that was killed
        budget = _Budget(archive, extraction_limit(archive.stat().st_size, max_size))
        require_free(dest_root, min(_declared_size(archive, fmt), budget.limit),
                     f"extracting {archive.name}")  # fmt: skip
        work = make_dir(dest_root, f".{target.name}.incomplete-")
        try:
            if fmt == "zip":
                _extract_zip(archive, work, target, budget)
            elif fmt.startswith("tar"):
                _extract_tar(archive, fmt, work, target, budget)
            else:
                out = work / _strip_suffix(name)
                _check_name_length(out.name, archive, work)
                _decompress(archive, fmt, out, budget)
            os.rename(work, target)
        except _CORRUPT as error:
            shutil.rmtree(work, ignore_errors=True)
            raise SourceFormatError(f"{archive} is not a valid {fmt} file: {error}") from None
        except OSError as error:
            shutil.rmtree(work, ignore_errors=True)
            if isinstance(error, (SourceFormatError, StorageError)):
                raise
            if error.errno in _STORAGE_ERRNOS:
                free = free_space(dest_root)
                raise StorageError(
                    f"extracting {archive} into {dest_root} failed: {error.strerror} "
                    f"({format_size(free)} free after cleaning up; the archive expands to "
                    f"more than {format_size(budget.used)}); free some space or use another "
                    "download dir (--download-dir or CATALOG_DOWNLOAD_DIR)"
                ) from None
            if error.errno == errno.ENAMETOOLONG:
                raise SourceFormatError(
                    f"refusing to extract {archive}: a member's name is too long for the file "
                    f"system ({error.filename!r})"
                ) from None
            raise
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return target


class _Budget:
    """The bytes an archive may still expand to, counted as they are written."""

    def __init__(self, archive: Path, limit: int) -> None:
        self.archive, self.limit, self.used = archive, limit, 0

    def take(self, n: int, member: str) -> None:
        """Count `n` more bytes of `member`; SourceFormatError past the limit."""
        self.used += n
        if self.used > self.limit:
            raise SourceFormatError(
                f"refusing to extract {self.archive}: it expands to more than "
                f"{format_size(self.limit)} (reached at member {member!r}; the archive holds "
                f"{format_size(self.archive.stat().st_size)}), past catalog's limit for it "
                f"(at most {MAX_RATIO} times its size plus {format_size(RATIO_ALLOWANCE)}, "
                f"never more than {format_size(MAX_EXTRACTED_SIZE)}): an archive bomb, or a "
                "dataset that must declare its size: add 'max_extracted_size: <size, e.g. "
                "200GiB>' to its download in builder.yaml"
            )


class _CountingReader(io.RawIOBase):
    """A read-only stream passing `source`'s bytes through `budget`."""

    def __init__(self, source: io.BufferedIOBase, budget: _Budget) -> None:
        self.source, self.budget = source, budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.source.read(len(buffer))
        self.budget.take(len(data), "(the tar stream)")
        buffer[: len(data)] = data
        return len(data)


def _declared_size(archive: Path, fmt: str) -> int:
    """What an archive says it expands to (zip: its members' sizes; gzip: its trailer,
    modulo 4 GiB), at least its own size: an estimate for the free-space check only."""
    size = archive.stat().st_size
    try:
        if fmt == "zip":
            with zipfile.ZipFile(archive) as zf:
                return max(size, sum(info.file_size for info in zf.infolist()))
        if fmt in ("gz", "tar.gz"):
            with open(archive, "rb") as f:
                f.seek(-4, os.SEEK_END)
                return max(size, int(struct.unpack("<I", f.read(4))[0]))
    except (*_CORRUPT, OSError, struct.error):
        pass  # extracting it reports the problem
    return size


def _limits(directory: Path) -> tuple[int, int]:
    """The longest file name and path (bytes) the file system of `directory` takes."""
    try:
        return os.pathconf(directory, "PC_NAME_MAX"), os.pathconf(directory, "PC_PATH_MAX")
    except (OSError, ValueError):
        return _NAME_MAX, _PATH_MAX


def _check_name_length(member: str, archive: Path, work: Path) -> None:
    """SourceFormatError when a member's path, or one of its names, is longer than the file
    system takes (instead of a raw OSError halfway through)."""
    name_max, path_max = _limits(work)
    names = member.replace("\\", "/").split("/")
    longest = max(names, key=lambda n: len(os.fsencode(n)))
    full = len(os.fsencode(str(work))) + 1 + len(os.fsencode(member))
    if len(os.fsencode(longest)) > name_max or full > path_max:
        shown = member if len(member) <= 80 else f"{member[:60]}...{member[-15:]}"
        raise SourceFormatError(
            f"refusing to extract {archive}: member {shown!r} has a name of "
            f"{len(os.fsencode(longest))} bytes (or a path of {full}); the file system takes "
            f"names of at most {name_max} bytes and paths of {path_max}"
        )


def _extract_tar(archive: Path, fmt: str, work: Path, target: Path, budget: _Budget) -> None:
    # Stream mode ("r|"): one pass over the archive, each member checked before it is
    # written, every byte of the (decompressed) tar stream counted. The data filter stays
    # behind our checks and also catches what depends on links already on disk.
    compression = fmt.partition(".")[2]
    with contextlib.ExitStack() as stack:
        raw: io.BufferedIOBase = (
            stack.enter_context(_open_compressed(compression, archive))
            if compression
            else stack.enter_context(open(archive, "rb"))
        )
        stream = io.BufferedReader(_CountingReader(raw, budget), CHUNK_SIZE)
        tar = stack.enter_context(tarfile.open(fileobj=stream, mode="r|"))
        members = _checked_members(tar, archive, target, work, budget)
        try:
            tar.extractall(work, members=members, filter="data")
        except tarfile.FilterError as error:
            raise SourceFormatError(f"refusing to extract {archive}: {error}") from None


def _checked_members(
    tar: tarfile.TarFile, archive: Path, target: Path, work: Path, budget: _Budget
) -> Iterator[Any]:
    declared = 0
    for member in tar:
        _check_path(member.name, archive, target)
        _check_name_length(member.name, archive, work)
        refuse = f"refusing to extract {archive}: member {member.name!r}"
        declared += member.size
        if declared > budget.limit:  # said up front; the stream is counted all the same
            budget.take(declared - budget.used, member.name)
        if member.issparse():
            raise SourceFormatError(f"{refuse} is a sparse file (not supported)")
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


def _extract_zip(archive: Path, work: Path, target: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        for info in infos:
            _check_path(info.filename, archive, target)
            _check_name_length(info.filename, archive, work)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise SourceFormatError(
                    f"refusing to extract {archive}: member {info.filename!r} is a symlink "
                    "(not supported in zip archives)"
                )
        declared = sum(info.file_size for info in infos)
        if declared > budget.limit:  # said up front; the bytes are counted all the same
            budget.take(declared, infos[-1].filename)
        for info in infos:
            # Our own copy loop (not extractall): it counts the bytes as they come out.
            path = work.joinpath(*[p for p in info.filename.split("/") if p not in ("", ".")])
            if info.is_dir():
                path.mkdir(parents=True, exist_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as source, open(path, "wb") as sink:
                _copy(source, sink, budget, info.filename)


def _decompress(archive: Path, fmt: str, out: Path, budget: _Budget) -> None:
    with _open_compressed(fmt, archive) as source, open(out, "wb") as sink:
        _copy(source, sink, budget, out.name)


def _copy(source: Any, sink: Any, budget: _Budget, member: str) -> None:
    while chunk := source.read(CHUNK_SIZE):
        budget.take(len(chunk), member)
        sink.write(chunk)


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
