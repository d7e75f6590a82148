"""The files under a root that is a directory or an archive, read one at a time, as a stream.

`walk(root)` yields a `Member` per regular file: its path relative to the root (``/``
separated) and a way to read its bytes. A root may be

- a directory (an extracted archive): files in sorted path order, read from disk;
- a zip file: members in sorted name order, each decompressed when read;
- a tar file, plain or gz/bz2/xz compressed: members in archive order, read as one stream
  (nothing is extracted to disk; only the current member is in memory).

- a member of a zip download that is itself a zip or a tar (`catalog.formats.base.SourceFile`):
  read in place, nothing extracted.

So an archive inside an archive (``caltech-101.zip`` holding ``101_ObjectCategories.tar.gz``)
is read without extracting either, and an image zip is read without extracting it.
As the reference catalog does when it iterates an archive, member paths are normalised
(``./a/b`` is ``a/b``) and members whose path or base name starts with ``.`` (macOS ``._x``
files), ends with ``~`` or is absolute are left out; so are directories, links and devices.
"""

from __future__ import annotations

import functools
import posixpath
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from catalog.download.extract import archive_format
from catalog.errors import SourceFormatError
from catalog.formats.base import SourceFile
from catalog.storage.tree_walk import files_under

__all__ = ["Member", "kept_path", "paths", "walk"]


@dataclass(frozen=True)
class Member:
    """One file under a root: its relative path, `read()` giving its bytes, and for a root
    that is a directory, the file itself."""

    path: str
    read: Callable[[], bytes]
    file: Path | None = None

    @property
    def name(self) -> str:
        """The base name: ``0.jpg`` for ``PetImages/Dog/0.jpg``."""
        return posixpath.basename(self.path)


def kept_path(name: str) -> str | None:
    """The normalised member path, or None if the reference catalog would leave it out."""
    if name.startswith("/") or name.endswith("~"):
        return None
    path = posixpath.normpath(name)
    if path.startswith(".") or posixpath.basename(path).startswith("."):
        return None
    return path


def _format(root: SourceFile) -> str | None:
    """ "zip", "tar" (plain or compressed) or None, from the file's content."""
    if isinstance(root, Path):
        fmt = archive_format(root) if root.is_file() else None
        return "tar" if fmt is not None and fmt.startswith("tar") else fmt
    with root.open("rb") as f:  # a member of a zip, read in place
        head = f.read(4)
    return "zip" if head.startswith(b"PK") else "tar"  # tarfile reports what is neither


def walk(root: SourceFile) -> Iterator[Member]:
    """Every regular file under `root`, one at a time: a directory, a zip or a tar file, or
    an archive that is a member of a zip (read in place)."""
    if root.is_dir():
        if not isinstance(root, Path):
            raise SourceFormatError(f"{root}: a directory inside a zip; extract it instead")
        yield from _walk_dir(root)
        return
    fmt = _format(root)
    if fmt == "zip":
        yield from _walk_zip(root)
    elif fmt == "tar":
        yield from _walk_tar(root)
    else:
        raise SourceFormatError(
            f"{root}: expected a directory, a zip or a tar archive (plain or compressed)"
        )


def _walk_dir(root: Path) -> Iterator[Member]:
    # Sorted by path components: a directory's files, then the next directory's.
    files = sorted(files_under(root), key=lambda p: p.parts)
    for file in files:
        path = kept_path(file.relative_to(root).as_posix())
        if path is not None:
            yield Member(path, file.read_bytes, file)


def _walk_zip(root: SourceFile) -> Iterator[Member]:
    try:
        with zipfile.ZipFile(root if isinstance(root, Path) else root.open("rb")) as zf:
            infos = sorted((i for i in zf.infolist() if not i.is_dir()), key=lambda i: i.filename)
            for info in infos:
                path = kept_path(info.filename)
                if path is not None:
                    yield Member(path, functools.partial(_read_zip, zf, info, root))
    except zipfile.BadZipFile as error:
        raise SourceFormatError(f"{root}: a damaged zip file ({error})") from None


def _read_zip(zf: zipfile.ZipFile, info: zipfile.ZipInfo, root: SourceFile) -> bytes:
    try:
        return zf.read(info)
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as error:
        raise SourceFormatError(f"{root}: member {info.filename} is damaged ({error})") from None


def paths(root: SourceFile) -> Iterator[str]:
    """The paths `walk` yields, in the same order, without reading the files' contents."""
    if root.is_dir() or _format(root) == "zip":
        yield from (member.path for member in walk(root))
        return
    yield from (member.path for member in _walk_tar(root, read=False))


def _walk_tar(root: SourceFile, *, read: bool = True) -> Iterator[Member]:
    try:
        with root.open("rb") as stream, tarfile.open(fileobj=stream, mode="r|*") as tar:
            for info in tar:
                path = kept_path(info.name) if info.isfile() else None
                if path is None:
                    continue
                if not read:
                    yield Member(path, bytes)
                    continue
                data = tar.extractfile(info)
                assert data is not None  # a regular file
                content = data.read()  # the stream moves on with the next member
                yield Member(path, lambda content=content: content)  # type: ignore[misc]
    except (tarfile.TarError, EOFError, OSError) as error:
        raise SourceFormatError(f"{root}: a damaged tar file ({error})") from None
