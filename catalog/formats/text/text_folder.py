"""Text files in one folder per class: ``<root>/<folder>/<file>``, each file one example.

The root is a directory, usually inside an extracted archive (``{download: reviews, member:
aclImdb/train}``). Option ``folders``: ``{folder: label}``, the folders (relative to the
root) whose files are examples and the label each file gets: a class name of the ``label``
feature, or ``"-1"`` for unlabelled files (the feature needs ``allow_unlabeled``). Without it
every class name of ``label`` is a folder of that class. Anything else under the root is not
read (IMDB's ``urls_*.txt`` and ``.feat`` files).

Each file is read whole (one at a time) as text in option ``encoding`` (default utf-8), its
surrounding whitespace stripped (as TFDS does). The key is ``<folder>/<file>``; examples come
in the order of the folders, then of file names. A folder that is missing, or holds something
other than files, is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "examples"]


def examples(source: Source) -> Examples:
    """Yield ``("<folder>/<file>", {"text": text, "label": label})`` for every file."""
    root, encoding = source.file("root"), source.options["encoding"]
    folders: Mapping[str, str] = source.options["folders"]
    if not folders:
        label = source.features["label"]
        assert isinstance(label, ClassLabel)  # checked when the spec was loaded
        folders = {name: name for name in label.names}
    for folder, label_text in folders.items():
        directory = root / folder
        if not directory.is_dir():
            held = ", ".join(sorted(p.name for p in root.iterdir())[:10]) if root.is_dir() else ""
            raise SourceFormatError(f"{directory}: no such folder; {root} holds {held}")
        for file in sorted(directory.iterdir(), key=lambda p: p.name):
            if not file.is_file():
                raise SourceFormatError(f"{file}: not a file, in a folder of text files")
            try:
                text = file.read_text(encoding).strip()
            except UnicodeDecodeError as error:
                raise SourceFormatError(
                    f"{file}: not {encoding} text at byte {error.start}: {error.reason}"
                ) from None
            yield f"{folder}/{file.name}", {"text": text, "label": label_text}


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if not isinstance(features["label"], ClassLabel):
        return f"feature 'label' must be a ClassLabel, got {features['label']!r}"
    for folder in options["folders"]:
        if not folder or folder.startswith("/") or ".." in folder.split("/"):
            return f"options.folders: {folder!r} is not a relative folder path"
    return None


FORMAT = SourceFormat(
    name="text_folder",
    description="text files in one folder per class (<root>/<folder>/<file>), e.g. in a tar",
    roles=(Role("root"),),
    options={
        "folders": Option("str_map", {}, "folder -> label (default: one folder per class)"),
        "encoding": Option("str", "utf-8", "the files' text encoding"),
    },
    features=lambda options: (frozenset({"text", "label"}), frozenset()),
    examples=examples,
    validate=_validate,
)
