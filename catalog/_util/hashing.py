"""Size and sha256 of streams and files, computed in one pass over fixed-size chunks.

>>> d = Digest()
>>> d.update(b"abc")
>>> d.size, d.sha256[:16]
(3, 'ba7816bf8f01cfea')
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

__all__ = [
    "CHUNK_SIZE",
    "SHA256_HEX",
    "Digest",
    "NotAFileError",
    "Stamp",
    "file_stamp",
    "md5_file",
    "regular_file",
    "sha256_file",
]

CHUNK_SIZE = 1 << 20
#: A sha256 as checksums.tsv and the download records write it.
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


#: What says a file is unchanged since it was hashed (`file_stamp`).
Stamp = tuple[int, int, int, int, int]

_SPECIAL = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotAFileError(OSError):
    """A path where a regular file belongs is a directory, FIFO, device or socket: refused
    before it is opened (a FIFO would block `open`, a device read forever). ``strerror``
    says what it is without the path."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a regular file")
        self.strerror = f"is {kind}, not a regular file"
        self.filename = path

    def __str__(self) -> str:
        return str(self.args[0])


def file_stamp(st: os.stat_result) -> Stamp:
    """Device, inode, size, mtime and ctime (ns) of a file: equal stamps say it was not
    written in between. The ctime changes on every write and cannot be set back, so a file
    replaced with its old size and mtime restored (``cp -p``, ``rsync -a``) has another one."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def regular_file(path: str | os.PathLike[str]) -> os.stat_result:
    """The stat of `path` (symlinks followed), or NotAFileError when it is not a regular
    file; a missing or unreadable path raises the usual OSError."""
    st = Path(path).stat()
    for test, kind in _SPECIAL:
        if test(st.st_mode):
            raise NotAFileError(os.fspath(path), kind)
    return st


class Digest:
    """Running size, sha256 and first bytes (``head``, to recognise an HTML page) of a stream."""

    HEAD_SIZE = 512

    def __init__(self) -> None:
        self._hasher = hashlib.sha256()
        self._known: str | None = None
        self.size = 0
        self.head = b""
        #: `file_stamp` of the file `of_file` hashed, None when it was written while it was
        #: read (or the bytes came from elsewhere).
        self.stamp: Stamp | None = None

    def update(self, chunk: bytes) -> None:
        self._hasher.update(chunk)
        self.size += len(chunk)
        if len(self.head) < self.HEAD_SIZE:
            self.head += chunk[: self.HEAD_SIZE - len(self.head)]

    @property
    def sha256(self) -> str:
        """Lowercase hex sha256 of everything so far."""
        return self._known if self._known is not None else self._hasher.hexdigest()

    @classmethod
    def known(cls, size: int, sha256: str) -> Digest:
        """A finished digest of bytes hashed before, whose size and sha256 are known."""
        digest = cls()
        digest.size, digest._known = size, sha256
        return digest

    @classmethod
    def of_file(cls, path: str | os.PathLike[str]) -> Digest:
        """The digest of a whole file, refused (`NotAFileError`) before it is opened when it
        is no regular file; ``stamp`` says which version of the file was read."""
        before = regular_file(path)
        digest = cls()
        with open(path, "rb") as f:
            opened = file_stamp(os.fstat(f.fileno()))
            while chunk := f.read(CHUNK_SIZE):
                digest.update(chunk)
            after = file_stamp(os.fstat(f.fileno()))
        if opened == after == file_stamp(before):
            digest.stamp = opened
        return digest


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Lowercase hex sha256 of a file."""
    return Digest.of_file(path).sha256


def md5_file(path: str | os.PathLike[str]) -> str:
    """Lowercase hex md5 of a file (what some Croissant files record instead of a sha256)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, lambda: hashlib.md5(usedforsecurity=False)).hexdigest()
