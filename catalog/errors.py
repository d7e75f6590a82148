"""The errors catalog raises, all rooted in :class:`CatalogError` and a fitting builtin.

::

    CatalogError (Exception)
    ├── DatasetNotFoundError (KeyError)   no dataset by that name or path
    ├── SpecError (ValueError)            a builder spec is malformed: file and field
    ├── SplitError (KeyError)             no such split in a dataset
    ├── FeatureError (ValueError)         a value does not fit its feature: feature and example
    ├── SourceFormatError (ValueError)    a source file is not what its format promises
    ├── ChecksumError (ValueError)        downloaded bytes differ from the registered size/sha256
    ├── DownloadError (OSError)           no URL could deliver a file
    ├── NotPreparedError (FileNotFoundError)  a dataset was read before it was prepared
    ├── ShardError (OSError)              a prepared shard is missing, truncated or corrupt
    ├── StorageError (OSError)            a directory is unusable, or writing ran out of space
    ├── MissingDependencyError (ImportError)  an optional library a reader needs is missing
    └── PipelineError (RuntimeError)      a pipeline function or worker failed: example index

Every message says what went wrong (expected vs got), where (URL, path, field) and what to do.
"""

from __future__ import annotations

__all__ = [
    "CatalogError",
    "ChecksumError",
    "DatasetNotFoundError",
    "DownloadError",
    "FeatureError",
    "MissingDependencyError",
    "NotPreparedError",
    "PipelineError",
    "ShardError",
    "SourceFormatError",
    "SpecError",
    "SplitError",
    "StorageError",
]


class CatalogError(Exception):
    """Base class of every error catalog raises on purpose."""

    #: The message in one line, for an error whose message lists details over several lines
    #: (a failed download: every source tried); None when the message is one line already.
    summary: str | None = None

    def __str__(self) -> str:
        # KeyError quotes its message; our messages are sentences, so never quote them.
        return str(self.args[0]) if self.args else ""


class DatasetNotFoundError(CatalogError, KeyError):
    """No registered dataset has that name, and no builder folder is at that path."""


class SpecError(CatalogError, ValueError):
    """A builder spec (builder.yaml, checksums.tsv, registry.yaml) is malformed."""


class SplitError(CatalogError, KeyError, ValueError):
    """A split spec that is malformed or names no split of the dataset (a ``ValueError``, as
    TFDS raises for a bad spec, and a ``KeyError`` for an unknown name)."""


class FeatureError(CatalogError, ValueError):
    """A value does not fit its feature (shape, dtype, range, class name).

    `feature_path` names the feature ("label", "objects/label") and `example` the example
    ("split 'train', example 17"), when known; the message leads with both.
    """

    def __init__(self, reason: str, *, feature_path: str = "", example: str = "") -> None:
        self.reason = reason
        self.feature_path = feature_path
        self.example = example
        where = [example] if example else []
        if feature_path:
            where.append(f"feature {feature_path!r}")
        super().__init__(": ".join([*where, reason]))


class SourceFormatError(CatalogError, ValueError):
    """A source file does not match its format (bad magic, wrong header, short data)."""


class ChecksumError(CatalogError, ValueError):
    """Downloaded bytes differ from the size or sha256 registered for them."""


class DownloadError(CatalogError, OSError):
    """No URL could deliver a file."""


class NotPreparedError(CatalogError, FileNotFoundError):
    """A dataset was read before it was prepared."""


class ShardError(CatalogError, OSError):
    """A prepared shard is missing, truncated or corrupt (names the shard and the fix)."""


class StorageError(CatalogError, OSError):
    """A data or download dir is unusable (a file, read-only), or a write ran out of space."""


class MissingDependencyError(CatalogError, ImportError):
    """An optional library a source-format reader needs is not installed (names the extra)."""


class PipelineError(CatalogError, RuntimeError):
    """A function given to a pipeline (map, filter, map_batch) or a pipeline worker failed.

    `index` is the source index of the example being processed (None for a whole batch or a
    worker that died); the message names it, the function and the original exception, and
    for process workers carries the worker's original traceback.
    """

    def __init__(self, message: str, *, index: int | None = None) -> None:
        self.index = index
        super().__init__(message)
