"""Datasets in and out of catalog's format: `import_dataset` (a TFDS-prepared directory, or a
builder folder reading TFRecord files), `export_dataset` (TFRecord files, a TFDS directory,
or Parquet files) and `croissant_metadata` (the Croissant JSON-LD describing those Parquet
files). ``catalog import``, ``catalog export`` and ``catalog croissant`` are thin layers over
them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from catalog.api.builder import PathLike, builder_of
from catalog.api.data_dir import resolve_data_dir
from catalog.api.resolve import DatasetHandle, resolve_dataset
from catalog.errors import DatasetNotFoundError
from catalog.info.dataset_info import DatasetInfo
from catalog.interop.croissant.write import to_croissant
from catalog.interop.tfds.directory import is_tfds_dir
from catalog.spec.model import SPEC_FILE
from catalog.spec.registry import resolve
from catalog.storage import paths
from catalog.storage.data_dir import DataDir, Location, Store
from catalog.storage.remote import RemoteDir, is_url, remote_dir

__all__ = ["croissant_metadata", "export_dataset", "export_handle", "import_dataset"]

ExportFormat = Literal["tfrecord", "tfds", "parquet"]
#: What `export_dataset` writes.
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("tfrecord", "tfds", "parquet")


def import_dataset(
    path: PathLike,
    *,
    data_dir: DataDir | None = None,
    name: str | None = None,
    overwrite: bool = False,
) -> tuple[DatasetInfo, Location]:
    """Import the dataset at `path` into the data dir: a directory TensorFlow Datasets prepared
    (``~/tensorflow_datasets/mnist/3.0.1``: its records re-encoded into catalog's shards, no
    TensorFlow needed), also one in a bucket or on a web server, as TFDS serves the datasets
    it has no generation code for (``gs://tfds-data/datasets/mnist/3.0.1``: fetched into the
    download dir's scratch first, `catalog.interop.tfds.fetch`); or a builder folder (its
    builder.yaml, e.g. one reading TFRecord files, prepared as any dataset).

    Args:
        path: the TFDS directory (a path, or an ``s3://``, ``gs://``, ``https://`` URL) or the
            builder folder.
        data_dir: the data dir to import into (a path or a bucket URL); default as for
            `catalog.builder`.
        name: the name to import a TFDS directory under (default: its own).
        overwrite: replace a copy already there.

    Returns:
        The imported dataset's `DatasetInfo` and where it now is.

    Raises:
        DatasetNotFoundError: `path` is neither a TFDS directory nor a builder folder.
        SpecError: a copy is there already (without `overwrite`), or the spec is malformed.
        StorageError: the data dir is unusable.
    """
    store = resolve_data_dir(data_dir)  # a file, an unknown scheme: one error, before any work
    if is_url(path):
        return _import_remote_tfds(remote_dir(os.fspath(path)), store, name, overwrite)
    source = Path(path).expanduser()
    if (source / SPEC_FILE).is_file():
        b = builder_of(resolve(source), store)
        info = b.download_and_prepare(overwrite=overwrite)
        return info, b.data_path
    if is_tfds_dir(source):
        from catalog.interop.tfds.importer import import_tfds  # the writer: only to import

        return import_tfds(source, store, name=name, overwrite=overwrite)
    raise DatasetNotFoundError(
        f"{source} is neither a TFDS-prepared directory (dataset_info.json + features.json) "
        f"nor a builder folder ({SPEC_FILE})"
    )


def _import_remote_tfds(
    remote: RemoteDir, store: Store, name: str | None, overwrite: bool
) -> tuple[DatasetInfo, Location]:
    """`import_dataset` of a TFDS directory at a URL: copied into a scratch folder of the
    download dir (removed after, whatever happens), imported from there."""
    from catalog.interop.tfds.fetch import fetch_tfds_dir  # the importer: only to import
    from catalog.interop.tfds.importer import import_tfds

    scratch = paths.download_dir(None, store.root) / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tfds-", dir=scratch) as tmp:
        dataset = remote.url.rstrip("/").rsplit("/", 2)[-2]  # <name>/<version>: as TFDS wrote
        folder = fetch_tfds_dir(remote, Path(tmp) / dataset / remote.name)
        return import_tfds(folder, store, name=name, overwrite=overwrite)


def export_dataset(
    name: PathLike,
    output: PathLike,
    *,
    format: ExportFormat,
    data_dir: DataDir | None = None,
    overwrite: bool = False,
) -> Path:
    """Write the prepared dataset `name` for other tools: ``format="tfrecord"`` one TFRecord
    file of tf.train.Examples per split; ``"tfds"`` a complete TFDS directory
    ``<output>/<name>/<version>/`` that ``tfds.builder_from_directory`` loads; ``"parquet"``
    one Parquet file per split in Hugging Face datasets' layout (``pip install
    'catalog[parquet]'``).

    Args:
        name: a prepared dataset (what `catalog.builder` takes), or the path or URL of a
            dataset directory (catalog's or TFDS's).
        output: the folder to write into.
        format: ``"tfrecord"``, ``"tfds"`` or ``"parquet"``.
        data_dir: the data dir (a path or a bucket URL); default as for `catalog.builder`.
        overwrite: replace an earlier export there.

    Returns:
        What was written: the folder, or the one file of a one-split Parquet export.

    Raises:
        NotPreparedError: the dataset is not prepared.
        DatasetNotFoundError: no dataset of that name.
        StorageError: `output` is not writable, or an export is there (without `overwrite`).
        ValueError: `format` is none of those.
    """
    if format not in EXPORT_FORMATS:  # before anything is resolved or read
        raise ValueError(f"format {format!r}: catalog exports {', '.join(EXPORT_FORMATS)}")
    handle = resolve_dataset(name, data_dir=data_dir)
    if handle.open() is None:
        raise handle.not_prepared_error(str(name), None if data_dir is None else str(data_dir))
    return export_handle(handle, output, format=format, overwrite=overwrite)


def export_handle(
    handle: DatasetHandle, output: PathLike, *, format: ExportFormat, overwrite: bool = False
) -> Path:
    """`export_dataset` of a dataset resolved and prepared already (the CLI resolves it to
    say first when it is not prepared)."""
    if format not in EXPORT_FORMATS:
        raise ValueError(f"format {format!r}: catalog exports {', '.join(EXPORT_FORMATS)}")
    opened = handle.open()  # the generation, resolved once (held while it is read)
    assert opened is not None, "export_handle of a dataset that is not prepared"
    if format == "parquet":
        from catalog.interop.parquet.export import export_parquet  # pyarrow

        files = export_parquet(
            opened.info, opened.folder, Path(output), overwrite=overwrite, store=handle.store
        )
        return next(iter(files.values())) if len(files) == 1 else Path(output).expanduser()
    from catalog.interop.tfds.export import export

    return export(
        opened.info, opened.folder, Path(output), format=format, overwrite=overwrite,
        store=handle.store,
    )  # fmt: skip


def croissant_metadata(name: PathLike, *, data_dir: DataDir | None = None) -> dict[str, Any]:
    """The dataset's Croissant 1.0 metadata (JSON-LD, https://mlcommons.org/croissant/), what
    ``catalog croissant NAME`` prints: name, description, license, citation, version, the
    source files with their sha256, and one record set per split with a field per feature
    (class names as enumerations), reading the Parquet files `export_dataset(...,
    format="parquet")` writes. Offline: a dataset not prepared is described by its spec.

    Args:
        name: what `catalog.builder` takes, or the path of a prepared dataset directory.
        data_dir: the data dir (a path or a bucket URL); default as for `catalog.builder`.

    Returns:
        The JSON-LD document, as a dict (``json.dumps`` it to save it).

    Raises:
        DatasetNotFoundError: no dataset of that name.
        NotPreparedError: a dataset directory or URL with nothing prepared there.
    """
    return to_croissant(resolve_dataset(name, data_dir=data_dir).info)
