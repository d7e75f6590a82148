"""Datasets in a remote data dir (``s3://``, ``gs://``, ``https://``; `catalog.storage.remote`),
opened for reading: the generation resolved once per open (the pointer object, or for a static
https mirror of a local data dir ``<version>/`` itself), its dataset_info.json read once.

`DatasetBuilder` with a URL data dir and `catalog.data_source(url)` (the URL of one prepared
dataset, ``.../<name>/<version>``) use `remote_dataset`.
"""

from __future__ import annotations

import json

from catalog.errors import NotPreparedError, SpecError
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.storage.remote import RemoteDir, is_url, remote_dir
from catalog.storage.remote_reads import cat, resolve_generation

__all__ = ["read_remote_info", "remote_dataset"]


def read_remote_info(generation: RemoteDir) -> DatasetInfo:
    """The dataset_info.json of the remote `generation` (one request)."""
    where = generation / INFO_FILE
    data = cat(where)
    try:
        return DatasetInfo.from_json(json.loads(data))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise SpecError(
            f"{where} is unreadable ({type(error).__name__}: {error}); prepare the dataset "
            "again with --overwrite"
        ) from None


def remote_dataset(target: RemoteDir | str) -> tuple[RemoteDir, DatasetInfo] | None:
    """The generation that `target` (``<data dir>/<name>[/<config>]/<version>``) names and its
    info, or None when nothing is prepared there. A `target` that is itself a generation
    (it holds a dataset_info.json) is read as it is."""
    if isinstance(target, str):
        if not is_url(target):
            return None
        target = remote_dir(target)
    parent_url, _, version = target.url.rpartition("/")
    if "://" not in parent_url or parent_url.endswith("://") or not version:
        return None
    generation = resolve_generation(RemoteDir(parent_url), version)
    try:
        return generation, read_remote_info(generation)
    except NotPreparedError:
        if generation.name == version:  # no pointer, and no dataset in <version>/ either
            return None
        raise NotPreparedError(  # the pointer names a generation that is gone
            f"{target} names generation {generation.name}, which is not there (removed, or "
            "the upload was interrupted): prepare the dataset again"
        ) from None
