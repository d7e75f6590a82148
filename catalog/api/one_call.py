"""The one call: `data_source(name)` downloads, checks and prepares a dataset when needed and
returns its random-access data sources. `name` may also be a dataset directory (TFDS's or
catalog's), the URL of one, or the name of a dataset `catalog.prepare_files` prepared."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, overload

from catalog.api.builder import DatasetBuilder, PathLike, read_opened
from catalog.api.resolve import resolve_dataset
from catalog.errors import NotPreparedError
from catalog.info.splits import SplitArg, SplitsArg
from catalog.prepare.reuse import serves
from catalog.read.data_source import DataSource, Decoder
from catalog.read.options import ReadOptions
from catalog.storage.data_dir import Opened, RemoteRead

if TYPE_CHECKING:  # the download package imports requests: only preparing needs it
    from typing import Unpack

    from catalog.api.builder import ReadKeywords
    from catalog.download import DownloadConfig

    class DataSourceKeywords(ReadKeywords, total=False):
        """`data_source`'s keywords besides `split`, for its overloads (its signature has
        their defaults)."""

        data_dir: PathLike | None
        download_dir: PathLike | None
        download: bool
        download_config: DownloadConfig | None
        num_proc: int
        beam_pipeline_options: str | None
        image_max_side: int | None


__all__ = ["data_source"]


@overload
def data_source(
    name: PathLike, *, split: None = None, **keywords: Unpack[DataSourceKeywords]
) -> dict[str, DataSource]: ...
@overload
def data_source(
    name: PathLike, *, split: SplitArg, **keywords: Unpack[DataSourceKeywords]
) -> DataSource: ...
@overload
def data_source(
    name: PathLike,
    *,
    split: list[SplitArg] | tuple[SplitArg, ...],
    **keywords: Unpack[DataSourceKeywords],
) -> list[DataSource]: ...
def data_source(
    name: PathLike,
    *,
    split: SplitsArg | None = None,
    data_dir: PathLike | None = None,
    download_dir: PathLike | None = None,
    download: bool = True,
    download_config: DownloadConfig | None = None,
    decoders: Mapping[str, Decoder] | None = None,
    as_supervised: bool = False,
    num_proc: int = 1,
    beam_pipeline_options: str | None = None,
    image_max_side: int | None = None,
    remote_read: RemoteRead = "cache",
    cache_dir: PathLike | None = None,
    cache_size: int | str | None = None,
) -> DataSource | list[DataSource] | dict[str, DataSource]:
    """Random-access data sources of a dataset, downloading and preparing it when needed.

    `name` may also be the path of a dataset directory: one TensorFlow Datasets prepared
    (``~/tensorflow_datasets/mnist/3.0.1``, see `open_tfds`) or one catalog prepared or
    imported; it is read where it is. A name no builder has may be that of a dataset
    `catalog.prepare_files` prepared in the data dir (a registered name wins).
    ``tfds:NAME[/CONFIG][:VERSION]`` is a dataset TFDS's own builder makes, without
    TensorFlow (``pip install 'catalog[tfds]'``): prepared by running it, then read as
    catalog's.

    Returns ``{split: DataSource}``, one DataSource when `split` is given (a spec or a
    `catalog.ReadInstruction`), or a list of them for a list of specs. With
    ``download=False`` a dataset that is not prepared raises NotPreparedError.
    ``download_config`` (a `catalog.download.DownloadConfig`) sets how files are fetched, e.g.
    ``DownloadConfig(offline=True, mirrors=["/srv/mirror"], manual_dir="~/manual")``.
    `decoders`, `as_supervised`, `remote_read`, `cache_dir` and `cache_size` are as for
    `DatasetBuilder.as_data_source`; `num_proc` and `beam_pipeline_options` as for
    `DatasetBuilder.download_and_prepare`. `data_dir` (or `name`, for one dataset) may be a
    URL: ``s3://bucket/prefix``, ``gs://...``, ``https://...`` (read-only).
    ``image_max_side=N`` reads (and prepares) the copy with images at most N pixels on their
    longer side; without it the full-size copy is read, never a downscaled one: when only that
    one is prepared, the full-size one is prepared (or, with ``download=False``,
    NotPreparedError says which sizes are there).

    Args:
        name: ``name[/config][:version]``, a builder folder's path, or a prepared dataset's
            directory (catalog's or TFDS's).
        split: a split spec (``"train[:10%]"``), a `catalog.ReadInstruction`, or a list of
            them; None for every split.
        data_dir: where prepared datasets are (a path or a bucket URL); default
            ``$CATALOG_DATA_DIR``, else the platform's user data dir.
        download_dir: the download cache; default ``<data_dir>/downloads``.
        download: False to only read what is prepared (never download or prepare).
        download_config: how files are fetched (`catalog.download.DownloadConfig`).
        decoders: per feature path, False for the stored bytes or a function of them.
        as_supervised: return ``(input, target)`` tuples of the dataset's supervised keys.
        num_proc: processes that prepare shards at once.
        beam_pipeline_options: prepare on Apache Beam with these options.
        image_max_side: read (and prepare) the copy with images at most this many pixels on
            their longer side.
        remote_read: for a data dir in a bucket, ``"cache"`` (whole shards cached locally)
            or ``"range"`` (byte ranges).
        cache_dir: the local shard cache of a bucket data dir.
        cache_size: that cache's size limit (bytes or ``"20GiB"``).

    Returns:
        ``{split: DataSource}`` without `split`, one `DataSource` for a spec, a list of them
        for a list of specs.

    Raises:
        DatasetNotFoundError: no dataset has that name, config or version.
        SplitError: the split spec is malformed or names no split.
        NotPreparedError: ``download=False`` and the dataset is not prepared.
        DownloadError: a file could not be downloaded from any source.
        ChecksumError: a download's size or sha256 is not the registered one.
        SpecError: the builder spec is malformed.
        StorageError: the data or download dir is unusable, or the disk is full.

    Examples:
        >>> ds = data_source("fashion_mnist")  # doctest: +SKIP
        >>> ds["train"][0]["image"].shape       # doctest: +SKIP
        (28, 28, 1)
    """
    read = ReadOptions(decoders, as_supervised, remote_read, cache_dir, cache_size)
    handle = resolve_dataset(name, data_dir=data_dir, image_max_side=image_max_side)
    b = handle.builder
    if b is None and handle.kind == "tfds" and download:  # made by running TFDS's builder
        from catalog.api.tfds import tfds_builder
        from catalog.formats.tfds.runtime import parse_name

        tfds = parse_name(handle.text)
        assert tfds is not None  # the kind says so
        b = tfds_builder(
            tfds, data_dir=handle.store, download_dir=download_dir,
            download_config=download_config,
        ).with_image_max_side(image_max_side)  # fmt: skip
    if b is None:  # a dataset directory, the URL of one, a TFDS import: read where it is
        if handle.open() is None:
            raise NotPreparedError(
                f"no prepared dataset at {handle.target} (neither a pointer nor a "
                "dataset_info.json there): give <data dir>/<name>/<version>, or the name with "
                "data_dir=<data dir>"
            )
        return handle.as_data_source(split, read)
    request = b.check_split(split)  # parsed once, here
    opened = b.open()  # resolved (and its info read) once
    if download and not _complete(b, opened):
        b.download_and_prepare(
            download_dir=download_dir,
            download_config=download_config,
            num_proc=num_proc,
            beam_pipeline_options=beam_pipeline_options,
        )
        opened = b.open()
    if opened is None:
        raise b.not_prepared_error(data_dir=str(b.data_dir))
    return read_opened(b.store, opened, request, read)


def _complete(b: DatasetBuilder, opened: Opened | None) -> bool:
    """Whether the prepared copy holds every example the spec declares (a copy prepared with
    ``max_examples_per_split`` does not, and is never taken for the whole dataset) in shards
    of today's format (older copies are prepared again: see `catalog.storage.shards`)."""
    if opened is None:
        return False
    return serves(b.store, opened, b.spec, b.data_path) is not None
