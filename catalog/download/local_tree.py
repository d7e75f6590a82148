"""A local folder as one download: its size and sha256 are those of a manifest of its files.

`catalog prepare PATH` and builder folders that read a folder of their own (a download with
``path:`` instead of ``url:``, see `catalog.spec.load`) check a whole folder the way a file is
checked: the manifest lists every regular file under it (hidden ones, whose path has a part
starting with ``.``, excepted, as the readers leave them out), one line
``<path relative to the folder><TAB><size><TAB><sha256>`` each, sorted by path; the folder's
``sha256`` is the manifest's, its ``size`` the total bytes of its files. So any changed,
added, removed or renamed file changes the digest, and the same files anywhere give the same
one. At the folder's top, a builder's own ``builder.yaml`` and ``checksums.tsv`` do not count,
so a data folder can be its own builder folder (its checksums are written into it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from catalog._util.hashing import Digest, NotAFileError, Stamp, file_stamp, regular_file
from catalog.download.resource import Failure
from catalog.storage.tree_walk import files_under

__all__ = [
    "BUILDER_FILES",
    "HashingReader",
    "file_digest",
    "tree_digest",
    "tree_entries",
    "tree_files",
]

#: Digests of files hashed in this process, by path and stamp (see `file_digest`).
_SEEN: dict[tuple[str, Stamp], tuple[int, str]] = {}
_MAX_SEEN = 200_000

#: Files a builder folder holds beside its data (`catalog.spec.model`'s SPEC_FILE and
#: CHECKSUMS_FILE; named here because the download stage sits below the spec stage).
BUILDER_FILES = frozenset({"builder.yaml", "checksums.tsv"})


def tree_files(root: Path) -> Iterator[tuple[str, Path]]:
    """``(relative posix path, file)`` of every file the digest counts, in sorted path order."""
    found = []
    for file in files_under(root):
        relative = file.relative_to(root).as_posix()
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        if relative in BUILDER_FILES:
            continue
        found.append((relative, file))
    yield from sorted(found)


def file_digest(path: Path) -> Digest:
    """The size and sha256 of a file (``head`` empty; ``stamp`` the file's `file_stamp` when
    it was hashed). A file this process hashed before and whose stamp (device, inode, size,
    mtime, ctime) is unchanged is not read again: `catalog prepare PATH` measures its files
    when it makes the spec and checks them when it prepares, and a file changed in between
    changes its ctime, which cannot be set back. A file that changes while it is read, that
    cannot be read, or that is no regular file (a FIFO, a device: refused before it is
    opened) is a `Failure`."""
    try:
        key = (str(path), file_stamp(regular_file(path)))
        if key in _SEEN:
            known = Digest.known(*_SEEN[key])
            known.stamp = key[1]
            return known
        digest = Digest.of_file(path)
    except PermissionError:
        raise Failure("cannot be read (permission denied); make it readable") from None
    except NotAFileError as error:
        raise Failure(f"{error.strerror}; put the file itself at this path") from None
    except OSError as error:
        raise Failure(str(error.strerror or error)) from None
    if digest.stamp != key[1]:
        raise Failure("the file changed while it was read; try again once it is complete")
    if len(_SEEN) >= _MAX_SEEN:
        _SEEN.clear()
    _SEEN[key] = (digest.size, digest.sha256)
    digest.head = b""
    return digest


class HashingReader:
    """A file opened for reading whole, hashed as it is read: once a reader (the CSV type
    scan, say) has read it to its end unchanged (the same `file_stamp` when opened, at the end
    and by its path), its digest is what `file_digest` gives for it afterwards, without
    reading it again. A file read only in part, or changed while it was read, is hashed again
    when asked. ``read`` and ``close`` as a binary file's."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._file = open(path, "rb")  # noqa: SIM115 (closed by close())
        self._digest: Digest | None = Digest()
        self._stamp = file_stamp(os.fstat(self._file.fileno()))

    def read(self, size: int = -1) -> bytes:
        data = self._file.read(size)
        if self._digest is not None:
            if data:
                self._digest.update(data)
            elif size != 0:  # the end
                self._finish(self._digest)
        return data

    def _finish(self, digest: Digest) -> None:
        self._digest = None
        try:
            now = file_stamp(os.fstat(self._file.fileno()))
            known = file_stamp(regular_file(self._path))
        except OSError:
            return
        if now == self._stamp == known and digest.size == now[2]:
            if len(_SEEN) >= _MAX_SEEN:
                _SEEN.clear()
            _SEEN[(str(self._path.resolve()), now)] = (digest.size, digest.sha256)

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()


def tree_digest(root: Path) -> Digest:
    """The digest of the folder `root`: ``size`` is its files' total, ``sha256`` the
    manifest's (see the module docstring); ``head`` is empty (a folder is no HTML page)."""
    return _manifest(root, None)


def tree_entries(root: Path) -> tuple[Digest, list[tuple[str, int, str, Stamp | None]]]:
    """`tree_digest` of `root`, and ``(path, size, sha256, stamp when hashed)`` of each file
    its manifest lists."""
    entries: list[tuple[str, int, str, Stamp | None]] = []
    return _manifest(root, entries), entries


def _manifest(root: Path, entries: list[tuple[str, int, str, Stamp | None]] | None) -> Digest:
    manifest = Digest()
    total = 0
    for relative, file in tree_files(root):
        digest = file_digest(file)
        total += digest.size
        manifest.update(f"{relative}\t{digest.size}\t{digest.sha256}\n".encode())
        if entries is not None:
            entries.append((str(file), digest.size, digest.sha256, digest.stamp))
    manifest.size = total
    manifest.head = b""
    return manifest
