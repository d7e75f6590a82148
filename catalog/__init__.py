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
    from catalog.api.builder import DatasetBuilder
    from catalog.api.exchange import croissant_metadata, export_dataset, import_dataset
    from catalog.api.files import prepare_files
    from catalog.api.manage import list_prepared, remove, verify
    from catalog.api.one_call import data_source
    from catalog.api.resolve import builder
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
    from catalog.info.dataset_info import DatasetInfo, ShardInfo, SplitInfo
    from catalog.info.splits import ReadInstruction, even_splits, split_for_jax_process
    from catalog.interop.tfds.directory import open_tfds
    from catalog.loader import Pipeline, PipelineIterator, mix, pipeline
    from catalog.present.show_dataset import show_dataset
    from catalog.present.site.build import build_site
    from catalog.read.data_source import DataSource
    from catalog.spec.registry import list_datasets

#: Where each name that is imported on first use is defined.
_LAZY = {
    "DatasetBuilder": "catalog.api.builder",
    "builder": "catalog.api.resolve",
    "data_source": "catalog.api.one_call",
    "DataSource": "catalog.read.data_source",
    "prepare_files": "catalog.api.files",
    **dict.fromkeys(
        ["croissant_metadata", "export_dataset", "import_dataset"], "catalog.api.exchange"
    ),
    "show_dataset": "catalog.present.show_dataset",
    "build_site": "catalog.present.site.build",
    **dict.fromkeys(["list_prepared", "remove", "verify"], "catalog.api.manage"),
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
    **dict.fromkeys(["DatasetInfo", "ShardInfo", "SplitInfo"], "catalog.info.dataset_info"),
    **dict.fromkeys(["Pipeline", "PipelineIterator", "mix", "pipeline"], "catalog.loader"),
    "list_datasets": "catalog.spec.registry",
    **dict.fromkeys(
        ["ReadInstruction", "even_splits", "split_for_jax_process"], "catalog.info.splits"
    ),
    "open_tfds": "catalog.interop.tfds.directory",
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
    "ReadInstruction",
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
    "build_site",
    "builder",
    "croissant_metadata",
    "data_source",
    "even_splits",
    "export_dataset",
    "import_dataset",
    "list_datasets",
    "list_prepared",
    "mix",
    "open_tfds",
    "pipeline",
    "prepare_files",
    "remove",
    "show_dataset",
    "split_for_jax_process",
    "verify",
]
