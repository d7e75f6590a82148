"""Files inside a builder folder: its ClassLabel ``names_file`` s, and downloads that are
local files (a builder folder's own data, or the files `catalog prepare PATH` was given).

A builder.yaml download may give ``path:`` instead of ``url:``: a file or a folder *inside the
builder folder* (``path: .`` is the builder folder itself, ``path: data/train.csv`` a file in
it), so a folder holding its data and its spec is a builder folder one can move, copy and
commit. Like any download it is checked against its size and sha256 in checksums.tsv (the
line's first column is the path as builder.yaml gives it); a folder's are those of its
manifest (`catalog.download.local_tree`). A spec still never names a file outside its own
folder: absolute paths, ``..`` and symlinks leading out are refused, as ``file://`` URLs are.
"""

from __future__ import annotations

import posixpath
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from catalog._util.units import format_size
from catalog.download.local_tree import file_digest, tree_digest
from catalog.download.resource import Failure
from catalog.errors import FeatureError, SpecError
from catalog.features.class_label import MAX_NAMES_FILE_SIZE
from catalog.spec.model import DownloadSpec

__all__ = [
    "checksum_key",
    "inside",
    "local_download",
    "measured_download",
    "resolve_names_files",
]


def inside(text: str, folder: Path) -> Path:
    """The real path of `text`, a relative path inside `folder` (symlinks resolved);
    ValueError saying why it is not one."""
    normal = posixpath.normpath(text.replace("\\", "/")) if text else ""
    if not text or Path(text).is_absolute() or normal == ".." or normal.startswith("../"):
        raise ValueError(f"expected a path relative to the builder folder {folder}, inside it")
    path = folder / text
    try:
        real, root = path.resolve(strict=True), folder.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "a symlink loop"
        raise ValueError(f"cannot read {path} ({reason})") from None
    if not real.is_relative_to(root):
        raise ValueError(f"{path} leads outside the builder folder {folder} (to {real})")
    return real


def local_download(
    name: str, text: str, folder: Path, checksums: Mapping[str, tuple[int, str, str]]
) -> DownloadSpec:
    """The download `name` of a builder folder giving ``path: <text>``; ValueError saying
    what is wrong with the path."""
    real = inside(text, folder)
    if not (real.is_file() or real.is_dir()):
        raise ValueError(f"{folder / text} is neither a file nor a folder")
    size, sha256, _ = checksums.get(text, (None, None, ""))
    return DownloadSpec(name, real.as_uri(), (), size, sha256, _filename(real))


def checksum_key(download: DownloadSpec, folder: Path | None) -> str:
    """The first column of a download's checksums.tsv line: its URL, or for a local file
    inside the builder folder `folder`, its path there as builder.yaml gives it."""
    parts = urlsplit(download.url)
    if parts.scheme != "file" or folder is None:
        return download.url
    path, root = Path(url2pathname(parts.path)), folder.resolve()
    if not path.is_relative_to(root):
        return download.url
    return path.relative_to(root).as_posix() or "."


def measured_download(name: str, path: Path) -> DownloadSpec:
    """A download of the local file or folder `path`, its size and sha256 measured now (what
    an inferred spec records, so that a changed source is noticed)."""
    real = path.resolve()
    try:
        digest = tree_digest(real) if real.is_dir() else file_digest(real)
    except Failure as failure:
        raise SpecError(f"{real}: {failure.reason}") from None
    return DownloadSpec(
        name,
        real.as_uri(),
        (),
        digest.size,
        digest.sha256,
        _filename(real),
    )


def _filename(path: Path) -> str:
    return path.name or "root"  # a folder at the root of the file system


def resolve_names_files(features: Any, folder: Path) -> Any:
    """The features' YAML with every ``names_file`` made a path inside the builder folder,
    checked by :func:`_names_file`."""
    if isinstance(features, Mapping):
        return {
            key: _names_file(value, folder)
            if key == "names_file" and isinstance(value, str)
            else resolve_names_files(value, folder)
            for key, value in features.items()
        }
    return features


def _names_file(name: str, folder: Path) -> str:
    """The path of a ClassLabel ``names_file``: a relative path to a regular file inside the
    builder folder (symlinks resolved), of at most MAX_NAMES_FILE_SIZE bytes; FeatureError
    otherwise."""
    where = f"ClassLabel names_file {name!r}"
    try:
        real = inside(name, folder)
        info = real.stat()
    except ValueError as error:
        raise FeatureError(f"{where}: {error}") from None
    except OSError as error:
        raise FeatureError(f"{where}: cannot read {folder / name} ({error.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise FeatureError(f"{where}: {folder / name} is not a regular file")
    if info.st_size > MAX_NAMES_FILE_SIZE:
        raise FeatureError(
            f"{where}: {folder / name} holds {format_size(info.st_size)}, more than the "
            f"{format_size(MAX_NAMES_FILE_SIZE)} a names file may"
        )
    return str(real)
