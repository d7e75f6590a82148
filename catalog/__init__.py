"""catalog: datasets downloaded, checked and prepared into ArrayRecord, read as NumPy.

>>> import catalog
>>> ds = catalog.data_source("fashion_mnist")      # doctest: +SKIP
>>> ds["train"][0]                                 # doctest: +SKIP
{'image': array(..., dtype=uint8), 'label': 9}
"""

from catalog._version import __version__
from catalog.builder import DatasetBuilder, builder, data_source
from catalog.data_source import DataSource
from catalog.errors import (
    CatalogError,
    ChecksumError,
    DatasetNotFoundError,
    DownloadError,
    FeatureError,
    MissingDependencyError,
    NotPreparedError,
    SourceFormatError,
    SpecError,
    SplitError,
    WriteError,
)
from catalog.features import (
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
from catalog.registry import list_datasets
from catalog.splits import even_splits

__all__ = [
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
    "Scalar",
    "Sequence",
    "ShardInfo",
    "SourceFormatError",
    "SpecError",
    "SplitError",
    "SplitInfo",
    "Tensor",
    "Text",
    "WriteError",
    "__version__",
    "builder",
    "data_source",
    "even_splits",
    "list_datasets",
]
