"""catalog: datasets downloaded, checked and prepared into ArrayRecord, read as NumPy.

>>> import catalog
>>> ds = catalog.data_source("fashion_mnist")      # doctest: +SKIP
>>> ds["train"][0]                                 # doctest: +SKIP
{'image': array(..., dtype=uint8), 'label': 9}

``import catalog`` loads only the version and the errors; every other name below is imported
from its module the first time it is used (PEP 562), so a script or a CLI command that needs
one corner does not pay for all of them (NumPy, array_record, the features, the loader).
"""

import importlib as _importlib
import sys as _sys
import types as _types
import typing as _typing

from catalog._version import __version__
from catalog.errors import (
    CatalogError,
    ChecksumError,
    DatasetNotFoundError,
    DownloadError,
    FeatureError,
    MissingDependencyError,
    NotPreparedError,
    PipelineError,
    ShardError,
    SourceFormatError,
    SpecError,
    SplitError,
    StorageError,
)

if _typing.TYPE_CHECKING:  # what type checkers and editors see; at run time, `__getattr__` below
    from catalog.builder import DatasetBuilder, builder, data_source
    from catalog.data_source import DataSource
    from catalog.features import (
        Audio,
        BBox,
        ClassLabel,
        Feature,
        FeaturesDict,
        Image,
        Scalar,
        Sequence,
        Tensor,
        Text,
    )
    from catalog.info import DatasetInfo, ShardInfo, SplitInfo
    from catalog.loader import Pipeline, PipelineIterator, mix, pipeline
    from catalog.registry import list_datasets
    from catalog.splits import even_splits
    from catalog.tfds.directory import open_tfds

#: Where each name that is imported on first use is defined.
_LAZY = {
    **dict.fromkeys(["DatasetBuilder", "builder", "data_source"], "catalog.builder"),
    "DataSource": "catalog.data_source",
    **dict.fromkeys(
        [
            "Audio",
            "BBox",
            "ClassLabel",
            "Feature",
            "FeaturesDict",
            "Image",
            "Scalar",
            "Sequence",
            "Tensor",
            "Text",
        ],
        "catalog.features",
    ),
    **dict.fromkeys(["DatasetInfo", "ShardInfo", "SplitInfo"], "catalog.info"),
    **dict.fromkeys(["Pipeline", "PipelineIterator", "mix", "pipeline"], "catalog.loader"),
    "list_datasets": "catalog.registry",
    "even_splits": "catalog.splits",
    "open_tfds": "catalog.tfds.directory",
}


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'catalog' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


class _Package(_types.ModuleType):
    """`catalog.builder` and `catalog.data_source` name both a function and the module that
    defines it. Importing a submodule sets it as an attribute of its package, which would
    hide the function from then on; the functions keep their names instead (as when they were
    imported eagerly: the modules stay reachable by ``from catalog.builder import ...``)."""

    def __setattr__(self, name: str, value: _typing.Any) -> None:
        if name in _LAZY and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


__all__ = [
    "Audio",
    "BBox",
    "CatalogError",
    "ChecksumError",
    "ClassLabel",
    "DataSource",
    "DatasetBuilder",
    "DatasetInfo",
    "DatasetNotFoundError",
    "DownloadError",
    "Feature",
    "FeatureError",
    "FeaturesDict",
    "Image",
    "MissingDependencyError",
    "NotPreparedError",
    "Pipeline",
    "PipelineError",
    "PipelineIterator",
    "Scalar",
    "Sequence",
    "ShardError",
    "ShardInfo",
    "SourceFormatError",
    "SpecError",
    "SplitError",
    "SplitInfo",
    "StorageError",
    "Tensor",
    "Text",
    "__version__",
    "builder",
    "data_source",
    "even_splits",
    "list_datasets",
    "mix",
    "open_tfds",
    "pipeline",
]
