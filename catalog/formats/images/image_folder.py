"""Image files labelled by their path: a folder per class, in a directory or an archive.

The root is a directory (usually inside an extracted archive: ``{download: photos, member:
flower_photos}``), or a zip or tar archive read as a stream without extracting it (the
download itself, or an archive inside another one); see `catalog.formats.shards.members`. Each file
is given to the ``image`` feature as it is, so a JPEG or PNG is stored byte for byte,
whichever of the two the feature's encoding names: a folder of photos may mix them, and each
file decodes by its own signature to its own pixels. Its ``label`` must be one of the label
feature's class names (their order in the spec gives the index, not the alphabet). Files are
read one at a time.
The key is the file's path under the root; directories and zips are read in sorted path
order, tar archives in archive order.

Without ``match`` the layout is strict, ``<root>/<class>/<file>``: any other file is an error
(a layout the builder did not expect) unless a ``skip`` pattern names it. Options:

- ``skip``: glob patterns, relative to the root (``*`` also matches ``/``), of non-examples.
- ``match``: a regular expression the whole relative path must match, with a group named
  ``label`` giving the class (``rps/(?P<label>rock|paper|scissors)/[\\w-]*\\.png``); files that
  do not match are left out silently, at any depth.
- ``lowercase_label``: lower-case the label (``BACKGROUND_Google`` -> ``background_google``).
- ``labelled: false``: images without classes (Hugging Face's imagefolder with no class
  folders): no ``label`` feature, or one that takes -1 (``allow_unlabeled``), which every
  image then gets (TFDS's "no label": diabetic_retinopathy_detection's sample split); without
  ``match`` every file lies directly in the root, and a ``match`` needs no ``label`` group.
- ``require_header``: keep a file only if these bytes appear within its first
  ``header_size`` (512) bytes (cats_vs_dogs keeps a JPEG only if it holds ``JFIF``);
  ``expected_skipped``: how many files the check must leave out, else an error.
- ``text_features``: ``{feature: path | name | <group>}``, Text features holding the file's
  path under the root, its base name, or what a named group of ``match`` matched
  (ImageNet-Sketch's ``n01440764/sketch_0.JPEG`` inside ``sketch/``).
- ``index_labels``: the label is the class's index, written as a number (ImageNetV2's folders
  ``0`` ... ``999``), not its name.
- ``listed``: ``{group: list file}``: keep a file only if its ``match`` group is a line of
  the list file (SUN397's split lists name ``/a/abbey/sun_aaaulhwrhqgejnyt.jpg``).
- ``opencv_jpeg``: store each file as TFDS's SUN397 builder does: decoded by OpenCV, shrunk
  to at most ``max_pixels`` pixels, encoded as JPEG at ``jpeg_quality`` (OpenCV's default 95
  when not given); see `catalog.formats.images.image_files.opencv_jpeg`.
- ``btgraham_radius``: store each file processed as Ben Graham's retina preprocessing does at
  this eye radius (`catalog.formats.images.btgraham`: diabetic_retinopathy_detection's
  btgraham-300).
- ``decode``: decode each file with Pillow and give the pixels to the image feature (for
  formats it does not store, such as TIFF; the feature encodes them, PNG by default).
- ``reencode_invalid``: a file the image feature refuses as it is (an RGBA PNG for an RGB
  feature, a damaged JPEG whose pixels still decode, a GIF, BMP or WebP file) is decoded and
  re-encoded losslessly instead of failing (`catalog.formats.images.image_files`); valid files keep
  their bytes.
- ``metadata``: a ``metadata.csv`` or ``metadata.jsonl`` file in the root (a directory), one
  row per image, whose ``file_name`` is the image's path under the root; ``metadata_columns``
  (``{feature: column}``) gives each example those columns of its row
  (`catalog.formats.tables.folder_metadata`). An image without a row, or a row without an image, is
  an error.
- ``sample_per_class`` N, ``sample_seed`` S, ``sample_part`` (``chosen`` or ``rest``): split
  each class at random, as Caltech 101's reference builder does: with
  ``numpy.random.RandomState(S)``, for each class in sorted order, ``choice(files, N,
  replace=False)`` of its files (sorted paths) are ``chosen``, the others the ``rest``. The
  archive is read twice: once for the names, once for the files kept.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Text
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.formats.images.btgraham import btgraham_jpeg
from catalog.formats.images.image_files import decode_pixels, opencv_jpeg, stored_or_pixels
from catalog.formats.shards.members import Member, paths, walk
from catalog.formats.tables.folder_metadata import load_metadata, unused_rows

__all__ = ["FORMAT", "examples"]

_HINT = "; if it is not an example, add a pattern for it to the split's options.skip"
_TEXT_VALUES = ("path", "name")
_SAMPLE_PARTS = ("chosen", "rest")


def _skipped(relative: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns)


def _label(member: Member, source: Source, match: re.Pattern[str] | None) -> str | None:
    """The member's class name, or None when it is not an example."""
    root = source.stream("root")
    labelled = source.options["labelled"]
    if match is None:
        parts = member.path.split("/")
        if not labelled:
            if len(parts) > 1:
                raise SourceFormatError(
                    f"{root}/{parts[0]}: a folder in a folder of unlabelled images (files lie "
                    f"directly in it){_HINT}"
                )
            return ""
        if len(parts) == 1:
            raise SourceFormatError(
                f"{root}/{member.path}: a file outside the class directories{_HINT}"
            )
        if len(parts) > 2:
            inner = "/".join(parts[:2])
            raise SourceFormatError(f"{root}/{inner}: not a file, inside a class directory{_HINT}")
        return parts[0]
    found = match.fullmatch(member.path)
    if found is None:
        return None
    return found.group("label") if labelled else ""


def _sampled(source: Source, match: re.Pattern[str] | None) -> set[str]:
    """The paths `sample_per_class` chooses (see the module docstring)."""
    import numpy as np

    options = source.options
    classes: dict[str, list[str]] = {}
    for path in paths(source.stream("root")):
        if _skipped(path, options["skip"]):
            continue
        label = _label(Member(path, bytes), source, match)
        if label is not None:
            classes.setdefault(label, []).append(path)
    rng = np.random.RandomState(options["sample_seed"])
    chosen: set[str] = set()
    count = options["sample_per_class"]
    for label in sorted(classes):
        files = sorted(classes[label])
        if len(files) < count:
            raise SourceFormatError(
                f"{source.stream('root')}: class {label!r} has {len(files)} files, fewer than "
                f"options.sample_per_class ({count})"
            )
        chosen.update(str(f) for f in rng.choice(files, count, replace=False))
    return chosen


def examples(source: Source) -> Examples:
    """Yield ``(path, {"image": file or bytes, "label": class name, text features...})``."""
    root = source.stream("root")
    options = source.options
    skip: Sequence[str] = options["skip"]
    match = re.compile(options["match"]) if options["match"] is not None else None
    header: str | None = options["require_header"]
    texts: Mapping[str, str] = options["text_features"]
    if match is None and not root.is_dir():
        raise SourceFormatError(
            f"{root}: expected a directory holding one folder per class (or give options.match "
            "to read an archive)"
        )
    sample = None if options["sample_per_class"] is None else _sampled(source, match)
    keep_chosen = options["sample_part"] == "chosen"
    skipped = 0
    rows, seen = None, set()
    if options["metadata"] is not None:
        if not isinstance(root, Path):
            raise SourceFormatError(f"{root}: options.metadata needs a directory; extract it")
        rows = load_metadata(
            root / options["metadata"], options["metadata_columns"], source.features
        )
    listed = {group: _lines(path) for group, path in options["listed"].items()}
    for member in walk(root):
        if _skipped(member.path, skip):
            continue
        if sample is not None and (member.path in sample) != keep_chosen:
            continue
        label = _label(member, source, match)
        if label is None:
            continue
        found = match.fullmatch(member.path) if match is not None else None
        groups = found.groupdict() if found is not None else {}
        if any(groups.get(group) not in lines for group, lines in listed.items()):
            continue
        image: Any = member.file if member.file is not None else member.read()
        if header is not None:
            data = member.read() if member.file is not None else image
            if header.encode() not in data[: options["header_size"]]:
                skipped += 1
                continue
        where = f"{root}/{member.path}"
        if options["btgraham_radius"] is not None:
            image = btgraham_jpeg(member.read(), where, options["btgraham_radius"])
        elif options["opencv_jpeg"]:
            image = opencv_jpeg(
                member.read(), where, options["max_pixels"], options["jpeg_quality"]
            )
        elif options["decode"]:
            image = decode_pixels(member.read(), where)
        elif options["reencode_invalid"]:
            image = stored_or_pixels(source.features["image"], image, where)
        example = {"image": image}
        if not options["labelled"] and "label" in source.features:
            example["label"] = -1  # an unlabelled split of a labelled dataset
        if options["labelled"]:
            example["label"] = label.lower() if options["lowercase_label"] else label
            if options["index_labels"]:
                example["label"] = _index_label(label, where)
        for feature, what in texts.items():
            example[feature] = (
                member.path if what == "path" else member.name if what == "name" else groups[what]
            )
        if rows is not None:
            if member.path not in rows:
                raise SourceFormatError(
                    f"{where}: no row for this file in {options['metadata']} (file_name "
                    f"{member.path!r})"
                )
            seen.add(member.path)
            example.update(rows[member.path])
        yield member.path, example
    if rows is not None:
        unused_rows(root / options["metadata"], rows, seen)
    expected = options["expected_skipped"]
    if expected is not None and skipped != expected:
        raise SourceFormatError(
            f"{root}: {skipped} files lack {header!r} in their first {options['header_size']} "
            f"bytes, but the split's options.expected_skipped says {expected}"
        )


def _index_label(label: str, where: str) -> int:
    """A label that is a class index (``index_labels``)."""
    if not label.isdigit():
        raise SourceFormatError(f"{where}: label {label!r} is not a class index (index_labels)")
    return int(label)


def _lines(path: Path) -> frozenset[str]:
    with open(path, encoding="utf-8") as f:
        return frozenset(line.strip() for line in f if line.strip())


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    labels = ["label"] if options["labelled"] else []
    given = {"image", *labels, *options["text_features"], *options["metadata_columns"]}
    return frozenset(given), frozenset() if options["labelled"] else frozenset({"label"})


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    labelled = options["labelled"]
    if labelled and not isinstance(features["label"], ClassLabel):
        return f"feature 'label' must be a ClassLabel, got {features['label']!r}"
    unlabelled = features["label"] if not labelled and "label" in features else None
    if unlabelled is not None and not (
        isinstance(unlabelled, ClassLabel) and unlabelled.allow_unlabeled
    ):
        return "labelled: false gives feature 'label' -1: it must be a ClassLabel allow_unlabeled"
    if not labelled and (options["sample_per_class"] is not None or options["lowercase_label"]):
        return "sample_per_class and lowercase_label need labelled images"
    groups: set[str] = set()
    if options["match"] is not None:
        try:
            pattern = re.compile(options["match"])
        except re.error as error:
            return f"match is not a regular expression: {error}"
        if labelled and "label" not in pattern.groupindex:
            return "match needs a group named label: (?P<label>...)"
        groups = set(pattern.groupindex)
    for group in options["listed"]:
        if group not in groups:
            return f"listed.{group}: not a named group of match"
    for feature, what in options["text_features"].items():
        if what not in _TEXT_VALUES and what not in groups:
            return (
                f"text_features.{feature}: expected one of {', '.join(_TEXT_VALUES)} or a named "
                f"group of match, got {what!r}"
            )
        if not isinstance(features[feature], Text):
            return f"text_features.{feature}: feature {feature!r} must be Text"
    if options["metadata_columns"] and options["metadata"] is None:
        return "metadata_columns needs metadata (the metadata file's name)"
    if options["sample_part"] not in _SAMPLE_PARTS:
        return f"sample_part must be one of {', '.join(_SAMPLE_PARTS)}"
    if options["sample_per_class"] is not None and options["sample_per_class"] < 1:
        return "sample_per_class must be a positive int"
    if options["btgraham_radius"] is not None and (
        options["btgraham_radius"] < 1 or options["opencv_jpeg"] or options["decode"]
    ):
        return "btgraham_radius: a positive radius, without opencv_jpeg or decode"
    if options["max_pixels"] is not None and not options["opencv_jpeg"]:
        return "max_pixels needs opencv_jpeg"
    if options["expected_skipped"] is not None and options["require_header"] is None:
        return "expected_skipped needs require_header"
    return None


FORMAT = SourceFormat(
    name="image_folder",
    description="image files labelled by their folder (<root>/<class>/<file>), in a directory "
    "or streamed from a zip/tar",
    roles=(Role("root", stream=True),),
    options={
        "skip": Option("strs", [], "glob patterns of files under the root to leave out"),
        "match": Option("str", None, "a regex every example's path matches, group 'label'"),
        "lowercase_label": Option("bool", False, "lower-case the class name"),
        "labelled": Option(
            "bool", True, "false: images without classes, no label", counted_at_default=False
        ),
        "require_header": Option("str", None, "bytes a file's head must hold, else skipped"),
        "header_size": Option("int", 512, "how many leading bytes require_header looks at"),
        "expected_skipped": Option("int", None, "how many files require_header must skip"),
        "text_features": Option("str_map", {}, "Text feature -> path | name | a match group"),
        "index_labels": Option(
            "bool", False, "the label is the class index", counted_at_default=False
        ),
        "decode": Option("bool", False, "decode files with Pillow, store the pixels"),
        "reencode_invalid": Option("bool", False, "re-encode image files the feature refuses"),
        "metadata": Option(
            "str", None, "metadata.csv/.jsonl in the root: a row per file", counted_at_default=False
        ),
        "metadata_columns": Option(
            "str_map", {}, "feature -> a column of the metadata file", counted_at_default=False
        ),
        "sample_per_class": Option("int", None, "split each class at random: N files chosen"),
        "sample_seed": Option("int", 0, "the seed of numpy.random.RandomState for sampling"),
        "sample_part": Option("str", "chosen", "chosen: the sampled files; rest: the others"),
        "listed": Option(
            "file_map",
            {},
            "match group -> a list file: keep listed files",
            counted_at_default=False,
        ),
        "btgraham_radius": Option(
            "int", None, "Ben Graham's retina processing at this radius", counted_at_default=False
        ),
        "opencv_jpeg": Option(
            "bool",
            False,
            "decode with OpenCV, store as JPEG (TFDS's SUN397)",
            counted_at_default=False,
        ),
        "max_pixels": Option(
            "int", None, "opencv_jpeg: shrink to at most this many pixels", counted_at_default=False
        ),
        "jpeg_quality": Option(
            "int", None, "opencv_jpeg: the JPEG quality (OpenCV's 95)", counted_at_default=False
        ),
    },
    features=_features,
    examples=examples,
    validate=_validate,
)
