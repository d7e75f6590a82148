"""Datasets a Croissant file describes: `croissant_builder` (what ``catalog prepare
metadata.json`` uses)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from catalog.api.builder import DatasetBuilder
from catalog.api.data_dir import resolve_data_dir
from catalog.storage.data_dir import DataDir
from catalog.storage.remote import is_url

if TYPE_CHECKING:  # the download package imports requests: only preparing needs it
    from catalog.download import DownloadConfig

__all__ = ["croissant_builder"]


def croissant_builder(
    location: str | os.PathLike[str],
    *,
    data_dir: DataDir | None = None,
    download_dir: str | os.PathLike[str] | None = None,
    download_config: DownloadConfig | None = None,
    name: str | None = None,
    record_set: str | None = None,
    fill: Mapping[str, str] | None = None,
) -> DatasetBuilder:
    """The builder of the dataset the Croissant file at `location` (a path, or an http(s)
    URL) describes. Its files are fetched and verified now (sha256; mirrors and the offline
    mode of `download_config` honoured) and read once to count the examples; then
    ``.download_and_prepare()`` prepares it like any builder's dataset. `name` names the
    dataset (default: from the file's ``name``); `record_set` (or ``location#RECORD_SET``)
    picks the record set of a file holding several of different fields. `fill` gives the
    value standing in for a field's missing values (``{"comment": ""}``; a list field's is
    JSON, ``"[]"``); without one a missing value is an error, except a float's (NaN).

    >>> b = croissant_builder("https://example.org/croissant.json")  # doctest: +SKIP
    >>> b.download_and_prepare(); b.as_data_source("default")[0]      # doctest: +SKIP
    """
    from catalog.download import resolve_config
    from catalog.interop.croissant.spec import croissant_spec

    store = resolve_data_dir(data_dir)  # any data dir, checked before anything is fetched
    config = resolve_config(download_config, data_dir=store.root, download_dir=download_dir)
    text = os.fspath(location)
    spec = croissant_spec(text, config, record_set=record_set, name=name, fill=fill)
    return DatasetBuilder(spec.replace(origin=("croissant", _where(text))), data_dir=store)


def _where(location: str) -> str:
    """The Croissant file as stored with the dataset: a URL, or an absolute path."""
    return location if is_url(location) else str(Path(location).expanduser().resolve())
