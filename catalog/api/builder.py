"""DatasetBuilder and `builder(name)`: one dataset version in one data dir (the one call that
opens it, `data_source(name)`, is in `catalog.api.one_call`)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, overload

from catalog._util.units import count, format_size
from catalog.api.data_dir import resolve_data_dir
from catalog.errors import (
    DatasetNotFoundError,
    NotPreparedError,
    SpecError,
)
from catalog.info.dataset_info import DatasetInfo
from catalog.info.split_request import SplitRequest
from catalog.info.splits import SplitArg, SplitsArg
from catalog.prepare.options import PrepareOptions
from catalog.prepare.reuse import declared_info, foreign_to
from catalog.read import options as read_options
from catalog.read.data_source import DataSource, Decoder, open_sources
from catalog.read.options import ReadOptions
from catalog.spec.load import load_spec
from catalog.spec.model import BuilderSpec
from catalog.spec.registry import Request, version_matches
from catalog.storage.data_dir import (
    DataDir,
    Location,
    Opened,
    RemoteRead,
    Store,
)

if TYPE_CHECKING:  # the download package imports requests: only preparing needs it
    from catalog.download import DownloadConfig
    from catalog.prepare.driver import Prepared
    from catalog.prepare.progress import PrepareProgress

__all__ = ["DatasetBuilder", "builder_of", "read_opened"]

PathLike = str | os.PathLike[str]

if TYPE_CHECKING:  # for the type checker only: the overloads' keywords, declared once
    from typing import TypedDict, Unpack

    class ReadKeywords(TypedDict, total=False):
        """`DatasetBuilder.as_data_source`'s keywords (its signature has their defaults)."""

        decoders: Mapping[str, Decoder] | None
        as_supervised: bool
        remote_read: RemoteRead
        cache_dir: PathLike | None
        cache_size: int | str | None


class DatasetBuilder:
    """One dataset version (of one config) in one data dir: its info, its preparation, its
    data sources.

    Prepared data lives in ``<data_dir>/<name>/<version>/``, or
    ``<data_dir>/<name>/<config>/<version>/`` for a dataset with configs: a pointer to the
    generation prepared last (`catalog.storage.generations`), which data sources pin. A copy
    with images stored smaller (`with_image_max_side`) lives beside it in
    ``<version>-max<N>/``: each builder reads and prepares only its own. The
    data dir may be a URL (``s3://bucket/prefix``, `catalog.storage.remote`): there the
    pointer is an object, resolved once per open.

    Made by `catalog.builder`; ``.info`` is the metadata (declared, or the prepared copy's),
    ``.download_and_prepare()`` prepares, ``.as_data_source(split)`` reads.

    Args:
        spec: the loaded builder spec (`catalog.spec.model.BuilderSpec`).
        data_dir: where its prepared copies are (a path, a bucket URL, or the data dir's
            store when the caller made it already, as the resolver does); default
            ``$CATALOG_DATA_DIR``, else the platform's user data dir.

    Raises:
        StorageError: the data dir is unusable (a file, an unknown URL scheme).
    """

    def __init__(
        self,
        spec: BuilderSpec,
        *,
        data_dir: DataDir | None = None,
    ) -> None:
        self.spec = spec
        #: the data dir (`catalog.storage.data_dir`): where this dataset is prepared and read
        #: (`store`: its store, made once, by the resolver when it found the dataset)
        self.store: Store = resolve_data_dir(data_dir)
        self.data_dir: Location = self.store.root

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def config(self) -> str | None:
        """The config (None for a dataset without configs)."""
        return self.spec.config

    @property
    def full_name(self) -> str:
        """``name`` or ``name/config``, as `builder()` and the CLI take it."""
        return self.spec.full_name

    @property
    def version(self) -> str:
        return self.spec.version

    @property
    def data_path(self) -> Location:
        """Where the prepared files are (or will be): a local path, or a bucket's URL."""
        return self.store.target(self.full_name, self.spec.version_dir)

    @property
    def image_max_side(self) -> int | None:
        """The longest side its images are stored at, or None at full size."""
        return self.spec.image_max_side

    def with_image_max_side(self, max_side: int | None) -> DatasetBuilder:
        """The builder of this dataset with its images stored at most `max_side` pixels on
        their longer side (None: at full size), prepared and read in a folder of its own."""
        if max_side == self.spec.image_max_side:
            return self
        return DatasetBuilder(self.spec.with_image_max_side(max_side), data_dir=self.store)

    def _other_sizes(self) -> list[str]:
        """Beside `data_path`, the folders holding this version with images of another size
        (``3.0.1``, ``3.0.1-max256``), prepared."""
        pattern = re.compile(rf"{re.escape(self.version)}(-max\d+)?")
        prefix = f"{self.config}/" if self.config else ""
        names = [f[len(prefix) :] for f in self.store.found(self.name) if f.startswith(prefix)]
        return sorted(n for n in names if pattern.fullmatch(n) and n != self.spec.version_dir)

    @property
    def is_prepared(self) -> bool:
        """Whether this builder's dataset is prepared in the data dir (a copy prepared there
        from another builder with the same name and version does not count; one whose
        dataset_info.json is unreadable does, and reading it says what is wrong)."""
        try:
            return self._prepared_info() is not None
        except SpecError:
            return True

    @property
    def info(self) -> DatasetInfo:
        """The dataset's info: from disk once prepared, else what the spec declares."""
        return self._prepared_info() or declared_info(self.spec)

    def _prepared_info(self) -> DatasetInfo | None:
        opened = self.open()
        return None if opened is None else opened.info

    def open(self) -> Opened | None:
        """The generation `data_path` names, pinned (in a bucket: resolved once), with its
        info (read from it: never another generation's); None when none is prepared from
        this builder. Data sources made from it read that generation only."""
        opened = self.store.open(self.data_path)
        if opened is None or foreign_to(opened.info, self.spec, self.data_path):
            return None
        return opened

    def not_prepared_error(
        self, asked: str | None = None, data_dir: str | None = None
    ) -> NotPreparedError:
        """What to say when this dataset is read before it is prepared here; `asked` and
        `data_dir` are how the user named the dataset and the data dir (for the command)."""
        prepare = f"catalog prepare {asked or self.full_name}" + (
            f" --data-dir {data_dir}" if data_dir else ""
        )
        there = self.store.open(self.data_path)
        foreign = there and foreign_to(there.info, self.spec, self.data_path)
        if foreign:
            return NotPreparedError(
                f"{foreign}; run '{prepare} --overwrite' to replace it with this one's, "
                "or use another data dir"
            )
        python = "" if asked else " (or call download_and_prepare())"
        others = self._other_sizes()
        if others:  # never served for this one: say so
            sizes = ", ".join(
                "full size" if n == self.version else f"at most {n.rsplit('max', 1)[1]} px"
                for n in others
            )
            python += (
                f"; {self.data_dir / self.full_name} holds it with images of another size "
                f"({sizes}): "
                "read that with image_max_side=N (--image-max-side N)"
            )
        leftovers = self.store.leftovers(self.data_path)
        if leftovers:  # an interrupted prepare: say what it left and how to go on
            shards = sum(w.shards for w in leftovers)
            size = format_size(sum(w.size for w in leftovers))
            rm = f"catalog rm {asked or self.full_name}" + (
                f" --data-dir {data_dir}" if data_dir else ""
            )
            return NotPreparedError(
                f"{self.full_name} {self.version} is not prepared in {self.data_dir}, but an "
                f"interrupted prepare left {count(shards, 'finished shard')} ({size}) in "
                f"{leftovers[0].path}: '{prepare}' resumes it{python}, '{rm}' removes it"
            )
        return NotPreparedError(
            f"{self.full_name} {self.version} is not prepared in {self.data_dir}; prepare it "
            f"first: {prepare}{python}"
        )

    def download_and_prepare(
        self,
        *,
        download_dir: PathLike | None = None,
        overwrite: bool = False,
        download_config: DownloadConfig | None = None,
        max_examples_per_split: int | None = None,
        num_proc: int = 1,
        beam_pipeline_options: str | None = None,
        shard_size: int | None = None,
        image_max_side: int | None = None,
    ) -> DatasetInfo:
        """Download, verify and prepare every split; reuse a prepared copy unless `overwrite`.

        `download_config` (a `catalog.download.DownloadConfig`) sets mirrors, offline mode, the
        manual dir, retries and more; `download_dir` overrides its download dir.
        ``max_examples_per_split=N`` stops each split after N examples (a quick copy for smoke
        tests); preparing again without it prepares the whole dataset. Shards are cut at about
        `shard_size` bytes (default: 1 GiB, or the size an interrupted prepare of this dataset
        was cutting them at, so its finished shards are kept); ``num_proc=N`` writes them in N
        processes, and
        ``beam_pipeline_options="runner=DirectRunner,direct_num_workers=2"`` as Apache Beam
        work items (``pip install 'catalog[beam]'``): the bytes are the same either way. A
        prepare that was killed is resumed: its finished shards are kept.
        ``image_max_side=N`` prepares the copy with images at most N pixels on their longer
        side instead (`with_image_max_side`; read it with ``builder(name, image_max_side=N)``).
        """
        options = PrepareOptions(
            overwrite=overwrite,
            max_examples_per_split=max_examples_per_split,
            num_proc=num_proc,
            beam_pipeline_options=beam_pipeline_options,
            shard_bytes=shard_size,
            image_max_side=image_max_side,
        )
        return self.prepare(
            options, download_config=download_config, download_dir=download_dir
        ).info

    def prepare(
        self,
        options: PrepareOptions | None = None,
        *,
        download_config: DownloadConfig | None = None,
        download_dir: PathLike | None = None,
        progress: PrepareProgress | None = None,
        opened: Opened | None = None,
    ) -> Prepared:
        """`download_and_prepare` with its settings as one `PrepareOptions`, saying what it
        did: ``Prepared.status`` is ``"prepared"`` or ``"reused"``, with the units written and
        kept from a killed run. `progress` reports the units (default: by the download
        config's progress mode). With ``options.image_max_side`` set, the copy with images
        of that size is prepared (in its own folder, `with_image_max_side`). `opened`: its
        generation, when the caller opened it already (`open`): the first reuse check takes
        it instead of opening it again."""
        side = None if options is None else options.image_max_side
        if side not in (None, self.image_max_side):
            return self.with_image_max_side(side).prepare(
                options, download_config=download_config, download_dir=download_dir,
                progress=progress, opened=opened,
            )  # fmt: skip
        # Deferred: preparing needs requests and the writer; reading and `import catalog` don't.
        from catalog.download import resolve_config
        from catalog.prepare.driver import prepare_dataset

        config = resolve_config(download_config, data_dir=self.data_dir, download_dir=download_dir)
        return prepare_dataset(
            self.spec, self.store, self.data_path, config, options, progress, opened
        )

    def check_split(self, split: SplitsArg | SplitRequest | None) -> SplitRequest:
        """`split` parsed (unless it comes parsed) and checked against the spec's splits
        before any work is done: what reading it takes (`catalog.info.split_request`).

        Args:
            split: what ``split=`` takes, or a `SplitRequest` already parsed.

        Returns:
            The parsed `SplitRequest`.

        Raises:
            SplitError: a spec is malformed or names a split the dataset does not have."""
        request = SplitRequest.parse(split)
        request.check(list(self.spec.splits), self.full_name)
        return request

    @overload
    def as_data_source(
        self, split: None = None, **read: Unpack[ReadKeywords]
    ) -> dict[str, DataSource]: ...
    @overload
    def as_data_source(self, split: SplitArg, **read: Unpack[ReadKeywords]) -> DataSource: ...
    @overload
    def as_data_source(
        self, split: list[SplitArg] | tuple[SplitArg, ...], **read: Unpack[ReadKeywords]
    ) -> list[DataSource]: ...
    def as_data_source(
        self,
        split: SplitsArg | None = None,
        *,
        decoders: Mapping[str, Decoder] | None = None,
        as_supervised: bool = False,
        remote_read: RemoteRead = "cache",
        cache_dir: PathLike | None = None,
        cache_size: int | str | None = None,
    ) -> DataSource | list[DataSource] | dict[str, DataSource]:
        """A DataSource for a split spec (``"train"``, ``"train[:10%]+test"``, ``"all"``, a
        `catalog.ReadInstruction`; see `catalog.info.splits`), a list of them for a list of
        specs, or a dict of all splits when `split` is None.

        ``decoders={"image": False}`` keeps chosen features' stored bytes (e.g. the JPEG
        file) undecoded, or decodes them with the function given instead of False;
        ``as_supervised=True`` returns ``(input, target)`` tuples of the supervised keys.

        In a remote data dir, ``remote_read="cache"`` (the default) reads shards from a local
        cache (`cache_dir`, else ``$CATALOG_CACHE_DIR``; at most `cache_size` bytes, else
        ``$CATALOG_CACHE_SIZE``, else 20 GiB), each fetched once and verified;
        ``remote_read="range"`` reads single records by byte ranges, without local disk.
        """
        read = ReadOptions(decoders, as_supervised, remote_read, cache_dir, cache_size)
        return self.read(split, read)

    def read(
        self,
        split: SplitsArg | SplitRequest | None,
        options: ReadOptions,
        opened: Opened | None = None,
    ) -> DataSource | list[DataSource] | dict[str, DataSource]:
        """`as_data_source` given its options as one value (and the generation when it was
        opened already: `catalog.api.resolve.DatasetHandle`)."""
        request = self.check_split(split)
        opened = opened if opened is not None else self.open()
        if opened is None:
            raise self.not_prepared_error(data_dir=str(self.data_dir))
        return read_opened(self.store, opened, request, options)

    def __repr__(self) -> str:
        data_dir = str(self.data_dir)
        return (
            f"DatasetBuilder({self.full_name!r}, version={self.version!r}, data_dir={data_dir!r})"
        )


def read_opened(
    store: Store,
    opened: Opened,
    split: SplitsArg | SplitRequest | None,
    options: ReadOptions = read_options.DEFAULT,
) -> DataSource | list[DataSource] | dict[str, DataSource]:
    """The data sources of the generation `opened` (`Store.open`) in `store`: they read that
    generation only, and hold it; the store says how its shards are read."""
    return open_sources(store, opened.folder, opened.info, split, options)


def builder_of(request: Request, store: Store, image_max_side: int | None = None) -> DatasetBuilder:
    """The builder the registry's answer `request` names, in the data dir `store`."""
    spec = load_spec(request.folder, request.config)
    if request.version is not None and not version_matches(request.version, spec.version):
        raise DatasetNotFoundError(
            f"{spec.full_name} has no version {request.version}: the version catalog has is "
            f"{spec.version} (ask for {spec.full_name}:{spec.version}, or give no version)"
        )
    b = DatasetBuilder(spec, data_dir=store)
    return b if image_max_side is None else b.with_image_max_side(image_max_side)
