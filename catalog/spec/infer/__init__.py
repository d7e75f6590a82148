"""Specs inferred from local files: ``catalog prepare PATH`` with no builder.yaml.

`infer_spec(text, options)` makes the same `BuilderSpec` a builder folder gives, so the files
go through the one path every dataset takes: checked downloads (a local file's or folder's
size and sha256 are recorded when the spec is made, and checked when it is prepared, so a
source that changed in between is noticed), source-format readers, prepare runners, storage.
`catalog.spec.infer.write.write_spec` writes it out as a builder folder.

Which kind of data a path is, is decided by `KINDS`, tried in order: each `Kind` says whether
a path is its kind and makes its spec. Another kind is one more entry in that table.

==========  ================================================================================
kind        a path that is
==========  ================================================================================
folder      a folder of PNG/JPEG images or WAV files, ``<root>[/<split>]/<class>/<file>``
table       CSV, TSV, JSON Lines, JSON arrays of records or Parquet files: a file, a folder
            of them, a glob
webdataset  WebDataset ``.tar`` shards: a file, a folder of them, a glob
==========  ================================================================================
"""

from __future__ import annotations

import glob
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from catalog.errors import SpecError
from catalog.spec.infer.common import LOCAL_VERSION, InferOptions, name_from_path
from catalog.spec.infer.layout import glob_of
from catalog.spec.model import BuilderSpec

__all__ = [
    "KINDS",
    "LOCAL_VERSION",
    "InferOptions",
    "Kind",
    "glob_of",
    "infer_spec",
    "is_path",
    "kind_of",
    "name_from_path",
]


@dataclass(frozen=True)
class Kind:
    """One kind of local data: `matches(path text)` says whether a path is this kind (cheaply:
    it is asked about every path), `infer(path text, options)` makes its spec."""

    name: str
    matches: Callable[[str], bool]
    infer: Callable[[str, InferOptions], BuilderSpec]


def _suffixes(text: str) -> set[str]:
    """The suffixes of the files a path names (a file, a glob's matches, a folder's files)."""
    path = Path(text).expanduser()
    if glob.has_magic(text):
        return {p.suffix.lower() for p in path.parent.glob(path.name) if p.is_file()}
    if path.is_dir():
        return {p.suffix.lower() for p in path.iterdir() if p.is_file()}
    return {path.suffix.lower()}


def _is_folder(text: str) -> bool:
    from catalog.spec.infer.folders import media_kind

    path = Path(text).expanduser()
    return not glob.has_magic(text) and path.is_dir() and media_kind(path) is not None


def _is_table(text: str) -> bool:
    from catalog.formats.tables.compressed import COMPRESSIONS, inner_suffix
    from catalog.spec.infer.tables import SUFFIXES

    suffixes = _suffixes(text)
    if suffixes & set(SUFFIXES):
        return True
    if not suffixes & set(COMPRESSIONS):
        return False
    path = Path(text).expanduser()  # a compressed table: data.csv.gz
    if glob.has_magic(text):
        names = [p for p in path.parent.glob(path.name) if p.is_file()]
    else:
        names = [p for p in path.iterdir() if p.is_file()] if path.is_dir() else [path]
    return any(inner_suffix(p) in SUFFIXES for p in names)


def _is_webdataset(text: str) -> bool:
    return ".tar" in _suffixes(text)


def _infer_folder(text: str, options: InferOptions) -> BuilderSpec:
    from catalog.spec.infer.folders import infer_folder

    return infer_folder(text, options)


def _infer_table(text: str, options: InferOptions) -> BuilderSpec:
    from catalog.spec.infer.tables import infer_table

    return infer_table(text, options)


def _infer_shards(text: str, options: InferOptions) -> BuilderSpec:
    from catalog.spec.infer.shards import infer_shards

    return infer_shards(text, options)


#: The kinds of local data, tried in order (the first whose `matches` says yes).
#: A media folder comes first: its metadata.csv / metadata.jsonl must not make it a table.
KINDS: list[Kind] = [
    Kind("folder", _is_folder, _infer_folder),
    Kind("table", _is_table, _infer_table),
    Kind("webdataset", _is_webdataset, _infer_shards),
]


def is_path(text: str) -> bool:
    """Whether `text` names local files: an existing file or folder, or a glob matching some."""
    path = Path(text).expanduser()
    if glob.has_magic(text):
        return any(True for _ in path.parent.glob(path.name)) if path.parent.is_dir() else False
    return path.exists()


def kind_of(text: str) -> Kind:
    """The kind of local data `text` is; SpecError listing the kinds when none."""
    for kind in KINDS:
        if kind.matches(text):
            return kind
    raise SpecError(
        f"{text}: not a kind of data catalog can prepare without a builder.yaml; it prepares "
        "folders of images or WAV files (<root>[/<split>]/<class>/<file>), CSV, TSV, JSON Lines "
        "(.jsonl) and Parquet files, and WebDataset .tar shards"
    )


def infer_spec(text: str, options: InferOptions) -> BuilderSpec:
    """The builder spec of the local files `text` names (see the module docstring)."""
    if not is_path(text):
        raise SpecError(f"{text}: no such file or folder (and no glob match)")
    return kind_of(text).infer(text, options)
