"""The data dir an entry point names, as a store: `resolve_data_dir`, the one place `api/`
makes a data dir's store (`catalog.storage.data_dir.data_dir_store`). The resolver
(`catalog.api.resolve`) makes it through here for a dataset argument and hands the store on
in its `DatasetHandle`; every entry point takes that store as its ``data_dir`` too, so a command
that resolved its argument never makes the store twice."""

from __future__ import annotations

from catalog.storage.data_dir import DataDir, Store, data_dir_store

__all__ = ["resolve_data_dir"]


def resolve_data_dir(data_dir: DataDir | None = None) -> Store:
    """The store of the data dir `data_dir`: a path or a bucket URL (default
    ``$CATALOG_DATA_DIR``, else the platform's user data dir), or a store made already, which
    is the answer itself.

    Raises:
        StorageError: the data dir is a file, or a URL of a scheme no store reads.
    """
    return data_dir_store(data_dir)
