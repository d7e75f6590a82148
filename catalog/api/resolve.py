"""What a user's dataset argument names, and where that dataset lives: the one resolver every
entry point calls (`catalog.data_source`, `catalog.builder`, and each CLI command).

``resolve_dataset(text, data_dir=...)`` answers with a `DatasetHandle`: what the argument is
(`Kind`) and where the dataset lives (its data dir's `Store` and its target there). Tried in
this order, the first that fits wins:

==================  ========================================================================
kind                the argument is
==================  ========================================================================
``tfds``            ``tfds:NAME[/CONFIG][:VERSION]``: a dataset TFDS's own builder makes
                    (`catalog.api.tfds`; prepared as ``tfds.NAME``, its spec stored with it;
                    parsed before anything else, so ``:`` is not taken for a version)
``croissant``       a Croissant file, a path or an http(s) URL ending in .json/.jsonld
                    (prepared by ``catalog prepare``; its spec is stored with the data)
``url``             the URL of one prepared dataset, ``<data dir URL>/<name>/<version>``
``directory``       the path of a dataset directory, catalog's or TensorFlow Datasets'
``registered``      a registered ``name[/config][:version]``
``builder_folder``  the path of a builder folder (holding builder.yaml)
``stored``          a dataset in the data dir that no builder describes, by
                    ``name[/config][:version]``: one prepared from local files or a Croissant
                    file (its spec is stored in its dataset_info.json, `catalog.spec.stored`,
                    so it is a builder like any other), or imported from a TFDS directory
``files``           local files (a folder, CSV/TSV/JSON Lines/Parquet, WebDataset shards; only
                    ``catalog prepare`` reads them: every other command finds the dataset by
                    the name it was prepared as)
==================  ========================================================================

Before all of these, ``catalog info`` asks the resolver's quick answer,
`catalog.api.declared.resolve_declared`: a registered name not prepared in a local data dir,
answered from the registry's index without loading its spec (start-up speed, no NumPy).

A path is a path: an existing file, or an existing folder with no builder.yaml, that would
also read as ``builder-folder/CONFIG`` (``DIR/data.csv`` beside a ``DIR/builder.yaml``, e.g. one
``--write-spec`` wrote) is local files (``files``), before the ``url`` and later kinds; what was
chosen is said (`resolve_dataset`'s `note`). A registered name wins over a dataset of the same
name in the data dir, and over a local folder of the same name (write ``./mnist`` for the
folder). The data dir is checked once, here: a
file, or a URL of a scheme no store reads, is one StorageError (`catalog.storage.data_dir`).
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from catalog.api.builder import DatasetBuilder, PathLike, builder_of, read_opened
from catalog.api.data_dir import resolve_data_dir
from catalog.api.versions import only_config, safe_part, versions_asked
from catalog.errors import DatasetNotFoundError, NotPreparedError
from catalog.info.dataset_info import DatasetInfo
from catalog.info.splits import SplitsArg
from catalog.interop.croissant import is_croissant
from catalog.read import options as read_options
from catalog.read.data_source import DataSource
from catalog.read.options import ReadOptions
from catalog.spec.registry import Request
from catalog.spec.registry import resolve as resolve_registered
from catalog.spec.stored import stored_origin, stored_spec
from catalog.storage.data_dir import DataDir, Location, Opened, Store, store_for
from catalog.storage.environment import DATA_DIR_ENV
from catalog.storage.remote import is_url, remote_dir

__all__ = ["DatasetHandle", "Kind", "Resolver", "builder", "plain_name", "resolve_dataset"]

Kind = Literal[
    "tfds", "croissant", "url", "directory", "registered", "builder_folder", "stored", "files"
]

#: Suffixes that make an argument a path even when nothing is there (to say so).
DATA_SUFFIXES = frozenset({".csv", ".tsv", ".jsonl", ".ndjson", ".parquet", ".tar", ".json"})
#: What starts ``tfds:NAME`` (`catalog.formats.tfds.runtime.PREFIX`, not imported: start-up).
TFDS_PREFIX = "tfds:"
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?(:[\w.*+-]+)?$")


@dataclass
class DatasetHandle:
    """A dataset as the user named it (`text`): what it is (`kind`), its data dir (`store`),
    where it lives there (`target`: ``<data dir>/<name>[/<config>]/<version>``, or the
    directory or URL given), and its builder when a spec describes it (registered, builder
    folder, and datasets prepared from files or Croissant files, by the spec stored with
    them); `builder` is None for a dataset directory, a dataset URL and a TFDS import."""

    kind: Kind
    text: str
    store: Store
    target: Location
    builder: DatasetBuilder | None = None
    _opened: Opened | None = None
    _declared: DatasetBuilder | None = None  # tfds:NAME not prepared: what TFDS declares

    @property
    def data_dir(self) -> Location:
        return self.store.root

    def open(self) -> Opened | None:
        """The generation it names, pinned, with its info; None when not prepared. Opened
        once: every verb of the handle reads that generation (a dataset found by name in a
        data dir was opened to find what it is; in a bucket each open is a pointer and an
        info read)."""
        if self._opened is None:
            b = self.builder
            self._opened = b.open() if b is not None else self.store.open(self.target)
        return self._opened

    @property
    def origin(self) -> tuple[str, str] | None:
        """(kind, path or URL) of the files or Croissant file it was prepared from."""
        opened = self.open()
        return None if opened is None else stored_origin(opened.info.source)

    @property
    def info(self) -> DatasetInfo:
        """The prepared dataset's info, else (not prepared) what its spec declares."""
        if self.builder is not None:
            return self.builder.info
        opened = self.open()
        if opened is None:
            declared = self.declared()
            if declared is not None:
                return declared.info
            raise self.not_prepared_error()
        return opened.info

    def declared(self) -> DatasetBuilder | None:
        """For ``tfds:NAME`` not prepared yet: a builder of what TFDS declares (features,
        citation, no splits), made offline, only to describe it (`catalog.api.tfds`);
        None for any other dataset."""
        if self.kind != "tfds" or self.builder is not None:
            return None
        if self._declared is not None:  # made when it was resolved
            return self._declared
        from catalog.api.tfds import tfds_declared
        from catalog.formats.tfds.runtime import parse_name

        name = parse_name(self.text)
        assert name is not None  # the kind says so
        return tfds_declared(name, data_dir=self.store)

    @property
    def label(self) -> str:
        """``name[/config] version``: how output lines name it."""
        info = self.builder.spec if self.builder is not None else self.info
        return f"{info.full_name} {info.version}"

    @property
    def full_name(self) -> str:
        return self.builder.full_name if self.builder is not None else self.info.full_name

    def not_prepared_error(
        self, asked: str | None = None, data_dir: str | None = None
    ) -> NotPreparedError:
        if self.builder is not None:
            return self.builder.not_prepared_error(asked, data_dir)
        return NotPreparedError(f"no prepared dataset at {self.target}")

    def as_data_source(
        self, split: SplitsArg | None = None, options: ReadOptions = read_options.DEFAULT
    ) -> DataSource | list[DataSource] | dict[str, DataSource]:
        """Its data sources (as `DatasetBuilder.as_data_source`), read as `options` say."""
        if self.builder is not None:
            return self.builder.read(split, options, self._opened)
        opened = self.open()
        if opened is None:
            raise self.not_prepared_error()
        return read_opened(self.store, opened, split, options)


def resolve_dataset(
    text: PathLike,
    *,
    data_dir: DataDir | None = None,
    image_max_side: int | None = None,
    files: bool = False,
    note: Callable[[str], None] | None = None,
) -> DatasetHandle:
    """What `text` names (see the module docstring). With ``files=True`` (``catalog
    prepare``), local files and Croissant files are answered as such (kinds ``files`` and
    ``croissant``, with no builder yet: their spec is made by reading them); otherwise a path
    of local files is DatasetNotFoundError saying to prepare it first. `note` is told what
    was chosen when a path also reads as ``builder-folder/CONFIG`` (default: a UserWarning)."""
    text = os.fspath(text)
    stores: list[Store] = []

    def store() -> Store:  # the data dir's store, made once, when a kind needs it
        if not stores:
            stores.append(resolve_data_dir(data_dir))
        return stores[0]

    if text.startswith(TFDS_PREFIX):  # before NAME:VERSION is split
        return _tfds(text, store(), image_max_side)
    if is_croissant(text):
        if not files:
            raise DatasetNotFoundError(
                f"{text} is a Croissant file: prepare it first ('catalog prepare {text}'), then "
                "use the dataset by the name it was prepared as"
            )
        return DatasetHandle("croissant", text, store(), Path(text))
    registry = _Registry(text)
    first, chosen = _path_first(text, registry)
    if first:
        if not files:
            store()  # an unusable data dir is the error first, as for every kind
            raise DatasetNotFoundError(
                f"{text} are local files: prepare them first ('catalog prepare {text} --name "
                f"NAME'), then use the dataset by its NAME"
                + (f"; {chosen('read')}" if chosen else "")
            )
        if chosen:
            if note is None:
                warnings.warn(chosen("prepared"), UserWarning, stacklevel=2)
            else:
                note(chosen("prepared"))
        return DatasetHandle("files", text, store(), Path(text).expanduser())
    if is_url(text):
        return _located("url", text, remote_dir(text))
    directory = _directory(text)
    if directory is not None:
        return directory
    request = registry.request()
    if request is None:
        stored = _stored(text, store(), image_max_side)
        if stored is not None:
            return stored
        if _looks_like_files(text) and (files or not Path(text).expanduser().is_dir()):
            if files:
                return DatasetHandle("files", text, store(), Path(text).expanduser())
            raise DatasetNotFoundError(
                f"{text} are local files: prepare them first ('catalog prepare {text} --name "
                "NAME'), then use the dataset by its NAME"
            ) from None
        if plain_name(text):  # say where a dataset prepared from files was looked for
            raise DatasetNotFoundError(
                f"{registry.error()} (looked among the registered datasets and those prepared "
                f"in the data dir {store().root}; one prepared elsewhere: --data-dir DIR or "
                f"${DATA_DIR_ENV})"
            ) from None
        raise registry.error()
    b = builder_of(request, store(), image_max_side)
    kind: Kind = "registered" if _is_name(text, request.folder) else "builder_folder"
    return DatasetHandle(kind, text, b.store, b.data_path, b)


class Resolver:
    """The arguments of one command, resolved in one data dir (`data_dir`, as given): its
    store is made once, by the first argument that lives in it (or by `store`, for a command
    that needs it before), and every later argument is resolved in that same store."""

    def __init__(self, data_dir: DataDir | None, image_max_side: int | None = None) -> None:
        self._given = data_dir
        self._store: Store | None = None
        self.image_max_side = image_max_side

    def store(self) -> Store:
        """The data dir's store (made now, if no argument made it yet)."""
        if self._store is None:
            self._store = resolve_data_dir(self._given)
        return self._store

    def resolve(
        self, text: PathLike, *, files: bool = False, note: Callable[[str], None] | None = None
    ) -> DatasetHandle:
        """`resolve_dataset` of `text` in this data dir."""
        data_dir = self._store if self._store is not None else self._given
        handle = resolve_dataset(
            text, data_dir=data_dir, image_max_side=self.image_max_side, files=files, note=note
        )
        if self._store is None and handle.kind not in ("url", "directory"):
            self._store = handle.store  # the data dir's (a URL's or a path's is its own)
        return handle


class _Registry:
    """What the registry answers for one argument, asked once (`spec.registry.resolve`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._answer: Request | DatasetNotFoundError | None = None

    def _ask(self) -> Request | DatasetNotFoundError:
        if self._answer is None:
            try:
                self._answer = resolve_registered(self.text)
            except DatasetNotFoundError as error:
                # kept without its traceback: its frames (the resolver's, holding the handles
                # it made and the generations they pinned) would otherwise live on in a cycle
                self._answer = error.with_traceback(None)
        return self._answer

    def request(self) -> Request | None:
        answer = self._ask()
        return None if isinstance(answer, DatasetNotFoundError) else answer

    def error(self) -> DatasetNotFoundError:
        answer = self._ask()
        assert isinstance(answer, DatasetNotFoundError)
        return answer


def builder(
    name_or_path: PathLike,
    *,
    data_dir: PathLike | None = None,
    image_max_side: int | None = None,
) -> DatasetBuilder:
    """The builder of ``name[/config][:version]``, of a builder folder path, or of a dataset
    prepared in the data dir from local files or a Croissant file (by the name it was
    prepared as: its spec is stored with it).

    ``image_max_side=N``: the copy with images at most N pixels on their longer side
    (`DatasetBuilder.with_image_max_side`; None: as the builder declares, full size unless
    its builder.yaml gives its image features a ``max_side``).

    ``builder("cmaterdb")`` is the default config, ``builder("cmaterdb/telugu")`` another;
    ``builder("mnist:3.0.1")`` or ``builder("mnist:3.*")`` also checks the version (a builder
    has one version: asking for another raises DatasetNotFoundError naming it).

    Args:
        name_or_path: ``name[/config][:version]``, a builder folder's path, or the name a
            dataset was prepared as from local files or a Croissant file.
        data_dir: the data dir (a path or a bucket URL); default ``$CATALOG_DATA_DIR``, else
            the platform's user data dir.
        image_max_side: images at most this many pixels on their longer side; None: as the
            builder declares.

    Returns:
        The `DatasetBuilder`: ``.info``, ``.download_and_prepare()``, ``.as_data_source()``.

    Raises:
        DatasetNotFoundError: no dataset of that name (the closest names suggested), another
            version asked for, or a prepared dataset no spec describes.
        SpecError: its builder.yaml is malformed (file and field named).
        StorageError: the data dir is a file or a URL of a scheme no store reads.
    """
    handle = resolve_dataset(name_or_path, data_dir=data_dir, image_max_side=image_max_side)
    if handle.builder is None:
        raise DatasetNotFoundError(
            f"{handle.text} is a prepared dataset no builder describes ({handle.kind}: "
            f"{handle.target}); read it with catalog.data_source({handle.text!r}"
            + (f", data_dir={str(data_dir)!r})" if data_dir is not None else ")")
        )
    return handle.builder


def plain_name(text: str) -> bool:
    """Whether `text` is a plain ``name[/config][:version]`` (no path on disk, no URL): what a
    dataset in a data dir is called. ``catalog rm`` of such a name that nothing answers to
    removes nothing and says so, whatever the name once was (registered, prepared from files
    or a Croissant file, or removed already)."""
    return bool(_PLAIN_NAME.match(text)) and not Path(text).expanduser().exists()


def _path_first(text: str, registry: _Registry) -> tuple[bool, Callable[[str], str] | None]:
    """Whether `text` is a path before anything else: an existing file, or an existing folder
    with no builder.yaml, that would otherwise read as ``builder-folder/CONFIG``; and, when it
    reads as both, what says so (given what is done with the files: "prepared", "read"). A
    registered name still wins over a folder of that name (``mnist``; ``./mnist`` is the
    folder: no builder.yaml there)."""
    path = Path(text).expanduser()
    if not (path.is_file() or (path.is_dir() and not (path / "builder.yaml").is_file())):
        return False, None
    request = registry.request()
    if request is None:
        return path.is_file(), None
    if request.config is None:  # a registered name (or builder folder) of that exact name
        return path.is_file(), None
    kind = "file" if path.is_file() else "folder"
    also = (
        f"it also reads as config {request.config!r} of the builder folder {request.folder}: "
        f"ask for that one as {request.folder.resolve().name}/{request.config} from another "
        "folder"
    )
    return True, lambda done: f"{text} is a {kind}, {done} as local files ({also})"


def _is_name(text: str, folder: Path) -> bool:
    """Whether `text` named a registered dataset (not the path of its builder folder)."""
    return not (Path(text).expanduser() / "builder.yaml").is_file()


def _directory(text: str) -> DatasetHandle | None:
    """A dataset directory given by path (catalog's generation or pointer, or TFDS's)."""
    from catalog.api.local import local_dataset

    path = Path(text).expanduser()
    if not path.is_dir():
        return None
    found = local_dataset(path)
    if found is None:
        return None
    generation, info = found
    return _located("directory", text, path, Opened(generation.path, info, generation))


def _located(
    kind: Kind, text: str, target: Location, opened: Opened | None = None
) -> DatasetHandle:
    """A dataset given by where it is (its path or URL), in the store holding that place."""
    return DatasetHandle(kind, text, store_for(target), target, None, opened)


def _looks_like_files(text: str) -> bool:
    from catalog.spec.infer import is_path

    suffix = Path(text).suffix.lower()
    return is_path(text) or text.startswith((".", "/", "~")) or suffix in DATA_SUFFIXES


def _stored(text: str, store: Store, image_max_side: int | None) -> DatasetHandle | None:
    """A dataset no builder describes, prepared in `store` as ``name[/config][:version]``."""
    base, _, version = text.partition(":")
    name, _, config = base.partition("/")
    if not safe_part(name) or (config and not safe_part(config)) or "/" in config:
        return None
    listed = store.found(name)
    if not config:  # a dataset prepared only as NAME/CONFIG (a Croissant record set)
        config = only_config(name, listed, version, image_max_side)
    wanted = versions_asked(listed, config, version, image_max_side)
    resize = image_max_side is not None and not wanted
    if resize:  # prepared at full size only: the copy of another size comes from its spec
        wanted = versions_asked(listed, config, version, None)
    if not wanted:
        return None
    target = store.target(name, max(wanted)[1])
    opened = store.open(target)
    if opened is None:
        return None
    b = None
    if stored_origin(opened.info.source) is not None:
        assert opened.info.source is not None
        b = DatasetBuilder(stored_spec(opened.info.source, str(target)), data_dir=store)
        if resize:
            b = b.with_image_max_side(image_max_side)
    elif resize:
        return None
    return DatasetHandle("stored", text, store, target if b is None else b.data_path, b,
                         None if resize else opened)  # fmt: skip


def _tfds(text: str, store: Store, image_max_side: int | None) -> DatasetHandle:
    """``tfds:NAME[/CONFIG][:VERSION]``: its copy prepared in `store` (as ``tfds.NAME``, its
    spec stored with it), else a handle with no builder yet (preparing makes it by running
    TFDS's builder, `catalog.api.tfds`). TFDS's default config and version are its
    builder's (importing tensorflow-datasets; nothing is fetched)."""
    from catalog.api.tfds import tfds_declared  # the readers: only for a tfds: name
    from catalog.formats.tfds.runtime import parse_name

    name = parse_name(text)
    assert name is not None  # it starts with tfds:
    made = tfds_declared(name, data_dir=store)
    declared = made.spec
    config = f"/{declared.config}" if declared.config else ""
    stored = _stored(f"{declared.name}{config}:{name.version or declared.version}", store,
                     image_max_side)  # fmt: skip
    if stored is not None and stored.builder is not None:
        return DatasetHandle("tfds", text, store, stored.target, stored.builder, stored._opened)
    target = store.target(declared.full_name, declared.version_dir)
    return DatasetHandle("tfds", text, store, target, _declared=made)
