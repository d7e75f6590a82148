"""What a source-format reader declares, and what it is given: `SourceFormat`, `Source`.

A format says which files it reads (its `Role` s), which options a split may give it (its
`Option` s), which features its examples hold, and how to turn the files into examples.
Builder specs name formats; `catalog.spec.load` validates splits against these declarations
and `catalog.prepare.driver` resolves the files and runs the reader.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict

__all__ = [
    "Batch",
    "Batches",
    "Examples",
    "Option",
    "OptionKind",
    "RandomAccess",
    "Role",
    "Source",
    "SourceFile",
    "SourceFormat",
    "running_id",
    "shape_of",
    "staged",
    "through_ranges",
    "whole_numbers",
]

Examples = Iterator[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Batch:
    """Consecutive examples of a split, ``rows`` of them from position `start`: either as
    checked `columns` (feature -> values, as `catalog.features.batch_encode.BatchEncoder`
    takes them) or, where a reader could not check them column by column, as `examples`
    (``(key, example)`` pairs, encoded one by one), then `error`, if reading stopped there
    (raised after those examples are encoded, as reading one example at a time would)."""

    start: int
    rows: int
    columns: Mapping[str, Any] | None = None
    examples: list[tuple[str, dict[str, Any]]] | None = None
    error: Exception | None = None


#: ``batches(source, start, stop)``: examples ``start..stop-1`` of a split in `Batch` es.
Batches = Callable[["Source", int, int], Iterator[Batch]]

#: An option's kind, as a split's ``options`` gives it in builder.yaml:
#: ``str``, ``int``, ``bool``, ``strs`` (a list of strings), ``floats`` (a list of numbers),
#: ``str_map`` (str -> str), ``strs_map`` (str -> a list of strings), ``str_maps``
#: (str -> (str -> str)), ``file_map`` (str -> a file reference, resolved to one path before
#: the reader runs).
OptionKind = Literal[
    "str", "int", "bool", "strs", "floats", "str_map", "strs_map", "str_maps", "file_map"
]


#: A file a reader gets: a path on disk, or (for a role that streams) a member of a zip
#: archive, read in place with ``.open("rb")`` without extracting the archive.
SourceFile = Path | zipfile.Path


class RandomAccess(Protocol):
    """A split's examples by position: what the shard plan reads a unit's range through.

    `length` is the number of examples the files hold, or None when only reading them all
    would tell. ``examples(start, stop)`` yields ``(key, example)`` for positions
    ``start..stop-1`` in source order, the same pairs ``SourceFormat.examples`` yields there,
    without reading (all of) what comes before. `close` frees open files.
    """

    @property
    def length(self) -> int | None: ...

    def examples(self, start: int, stop: int) -> Examples: ...

    def close(self) -> None: ...


def staged(
    source: Source, name: str, write: Callable[[Path], None]
) -> tuple[Path, tempfile.TemporaryDirectory[str] | None]:
    """The folder `name` in the source's scratch folder, filled by ``write(folder)`` the first
    time (an index, staged arrays) and reused after; without a scratch folder, in a temporary
    folder, returned too for the caller to clean up when its reader closes. It is written under
    a partial name and renamed, so concurrent readers of one prepare find it whole or make
    their own; nothing is left behind when `write` fails."""
    temp = None
    if source.scratch is None:
        temp = tempfile.TemporaryDirectory(prefix=f"catalog-{name}-")
        folder = Path(temp.name) / name
    else:
        folder = source.scratch / name
    try:
        if not folder.is_dir():
            folder.parent.mkdir(parents=True, exist_ok=True)
            partial = folder.with_name(f"{name}.partial-{os.getpid()}")
            shutil.rmtree(partial, ignore_errors=True)
            try:
                write(partial)
                try:
                    partial.rename(folder)
                except OSError:  # another process made it first
                    if not folder.is_dir():
                        raise
            finally:
                shutil.rmtree(partial, ignore_errors=True)
    except BaseException:
        if temp is not None:
            temp.cleanup()
        raise
    return folder, temp


def through_ranges(random_access: Callable[[Source], RandomAccess]) -> Callable[[Source], Examples]:
    """`SourceFormat.examples` of a format whose `random_access` reader knows its length:
    every example, read through that reader, which is closed after."""

    def examples(source: Source) -> Examples:
        reader = random_access(source)
        try:
            length = reader.length
            assert length is not None, "through_ranges needs a reader that knows its length"
            yield from reader.examples(0, length)
        finally:
            reader.close()

    return examples


@dataclass(frozen=True)
class Role:
    """A file a format reads. With `many`, a glob may match several files, read in order.
    With `stream`, the reader only opens the file as a stream (``.open("rb")``), so a member
    of a zip download is read in place instead of extracting the zip (EMNIST's gz members)."""

    name: str
    many: bool = False
    stream: bool = False


@dataclass(frozen=True)
class Option:
    """A format option: its kind, its default (used when a split does not give it) and what it
    means."""

    kind: OptionKind
    default: Any
    help: str
    #: False for an option added after datasets were prepared with its format: while it is at
    #: its default it is left out of `BuilderSpec.fingerprint`, so adding it does not make
    #: those prepared copies look foreign (and be prepared again).
    counted_at_default: bool = True


@dataclass(frozen=True)
class Source:
    """What a reader gets for one split: its files by role (in order), its options (file
    references resolved to paths), and the spec's features."""

    split: str
    files: Mapping[str, tuple[SourceFile, ...]]
    options: Mapping[str, Any]
    features: FeaturesDict
    #: A folder a random-access reader may stage files in (decompressed arrays), kept while
    #: the dataset is being prepared; None: stage nothing.
    scratch: Path | None = None

    def file(self, role: str) -> Path:
        """The one file on disk of a role that is not `many`."""
        path = self.files[role][0]
        if not isinstance(path, Path):
            raise TypeError(f"role {role!r} is a zip member ({path}); use Source.stream")
        return path

    def stream(self, role: str) -> SourceFile:
        """The one file of a `stream` role: a path, or a zip member to ``.open("rb")``."""
        return self.files[role][0]

    def paths(self, role: str) -> tuple[Path, ...]:
        """The files on disk of a role (several for a `many` role)."""
        paths = self.files[role]
        if not all(isinstance(p, Path) for p in paths):
            raise TypeError(f"role {role!r} holds zip members; read them with Source.stream")
        return paths  # type: ignore[return-value]


@dataclass(frozen=True)
class SourceFormat:
    """A reader of one source format.

    - ``features(options)`` -> ``(required, optional)`` feature names its examples hold; a
      spec's features must include the required ones and may include the optional ones.
    - ``examples(source)`` yields ``(key, example)`` pairs; the key names the example in errors.
    - ``class_names(source)`` (optional) -> ``{feature: (file, names)}``: class names the source
      files declare, which the prepare step checks against the spec's ClassLabel names.
    - ``validate(options, features)`` (optional) -> what is wrong with a split's options for
      these features, or None; checked when the spec is loaded.
    - ``check()`` (optional) raises MissingDependencyError when a library the reader needs is
      not installed; it runs before anything is downloaded.
    - ``random_access(source)`` (optional) -> a `RandomAccess` reader, so a shard of examples
      ``start..stop-1`` is written without reading everything before it; without it, the
      shard plan reads from the start and skips.
    - ``batches(source, start, stop)`` (optional) -> the examples ``start..stop-1`` in
      `Batch` es, checked column by column (tables: `catalog.formats.tables.table_batches`), which
      a unit encodes in bulk when its features allow (the same records as one by one).
    """

    name: str
    description: str
    roles: tuple[Role, ...]
    features: Callable[[Mapping[str, Any]], tuple[frozenset[str], frozenset[str]]]
    examples: Callable[[Source], Examples]
    options: Mapping[str, Option] = field(default_factory=dict)
    class_names: Callable[[Source], dict[str, tuple[Path, list[str]]]] | None = None
    validate: Callable[[Mapping[str, Any], FeaturesDict], str | None] | None = None
    check: Callable[[], None] | None = None
    random_access: Callable[[Source], RandomAccess] | None = None
    batches: Batches | None = None

    def problem(self, options: Mapping[str, Any], features: FeaturesDict) -> str | None:
        """What is wrong with a split's `options` and the spec's `features`, or None."""
        required, optional = self.features(options)
        missing = sorted(required - set(features))
        extra = sorted(set(features) - required - optional)
        if missing or extra:
            holds = ", ".join(sorted(required))
            if optional:
                holds += f" (and optionally {', '.join(sorted(optional))})"
            problem = (
                f"the spec has no feature {missing[0]!r}"
                if missing
                else f"the spec's feature {extra[0]!r} is not one of them"
            )
            return f"format {self.name!r} gives examples of {holds}; {problem}"
        return self.validate(options, features) if self.validate else None


def running_id(split: str, index: int, digits: int = 5) -> str:
    """The ``id`` of the `index`-th example of a split in source order: ``train_00042``
    (`digits`: the least number of digits, zero-padded).

    >>> running_id("train", 42), running_id("extra", 531130), running_id("test", 4, 6)
    ('train_00042', 'extra_531130', 'test_000004')
    """
    return f"{split}_{index:0{digits}d}"


def shape_of(features: FeaturesDict, name: str, fmt: str) -> tuple[int, ...]:
    """The fully known shape of feature `name`, which a reader of `fmt` needs to reshape."""
    shape = getattr(features[name], "shape", None)
    if shape is None or None in shape:
        raise SourceFormatError(
            f"format {fmt!r} needs feature {name!r} to have a fully known shape, got {shape}"
        )
    return tuple(shape)


def whole_numbers(array: np.ndarray[Any, Any], where: str) -> np.ndarray[Any, Any]:
    """`array` as int64, or SourceFormatError naming the first value that is not a whole
    number (1.7 is never truncated to 1), nor one int64 holds."""
    if array.dtype.kind != "f":
        return array.astype(np.int64)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(array) | (array != np.round(array)) | (np.abs(array) >= 2.0**63)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise SourceFormatError(
            f"{where}: value {array.reshape(-1)[i].item()!r} at index {i} is not a whole number "
            "where an integer (a label, an id) belongs"
        )
    return array.astype(np.int64)
