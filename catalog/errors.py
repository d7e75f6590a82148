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
    """Base class of every error catalog raises on purpose: ``except catalog.CatalogError``
    catches them all, and each is also the fitting builtin (see the module docstring).
    Raised by nothing itself: every error catalog raises is one of its subclasses.

    Takes one argument, the whole message: what went wrong (expected vs got), where, and
    what to do.
    ``str(error)`` is the message, never quoted (even for the KeyError ones).

    Attributes:
        summary: the message in one line when the message spans several (a failed download
            lists every source tried), else None.
    """

    #: The message in one line, for an error whose message lists details over several lines
    #: (a failed download: every source tried); None when the message is one line already.
    summary: str | None = None

    def __str__(self) -> str:
        # KeyError quotes its message; our messages are sentences, so never quote them.
        return str(self.args[0]) if self.args else ""


class DatasetNotFoundError(CatalogError, KeyError):
    """No registered dataset has that name, and no builder folder is at that path (a ``KeyError``).

    Raised by `catalog.builder`, `catalog.data_source` and every command given a name; the
    message suggests the closest registered names.

    Takes one argument, the whole message: what went wrong, where, and what to do.
    """


class SpecError(CatalogError, ValueError):
    """A builder spec (builder.yaml, checksums.tsv, registry.yaml) is malformed (a ``ValueError``).

    Raised when a spec is loaded (`catalog.builder`, `catalog prepare`): the message names
    the file and the field.

    Takes one argument, the whole message: what went wrong, where, and what to do.
    """


class SplitError(CatalogError, KeyError, ValueError):
    """A split spec that is malformed or names no split of the dataset (a ``ValueError``, as
    TFDS raises for a bad spec, and a ``KeyError`` for an unknown name).

    Raised by `catalog.data_source`, `DatasetBuilder.as_data_source` and
    `catalog.ReadInstruction` before anything is downloaded; an unknown name suggests the
    closest split.

    Takes one argument, the whole message: the spec, what is wrong with it, and the splits
    there are.
    """


class FeatureError(CatalogError, ValueError):
    """A value does not fit its feature (shape, dtype, range, class name).

    Raised by the features' ``encode_example`` (so by every prepare) and by the readers of
    other people's records (TFDS directories, ``tfrecord`` sources).

    Args:
        reason: what does not fit, expected vs got.
        feature_path: the feature ("label", "objects/label"), when known.
        example: the example ("split 'train', example 17"), when known. The message leads
            with both: ``split 'train', example 17: feature 'label': ...``.
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
    """A source file does not match its format (bad magic, wrong header, short data): a
    ``ValueError``.

    Raised while preparing (or reading a TFDS directory): the message names the file and the
    record or line.

    Takes one argument, the whole message: what went wrong, where, and what to do.
    """


class ChecksumError(CatalogError, ValueError):
    """Downloaded bytes differ from the size or sha256 registered for them (a ``ValueError``).

    Raised by the downloads of `DatasetBuilder.download_and_prepare`: the message names the
    URL, expected vs got, and whether the server sent an HTML page.

    Takes one argument, the whole message: what went wrong, where, and what to do.
    """


class DownloadError(CatalogError, OSError):
    """No URL could deliver a file (an ``OSError``).

    Raised by the downloads of `DatasetBuilder.download_and_prepare` once every URL and
    mirror was tried; `summary` is the one-line form.

    Takes one argument, the whole message: what went wrong, where, and what to do.
    """


class NotPreparedError(CatalogError, FileNotFoundError):
    """A dataset was read before it was prepared (a ``FileNotFoundError``).

    Raised by `DatasetBuilder.as_data_source` and ``data_source(..., download=False)``: the
    message says what an interrupted prepare left, if anything, and the command to run.

    Takes one argument, the whole message: what went wrong, where, and what to do.
    """


class ShardError(CatalogError, OSError):
    """A prepared shard is missing, truncated or corrupt (an ``OSError``).

    Raised by data sources when a shard or a record is not what dataset_info.json says: the
    message names the shard (and record) and the fix (``catalog verify``, ``catalog prepare
    --overwrite``).

    Takes one argument, the whole message: what went wrong, where, and what to do.
    """


class StorageError(CatalogError, OSError):
    """A data or download dir is unusable (a file, read-only), or a write ran out of space (an
    ``OSError``).

    Raised while downloading, preparing or removing: the message names the path (and the
    free space).

    Takes one argument, the whole message: what went wrong, where, and what to do.
    """


class MissingDependencyError(CatalogError, ImportError):
    """An optional library is not installed (an ``ImportError``).

    Raised where a reader, a storage backend or an adapter needs an extra: the message gives
    the ``pip install 'catalog[EXTRA]'`` line.

    Takes one argument, the whole message: what went wrong, where, and what to do.
    """


class PipelineError(CatalogError, RuntimeError):
    """A function given to a pipeline (map, filter, map_batch) or a pipeline worker failed.

    Raised while iterating a `catalog.Pipeline`; the original exception is its
    ``__cause__`` (for process workers, the message carries the worker's traceback).

    Args:
        message: names the example, the function and the original exception.
        index: the source index of the example being processed (None for a whole batch or
            a worker that died); kept as ``.index``.
    """

    def __init__(self, message: str, *, index: int | None = None) -> None:
        self.index = index
        super().__init__(message)
