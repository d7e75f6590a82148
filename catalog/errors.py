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
    ├── WriteError (OSError)              a shard could not be written (full disk): file, space
    ├── NotPreparedError (FileNotFoundError)  a dataset was read before it was prepared
    └── MissingDependencyError (ImportError)  an optional library a reader needs is missing

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
    "SourceFormatError",
    "SpecError",
    "SplitError",
    "WriteError",
]


class CatalogError(Exception):
    """Base class of every error catalog raises on purpose."""

    def __str__(self) -> str:
        # KeyError quotes its message; our messages are sentences, so never quote them.
        return str(self.args[0]) if self.args else ""


class DatasetNotFoundError(CatalogError, KeyError):
    """No registered dataset has that name, and no builder folder is at that path."""


class SpecError(CatalogError, ValueError):
    """A builder spec (builder.yaml, checksums.tsv, registry.yaml) is malformed."""


class SplitError(CatalogError, KeyError):
    """The dataset has no split by that name."""


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


class WriteError(CatalogError, OSError):
    """A prepared file could not be written (a full disk, a file size limit): names the file
    and the space it needs."""


class NotPreparedError(CatalogError, FileNotFoundError):
    """A dataset was read before it was prepared."""


class MissingDependencyError(CatalogError, ImportError):
    """An optional library a source-format reader needs is not installed (names the extra)."""
