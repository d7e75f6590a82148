"""What catalog read is what it hashed: the source files of a prepare, checked after reading.

Every file a prepare reads was hashed when it was fetched or found (a download in the cache, a
manual file, the user's own file or folder), and `CachedFile.stamp` says which version of the
file that was (device, inode, size, mtime, ctime: `catalog._util.hashing.file_stamp`). A
reader may read it again much later (each unit of a shard plan opens it anew), so a file
rewritten in between would give shards of two different files under one recorded sha256.
`watch` lists the files of the downloads (each file of a folder too) with the stamp and
sha256 they were hashed with; `check_unchanged` compares each file's stamp now (a stat), and
hashes a file again only when its stamp differs: the same bytes (a ``touch``) pass, other
bytes are a `ChecksumError` naming the file. A unit checks the files of its split when it has
written its shard, before the shard counts as finished; the driver checks every file before
it publishes. The ctime changes on every write and cannot be set back, so a file replaced with
its old size and mtime restored (``cp -p``, ``rsync -a``) is hashed again, not trusted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from catalog._util.hashing import Digest, Stamp, file_stamp
from catalog.download.cache import CachedFile
from catalog.download.local_tree import tree_entries
from catalog.download.resource import Failure
from catalog.errors import ChecksumError

__all__ = ["Watched", "changes", "check_unchanged", "watch"]


@dataclass(frozen=True)
class Watched:
    """A file a prepare reads, as it was when hashed (picklable: sent to worker processes)."""

    path: str
    size: int
    sha256: str
    #: Its stamp when it was hashed; None: unknown, so it is hashed again when checked.
    stamp: Stamp | None
    #: A file of a folder download (checked before publishing, not after every unit).
    in_folder: bool = False


def watch(files: Mapping[str, CachedFile]) -> dict[str, tuple[Watched, ...]]:
    """The files each download (by name) reads, with the stamp and sha256 they were hashed
    with; a folder's files as its manifest lists them now (each file hashed in this process
    and unchanged is not read again), ChecksumError when that manifest is not the one the
    folder was checked by."""
    out: dict[str, tuple[Watched, ...]] = {}
    for name, file in files.items():
        if not file.path.is_dir():
            out[name] = (Watched(str(file.path), file.size, file.sha256, file.stamp),)
            continue
        try:
            manifest, entries = tree_entries(file.path)
        except (Failure, OSError) as error:
            raise ChecksumError(f"{file.path}: cannot be read again: {error}") from None
        if manifest.sha256 != file.sha256:
            raise ChecksumError(
                f"{file.path}: a file of this folder changed since the folder was checked; "
                "prepare again once its files no longer change"
            )
        out[name] = tuple(
            Watched(path, size, sha256, stamp, in_folder=True)
            for path, size, sha256, stamp in entries
        )
    return out


def changes(watched: Iterable[Watched]) -> list[str]:
    """What changed among `watched` since each was hashed, one line per file: a stat each,
    and a hash of any file whose stamp differs (its bytes may still be the same)."""
    found = []
    for file in watched:
        try:
            now = file_stamp(Path(file.path).stat())
        except FileNotFoundError:
            found.append(f"{file.path} was removed")
            continue
        except OSError as error:
            found.append(f"{file.path} cannot be read again ({error.strerror or error})")
            continue
        if now == file.stamp:
            continue
        try:
            digest = Digest.of_file(file.path)
        except OSError as error:
            found.append(f"{file.path} cannot be read again ({error.strerror or error})")
            continue
        if (digest.size, digest.sha256) != (file.size, file.sha256):
            found.append(
                f"{file.path} has {digest.size} bytes, sha256 {digest.sha256} now; it had "
                f"{file.size} bytes, sha256 {file.sha256} when it was checked"
            )
    return found


def check_unchanged(watched: Iterable[Watched], what: str) -> None:
    """ChecksumError naming the first of `watched` that changed since it was hashed (`what`
    is read from it: "unit 3 of split 'train'")."""
    found = changes(watched)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise ChecksumError(_changed(found[0] + more, f"while {what} was read from it"))


def _changed(where: str, when: str) -> str:
    return (
        f"a source file changed {when}: {where}; what was read is not what was checked, so "
        "nothing is published: prepare again once the file no longer changes"
    )
