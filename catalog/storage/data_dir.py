"""The data-dir seam: one protocol for every place prepared datasets live, one table choosing
its implementation by URL scheme (as fsspec's registry maps protocols to classes).

A `Store` is a data dir. Its verbs are all that the rest of catalog asks of one:

==============================  ==========================================================
``prepared()``                  every dataset published there (`Prepared`)
``found(name)``                 the ``[<config>/]<version>`` folders prepared under a name
``target(name, version_dir)``   where ``<name>[/<config>]/<version_dir>`` lives (or will)
``open(target)``                the generation a target names, pinned, with its info
                                (`Opened`; None when nothing is prepared there)
``shard_sizes(opened)``         the sizes of the files in the generation
``usage(opened)``               the bytes it takes
``source_options(...)``         how data sources read its shards (a local cache for a bucket)
``shards(folder, info, ...)``   the shard opener of a generation (`Shards`): what the record
                                layer opens shard i through, resolved once per data source
``shard_files(opened)``         each shard as a local file, one at a time (`verify`)
``leftovers(target)``           what interrupted prepares left there
``lock(target)``                the preparers' lock
``publisher(target, scratch)``  begin / publish / discard a generation (`Publisher`)
``check_writable(target)``      StorageError unless a prepare can write there
``remove(target, dry_run)``     remove the dataset (`Removal`)
==============================  ==========================================================

`SCHEMES` (`catalog.storage.schemes`) maps a URL scheme to the module and class implementing it
(a local path has the scheme ``""``) and to all else that differs between schemes; a new
backend (another object store, a non-fsspec client) is one module with one class, and one
entry there. `data_dir_store` resolves the data dir (argument > environment
> platformdirs, `catalog.storage.paths`) and makes its store; a data dir that is a file, or a
URL of a scheme no backend reads, is one StorageError there, for every command.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from catalog._util.hashing import Stamp
from catalog.errors import StorageError
from catalog.info.dataset_info import DatasetInfo, ShardInfo
from catalog.storage.environment import DATA_DIR_ENV
from catalog.storage.remote import RemoteDir, remote_dir, url_scheme
from catalog.storage.schemes import SCHEMES

if TYPE_CHECKING:
    from catalog.storage.generations import Pin
    from catalog.storage.remote_reads import RemoteObject

__all__ = [
    "SCHEMES",
    "DataDir",
    "DataDirLike",
    "Leftover",
    "Location",
    "Opened",
    "Prepared",
    "Publisher",
    "Removal",
    "ShardSink",
    "Shards",
    "Store",
    "data_dir_store",
    "store_for",
]

#: Where a dataset or data dir is: a local path, or a bucket's (`catalog.storage.remote`).
Location = Path | RemoteDir
#: What a data dir may be given as: a path, a URL, or a location.
DataDirLike = str | os.PathLike[str] | Location

#: How a bucket's shards are read: whole into the local shard cache, or by byte ranges.
RemoteRead = Literal["cache", "range"]
REMOTE_READS: tuple[str, ...] = ("cache", "range")
#: Opens a local shard file (the record format's reader; handed in by `catalog.read`).
OpenFile = Callable[[str], Any]
#: Opens a reader of a remote object's records by byte ranges, given its record count.
OpenRanges = Callable[["RemoteObject", int], Any]


@dataclass(frozen=True)
class Prepared:
    """A dataset published in a data dir: ``name[/config]``, version folder, where it is,
    and its dataset_info.json as JSON."""

    name: str
    version: str
    path: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Opened:
    """The generation a target names, resolved once: `folder` is read (a local directory held
    by `pin` while this lives, or a bucket's immutable generation), `info` is its own."""

    folder: Location
    info: DatasetInfo
    pin: Pin | None = None


@dataclass(frozen=True)
class Leftover:
    """What an interrupted prepare left: where, how many finished shards, their bytes."""

    path: str
    shards: int = 0
    size: int = 0


@dataclass
class Removal:
    """What `Store.remove` found and did: `found` False when nothing was there; `what` names
    the prepared copy removed (or empty), `leftovers` the work of interrupted prepares, `size`
    their bytes, `held` the generations a running reader keeps (removed later)."""

    found: bool
    what: str = ""
    leftovers: list[str] = field(default_factory=list)
    size: int = 0
    freed: int = 0
    held: list[str] = field(default_factory=list)


class ShardSink(Protocol):
    """Where the finished shards of one prepare go, whatever the data dir: the work dir that
    becomes the generation (`local_store.LocalSink`), or a bucket's generation they are
    uploaded into one by one (`bucket_store.BucketSink`). Picklable: it travels with each work
    unit to worker processes and Beam workers, which write through it.

    `put` stores a finished shard (written in local scratch space; `stamp` is the
    `catalog._util.hashing.file_stamp` of that file when its sha256 was taken, or None);
    `finished` is the shard stored whole under `file`, given the prepare's own record of it
    (None: no record; a bucket answers from the stored object, so a worker on another machine
    needs none); `stored` is `finished` of many files at once (one listing of a bucket);
    `check` finds what is wrong with a stored shard before it is published (None when the store
    checks on publish); `scratch_bytes` is the local space the shards of a plan need at once,
    given their sizes
    and how many are written at a time."""

    def put(self, written: Path, shard: ShardInfo, stamp: Stamp | None = None) -> None: ...
    def finished(self, file: str, record: ShardInfo | None) -> ShardInfo | None: ...
    def stored(self, records: Mapping[str, ShardInfo | None]) -> dict[str, ShardInfo]: ...
    def check(self, shard: ShardInfo) -> str | None: ...
    def scratch_bytes(self, sizes: list[int], at_once: int) -> int: ...


class Publisher(Protocol):
    """Where one prepare publishes (`catalog.prepare.driver` and the TFDS importer run the
    same steps for every data dir, through `catalog.storage.publishing.publishing`): units
    write into the local work dir and through the `ShardSink` that `begin` gives; `publish`
    makes what the sink holds the dataset's generation."""

    target: Location
    local: Path

    def leftovers(self) -> bool: ...
    def check(self) -> None: ...
    def lock(self) -> AbstractContextManager[bool]: ...
    def resumable_plans(self) -> list[tuple[str, int]]: ...
    def begin(self, key: str, shard_bytes: int, fresh: bool, work: Path) -> ShardSink: ...
    def publish(self, work: Path, key: str, sink: ShardSink, info: DatasetInfo) -> None: ...
    def discard(self, key: str, sink: ShardSink | None) -> None: ...


class Shards(Protocol):
    """How the record layer (`catalog.read.records`) opens the shards of one generation:
    made once per data source by `Store.shards`, pickled along to worker processes.

    `folder` is the generation read (a local one held while this lives), `paths` name each
    shard in errors (flat over the splits, in dataset_info.json's order); `open(i)` gives a
    reader of shard i, `local_path(i)` a local file a memory map may read (None when there is
    none: reading by byte ranges), `ranged` says the readers read batches by byte ranges
    (``read_many``). `check` finds every shard with the size it was written with; `stamp`
    says which dataset_info.json is there now (None where a generation cannot change under a
    reader); `close` lets go of what this process holds (cached copies)."""

    folder: Location
    paths: list[str]
    ranged: bool

    def check(self) -> None: ...
    def open(self, shard: int) -> Any: ...
    def local_path(self, shard: int) -> str | None: ...
    def stamp(self) -> object | None: ...
    def close(self) -> None: ...


class Store(Protocol):
    """A data dir (see the module docstring)."""

    root: Location
    read_only: bool

    def target(self, name: str, version_dir: str) -> Location: ...
    def prepared(self) -> list[Prepared]: ...
    def found(self, name: str) -> list[str]: ...
    def unnamed(self, name: str) -> list[str]: ...
    def open(self, target: Location) -> Opened | None: ...
    def shard_sizes(self, opened: Opened) -> dict[str, int]: ...
    def usage(self, opened: Opened) -> int: ...
    def source_options(
        self, remote_read: str, cache_dir: Any, cache_size: Any
    ) -> Mapping[str, Any]: ...
    def shards(
        self,
        folder: Location,
        info: DatasetInfo,
        open_file: OpenFile,
        open_ranges: OpenRanges,
        remote_read: RemoteRead = "cache",
        cache: Any = None,
    ) -> Shards: ...
    def shard_files(self, opened: Opened) -> Iterator[tuple[ShardInfo, Path | None]]: ...
    def leftovers(self, target: Location) -> list[Leftover]: ...
    def lock(self, target: Location) -> AbstractContextManager[Any]: ...
    def publisher(self, target: Location, scratch: Path | None) -> Publisher: ...
    def check_writable(self, target: Location) -> None: ...
    def remove(self, target: Location, dry_run: bool = False) -> Removal: ...


#: A data dir as an entry point takes it: as the user named it, or as the store the resolver
#: made of it already (`catalog.api.resolve.resolve_data_dir`).
DataDir = DataDirLike | Store


def scheme_of(location: str | os.PathLike[str] | RemoteDir) -> str:
    """``s3`` for ``s3://b/p``, ``""`` for a local path."""
    return url_scheme(os.fspath(location))


def _store_class(scheme: str, where: str) -> type:
    entry = SCHEMES.get(scheme)
    if entry is None:
        known = ", ".join(sorted(f"{s}://" for s in SCHEMES if s and s != "file"))
        raise StorageError(
            f"{where}: catalog has no data dirs of scheme {scheme}:// (it reads local paths and "
            f"{known}); use one of those (--data-dir or ${DATA_DIR_ENV})"
        )
    module, _, name = entry.store.partition(":")
    found: type = getattr(importlib.import_module(module), name)
    return found


def data_dir_store(explicit: DataDir | None = None) -> Store:
    """The store of the data dir: `explicit`, else $CATALOG_DATA_DIR, else the platform's user
    data dir; StorageError for a data dir that is a file or of an unknown scheme. A store
    given (one the resolver made) is the answer itself: it is never made twice."""
    if explicit is not None and not isinstance(explicit, (str, os.PathLike, RemoteDir)):
        return explicit
    given: Any = explicit if explicit is not None else os.environ.get(DATA_DIR_ENV) or None
    if isinstance(given, RemoteDir):
        given = given.url
    if given is None:
        from catalog.storage.paths import data_dir

        given = data_dir()
    scheme = scheme_of(given)
    store: Store = _store_class(scheme, os.fspath(given))(given)
    return store


def location(text: str | os.PathLike[str] | RemoteDir) -> Location:
    """`text` as a location: a `RemoteDir` for a URL, else a local path."""
    if isinstance(text, RemoteDir):
        return text
    path = os.fspath(text)
    scheme = scheme_of(path)
    if scheme == "file":
        return Path(path[len("file://") :])
    return remote_dir(path) if scheme else Path(path)


def store_for(location: Location) -> Store:
    """The store holding `location` (``<data dir>/<name>[/<config>]/<version>``)."""
    text = location.url if isinstance(location, RemoteDir) else os.fspath(location)
    parent = text.rsplit("/", 1)[0] if scheme_of(text) else os.fspath(Path(text).parent)
    store: Store = _store_class(scheme_of(text), text)(parent, check=False)
    return store


def parts_of(relative: str) -> Iterator[str]:
    """The non-empty parts of a ``/``-separated relative path."""
    return (p for p in relative.split("/") if p)
