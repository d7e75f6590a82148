"""TFDS's own builders by name, ``tfds:NAME[/CONFIG][:VERSION]``: `tfds_builder` (what
``catalog prepare tfds:NAME`` and `catalog.data_source` use) and `tfds_declared` (what
``catalog info tfds:NAME`` shows before anything is fetched).

Needs the optional extra ``catalog[tfds]`` (tensorflow-datasets, no TensorFlow). The prepared
copy is ``tfds.NAME`` in the data dir, its spec stored with it, so it is found again by
``tfds:NAME`` (`catalog.api.resolve`) with nothing fetched.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from catalog.api.builder import DatasetBuilder
from catalog.api.data_dir import resolve_data_dir
from catalog.formats.tfds.runtime import TFDSName
from catalog.storage.data_dir import DataDir

if TYPE_CHECKING:  # the download package imports requests: only preparing needs it
    from catalog.download import DownloadConfig

__all__ = ["tfds_builder", "tfds_declared"]


def tfds_builder(
    name: TFDSName,
    *,
    data_dir: DataDir | None = None,
    download_dir: str | os.PathLike[str] | None = None,
    download_config: DownloadConfig | None = None,
) -> DatasetBuilder:
    """The builder of TFDS's dataset `name`, its files fetched and verified now (TFDS's
    registered checksums; mirrors, offline mode and the manual dir of `download_config`) and
    its examples counted; ``.download_and_prepare()`` then prepares it like any dataset."""
    from catalog.download import resolve_config
    from catalog.interop.tfds.builder_spec import tfds_spec

    store = resolve_data_dir(data_dir)  # any data dir, checked before anything is fetched
    config = resolve_config(download_config, data_dir=store.root, download_dir=download_dir)
    return DatasetBuilder(tfds_spec(name, config), data_dir=store)


def tfds_declared(name: TFDSName, *, data_dir: DataDir | None = None) -> DatasetBuilder:
    """The builder of what is known of `name` offline (features, citation, homepage; no
    splits until it is prepared: `tfds_builder`)."""
    from catalog.interop.tfds.declared import declared_spec

    return DatasetBuilder(declared_spec(name), data_dir=data_dir)
