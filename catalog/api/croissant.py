"""Datasets a Croissant file describes: `croissant_builder` (what ``catalog prepare
metadata.json`` uses)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from catalog.api.builder import DatasetBuilder
from catalog.storage import paths

if TYPE_CHECKING:  # the download package imports requests: only preparing needs it
    from catalog.download import DownloadConfig

__all__ = ["croissant_builder"]


def croissant_builder(
    location: str | os.PathLike[str],
    *,
    data_dir: str | os.PathLike[str] | None = None,
    download_dir: str | os.PathLike[str] | None = None,
    download_config: DownloadConfig | None = None,
    name: str | None = None,
    record_set: str | None = None,
) -> DatasetBuilder:
    """The builder of the dataset the Croissant file at `location` (a path, or an http(s)
    URL) describes. Its files are fetched and verified now (sha256; mirrors and the offline
    mode of `download_config` honoured) and read once to count the examples; then
    ``.download_and_prepare()`` prepares it like any builder's dataset. `name` names the
    dataset (default: from the file's ``name``); `record_set` (or ``location#RECORD_SET``)
    picks the record set of a file holding several of different fields.

    >>> b = croissant_builder("https://example.org/croissant.json")  # doctest: +SKIP
    >>> b.download_and_prepare(); b.as_data_source("default")[0]      # doctest: +SKIP
    """
    from catalog.download import resolve_config
    from catalog.interop.croissant.spec import croissant_spec

    root = paths.data_dir(data_dir)
    config = resolve_config(download_config, data_dir=root, download_dir=download_dir)
    spec = croissant_spec(os.fspath(location), config, record_set=record_set, name=name)
    return DatasetBuilder(spec, data_dir=root)
