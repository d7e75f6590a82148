"""A folder per class: ``<root>/<class>/<file>``, every file an example of its folder's class.

The root is a directory, usually inside an extracted zip or tar archive (a split's file
``{download: photos, member: flower_photos}``). Each file in a class directory is given to the
``image`` feature as it is, so a JPEG is stored byte for byte when the feature's encoding is
``jpeg``; its ``label`` is the directory name, which must be one of the label feature's class
names (their order in the spec gives the index, not the alphabet). Files are read one at a
time. The key is ``<class>/<file>``; examples come in order of class directory, then file name.

Option ``skip``: glob patterns, relative to the root (``*`` also matches ``/``), of files that
are not examples, such as ``LICENSE.txt``. Any other file outside a class directory, or a
directory inside one, is an error: a layout the builder did not expect.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "examples"]


def _skipped(relative: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns)


def _entries(folder: Path, prefix: str, skip: Sequence[str]) -> list[tuple[str, Path]]:
    entries = [(f"{prefix}{p.name}", p) for p in sorted(folder.iterdir(), key=lambda p: p.name)]
    return [(relative, p) for relative, p in entries if not _skipped(relative, skip)]


def _files(source: Source) -> list[tuple[str, Path, str]]:
    """``(key, file, class)`` of every example, in order; the layout is checked first."""
    root = source.file("root")
    skip: Sequence[str] = source.options["skip"]
    if not root.is_dir():
        raise SourceFormatError(f"{root}: expected a directory holding one folder per class")
    hint = "; if it is not an example, add a pattern for it to the split's options.skip"
    files = []
    for class_name, folder in _entries(root, "", skip):
        if not folder.is_dir():
            raise SourceFormatError(f"{folder}: a file outside the class directories{hint}")
        for key, file in _entries(folder, f"{class_name}/", skip):
            if not file.is_file():
                raise SourceFormatError(f"{file}: not a file, inside a class directory{hint}")
            files.append((key, file, class_name))
    return files


class _Files:
    """The split's examples by position: the sorted file list, read one file at a time."""

    def __init__(self, source: Source) -> None:
        self._files = _files(source)

    @property
    def length(self) -> int:
        return len(self._files)

    def examples(self, start: int, stop: int) -> Examples:
        for key, file, class_name in self._files[start:stop]:
            yield key, {"image": file, "label": class_name}

    def close(self) -> None:
        pass


def examples(source: Source) -> Examples:
    """Yield ``("<class>/<file>", {"image": path, "label": "<class>"})`` for every file."""
    files = _Files(source)
    return files.examples(0, files.length)


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if not isinstance(features["label"], ClassLabel):
        return f"feature 'label' must be a ClassLabel, got {features['label']!r}"
    return None


FORMAT = SourceFormat(
    name="image_folder",
    description="image files in one folder per class (<root>/<class>/<file>), e.g. in a zip/tar",
    roles=(Role("root"),),
    options={"skip": Option("strs", [], "glob patterns of files under the root to leave out")},
    features=lambda options: (frozenset({"image", "label"}), frozenset()),
    examples=examples,
    validate=_validate,
    random_access=_Files,
)
