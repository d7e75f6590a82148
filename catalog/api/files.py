"""`prepare_files`: a dataset from local files, with no builder.yaml.

The files (a folder of images or WAV files, CSV/TSV, JSON Lines or Parquet files, WebDataset
shards; see `catalog.spec.infer`) become a builder spec in memory, prepared like any builder's
into ``<data_dir>/<name>/1.0.0/``, where ``catalog.data_source(name)`` finds it.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from catalog.api.builder import DatasetBuilder, PathLike
from catalog.errors import SpecError
from catalog.prepare.options import PrepareOptions
from catalog.spec.infer import InferOptions, infer_spec, name_from_path
from catalog.spec.infer import write as spec_writer
from catalog.spec.registry import list_datasets
from catalog.storage.data_dir import DataDir

if TYPE_CHECKING:
    from catalog.download import DownloadConfig

__all__ = ["files_builder", "prepare_files"]


def files_builder(
    path: PathLike,
    name: str | None = None,
    *,
    data_dir: DataDir | None = None,
    label: str | None = None,
    fill: Mapping[str, str] | None = None,
    sample: int = 1000,
    note: Callable[[str], None] | None = None,
    dtypes: Mapping[str, str] | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    channels: int | None = None,
    missing: Sequence[str] = (),
    skip_rows: int = 0,
    no_header: bool = False,
    quoting: str = "minimal",
) -> DatasetBuilder:
    """The builder of the local files `path` names (a file, a folder or a glob), its spec
    inferred (see `catalog.spec.infer`); not prepared yet. `name` defaults to one made from
    the path (``My Photos`` -> ``my_photos``) and may not be a registered dataset's. `note`
    gets hints (a text column that looks like a label). `dtypes`, `delimiter`, `encoding`,
    `missing`, `channels`, `skip_rows`, `no_header`, `quoting`: see `prepare_files`."""
    text = os.fspath(path)
    name = name or name_from_path(text)
    if name in list_datasets():
        raise SpecError(
            f"{name!r} is a registered dataset; give the prepared files another name (--name)"
        )
    options = InferOptions(
        name,
        label=label,
        fill=dict(fill or {}),
        sample=sample,
        note=note,
        dtypes=dict(dtypes or {}),
        delimiter=delimiter,
        encoding=encoding,
        channels=channels,
        missing=(missing,) if isinstance(missing, str) else tuple(missing),
        skip_rows=skip_rows,
        no_header=no_header,
        quoting=quoting,
    )
    spec = infer_spec(text, options)
    where = text if glob.has_magic(text) else str(Path(text).expanduser().resolve())
    return DatasetBuilder(spec.replace(origin=("files", where)), data_dir=data_dir)


def prepare_files(
    path: PathLike,
    name: str | None = None,
    *,
    data_dir: PathLike | None = None,
    label: str | None = None,
    fill: Mapping[str, str] | None = None,
    dtypes: Mapping[str, str] | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    missing: Sequence[str] = (),
    channels: int | None = None,
    skip_rows: int = 0,
    no_header: bool = False,
    quoting: str = "minimal",
    write_spec: PathLike | None = None,
    overwrite: bool = False,
    num_proc: int = 1,
    download_config: DownloadConfig | None = None,
) -> DatasetBuilder:
    """Prepare the local files `path` names as dataset `name`, with no builder.yaml; return
    its (prepared) builder: ``.info``, ``.as_data_source(split)``. Afterwards
    ``catalog.data_source(name)`` (same `data_dir`) reads it.

    `label` makes a text column a ClassLabel (its distinct values, sorted, are the class
    names); `fill` gives, per column, the text standing in for its missing values (without it
    a missing value is an error naming file, line and column; a missing number is NaN).
    `dtypes` sets columns' types (``{"zip": "text", "n": "float32"}``) instead of inferring
    them from every row. `delimiter` and `encoding` of CSV/TSV files are found from the file
    unless given (``delimiter=";"``). `missing` names the texts that are missing values in
    CSV/TSV fields besides the empty one, as pandas' ``na_values`` (``missing=["NA"]`` for a
    file R wrote). `channels` (1, 3 or 4) are an image folder's channels,
    every image converted to them (default: what most of its images have). `write_spec` also
    writes the
    inferred spec there as builder.yaml + checksums.tsv (a folder holding the data, or one
    above it), to edit and keep as a builder folder. A prepared copy of the same files is
    reused; changed files are prepared again.

    Args:
        path: a folder (image or audio class folders, table files per split), a file (CSV,
            TSV, JSON Lines, Parquet, a Croissant JSON-LD) or a glob of them.
        name: the dataset's name; default the folder's or file's name.
        data_dir: where to prepare it; default as for `catalog.data_source`.
        label: a text column to make a ClassLabel.
        fill: per column, the text that stands in for its missing values.
        dtypes: per column, its type (``int64``, ``float32``, ``bool``, ``text``, ...) instead
            of the inferred one; every value is checked against it.
        delimiter: the field separator of CSV/TSV files; default: found from the file.
        encoding: the text encoding of CSV/TSV files; default UTF-8, or as its BOM says.
        missing: texts that are missing values in CSV/TSV fields (besides the empty field).
        channels: an image folder's channels (1, 3 or 4); default: colour when most images
            are colour (3 or 4 channels), else gray.
        skip_rows: lines skipped at each CSV/TSV file's start, as pandas' ``skiprows=N``
            (a count line before the header).
        no_header: CSV/TSV files without a header row: the columns are ``"0"``, ``"1"``...,
            as pandas' ``header=None`` names them (as text).
        quoting: how CSV/TSV fields use double quotes: ``"minimal"`` (a field may be quoted,
            holding delimiters and line breaks; a quote in it written twice) or ``"none"``
            (quotes are text, as in most TSV files: pandas' ``quoting=csv.QUOTE_NONE``).
        write_spec: a folder to also write the inferred builder.yaml + checksums.tsv into.
        overwrite: prepare again even when a prepared copy of the same files is there.
        num_proc: processes that prepare shards at once.
        download_config: how a Croissant file's downloads are fetched.

    Returns:
        The prepared dataset's `DatasetBuilder`.

    Raises:
        SpecError: the files give no dataset (no files, mixed kinds, a bad name or column).
        SourceFormatError: a file is not what its kind promises (file and line named).
        FeatureError: a value does not fit its inferred feature (file, line and column).

    Examples:
        >>> b = catalog.prepare_files("photos/", "photos")   # doctest: +SKIP
        >>> b.as_data_source("train")[0]["label"]             # doctest: +SKIP
    """
    b = files_builder(
        path,
        name,
        data_dir=data_dir,
        label=label,
        fill=fill,
        dtypes=dtypes,
        delimiter=delimiter,
        encoding=encoding,
        missing=missing,
        channels=channels,
        skip_rows=skip_rows,
        no_header=no_header,
        quoting=quoting,
    )
    if write_spec is not None:
        spec_writer.write_spec(b.spec, Path(os.fspath(write_spec)))
    b.prepare(
        PrepareOptions(overwrite=overwrite, num_proc=num_proc), download_config=download_config
    )
    return b
