"""A list file naming one example per line: the image path, its labels and other fields.

Many datasets list each split's examples in a text file (DTD's ``labels/train1.txt`` holds
``banded/banded_0002.jpg``; Oxford-IIIT Pet's ``trainval.txt`` holds ``Abyssinian_100 1 1
1``). Each line (blank lines and lines starting with ``#`` aside) must match the regular
expression ``line``, whose named groups are the line's fields; the files are found from
templates over those fields and the ``roots`` (directories, usually inside an extracted
archive). Options:

- ``line``: the regex of a line (default ``(?P<path>\\S+)``); every named group is a field.
- ``header_lines``: how many lines at the top are no examples (a CSV's header: 1).
- ``skip``: a regex; lines it matches whole are left out (the rows of another split:
  diabetic_retinopathy_detection's ``.*,Private`` rows, its test split, in the validation's
  list). Every other line must match ``line``.
- ``roots``: ``{name: file reference}``: directories the templates use as ``{name}``.
- ``image``: the template of the image's path (``{dtd}/images/{path}``).
- ``class_index_base``: when set, fields filling ClassLabel features are numbers counted from
  it (Oxford-IIIT Pet: 1); otherwise they are class names.
- ``images``: ``{feature: template}`` of more Image features (a segmentation mask).
- ``texts``: ``{feature: template}`` of Text features (``{name}.jpg``).
- ``xml_boxes``: ``{feature: template}`` of BBox features filled from the first ``<object>``
  of a VOC-style XML annotation, ``(0, 0, 0, 0)`` when the file does not exist.
- ``opencv_jpeg`` (with ``max_pixels``, ``jpeg_quality``): store each image decoded by OpenCV,
  shrunk to at most ``max_pixels`` pixels and encoded as JPEG at ``jpeg_quality``
  (`catalog.formats.images.image_files.opencv_jpeg`: diabetic_retinopathy_detection's 1M and 250K).
- ``btgraham_radius``: store each image processed as Ben Graham's retina preprocessing does
  at this eye radius (`catalog.formats.images.btgraham`: diabetic_retinopathy_detection's
  btgraham-300).
- ``reencode_invalid``: a file the image feature refuses as it is (CMYK, damaged, a GIF) is
  decoded and stored losslessly instead of failing (`catalog.formats.images.image_files`); valid
  files keep
  their bytes.

Named groups that are features fill them: a ClassLabel gets the class, a Text the string. The
key is the image path relative to its root.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Text
from catalog.formats.annotations.voc_xml import first_box
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.formats.images.btgraham import btgraham_jpeg
from catalog.formats.images.image_files import opencv_jpeg, stored_or_pixels

__all__ = ["FORMAT", "examples", "fill"]


def fill(template: str, fields: Mapping[str, str], roots: Mapping[str, Path]) -> Path:
    """`template` with ``{root}`` and ``{field}`` filled in, as a path."""
    return Path(template.format_map({**fields, **{k: str(v) for k, v in roots.items()}}))


def examples(source: Source) -> Examples:
    """Yield ``(image path, {"image": path, fields..., more images, boxes})`` per line."""

    listing = source.file("list")
    options = source.options
    line_re = re.compile(options["line"])
    roots: Mapping[str, Path] = options["roots"]
    base = options["class_index_base"]
    features = source.features
    image_feature = features["image"]
    with open(listing, encoding="utf-8") as f:
        lines = f.read().splitlines()
    skip = re.compile(options["skip"]) if options["skip"] is not None else None
    for number, line in enumerate(lines, 1):
        if number <= options["header_lines"] or not line.strip() or line.startswith("#"):
            continue
        if skip is not None and skip.fullmatch(line):
            continue
        found = line_re.fullmatch(line)
        if found is None:
            raise SourceFormatError(
                f"{listing}:{number}: {line!r} does not match options.line {options['line']!r}"
            )
        fields = {k: v for k, v in found.groupdict().items() if v is not None}
        image = fill(options["image"], fields, roots)
        if not image.is_file():
            raise SourceFormatError(f"{listing}:{number}: no image file {image}")
        example: dict[str, Any] = {"image": image}
        if options["btgraham_radius"] is not None:
            example["image"] = btgraham_jpeg(
                image.read_bytes(), str(image), options["btgraham_radius"]
            )
        elif options["opencv_jpeg"]:
            example["image"] = opencv_jpeg(
                image.read_bytes(), str(image), options["max_pixels"], options["jpeg_quality"]
            )
        elif options["reencode_invalid"]:
            example["image"] = stored_or_pixels(image_feature, image, str(image))
        for name, value in fields.items():
            if name not in features:
                continue
            if isinstance(features[name], ClassLabel) and base is not None:
                example[name] = int(value) - base
            else:
                example[name] = value
        for name, template in options["images"].items():
            example[name] = fill(template, fields, roots)
        for name, template in options["texts"].items():
            example[name] = template.format_map(fields)
        for name, template in options["xml_boxes"].items():
            example[name] = first_box(fill(template, fields, roots))
        key = image.name
        for root in roots.values():
            if image.is_relative_to(root):
                key = image.relative_to(root).as_posix()
        yield key, example


def _fields(options: Mapping[str, Any]) -> set[str]:
    try:
        return set(re.compile(options["line"]).groupindex)
    except re.error:
        return set()


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    required = {"image", *options["images"], *options["texts"], *options["xml_boxes"]}
    return frozenset(required), frozenset(_fields(options))


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    try:
        fields = set(re.compile(options["line"]).groupindex)
    except re.error as error:
        return f"line is not a regular expression: {error}"
    try:
        re.compile(options["skip"] or "")
    except re.error as error:
        return f"skip is not a regular expression: {error}"
    if options["header_lines"] < 0:
        return "header_lines must be >= 0"
    processing = [
        name
        for name in ("btgraham_radius", "opencv_jpeg", "reencode_invalid")
        if options[name] not in (None, False)
    ]
    if len(processing) > 1:
        return f"give one of {', '.join(processing)}: each stores the image its own way"
    if (options["max_pixels"], options["jpeg_quality"]) != (None, None) and not options[
        "opencv_jpeg"
    ]:
        return "max_pixels and jpeg_quality need opencv_jpeg"
    radius = options["btgraham_radius"]
    if radius is not None and radius < 1:
        return "btgraham_radius must be a positive number of pixels"
    names = fields | set(options["roots"])
    templates = {"image": options["image"], **options["images"], **options["xml_boxes"]}
    for feature, template in options["texts"].items():
        used = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        if used - fields:
            return f"the template of {feature!r} uses {{{sorted(used - fields)[0]}}}, not a field"
    for feature, template in templates.items():
        used = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        unknown = sorted(used - names)
        if unknown:
            return f"the template of {feature!r} uses {{{unknown[0]}}}, not a field or a root"
    for name in ("image", *options["images"]):
        if not isinstance(features[name], Image):
            return f"feature {name!r} must be an Image, got {features[name]!r}"
    for name in fields & set(features):
        if not isinstance(features[name], (ClassLabel, Text)):
            return f"field {name!r} fills feature {name!r}, which must be a ClassLabel or Text"
    return None


FORMAT = SourceFormat(
    name="image_list",
    description="a list file, one example per line: image path and fields (regex groups)",
    roles=(Role("list"),),
    options={
        "line": Option("str", r"(?P<path>\S+)", "the regex of a line; named groups are fields"),
        "roots": Option("file_map", {}, "directories the templates use by name"),
        "image": Option("str", "{path}", "the template of the image's path"),
        "class_index_base": Option("int", None, "ClassLabel fields are numbers from this"),
        "images": Option("str_map", {}, "more Image features: feature -> path template"),
        "texts": Option("str_map", {}, "Text features: feature -> template"),
        "xml_boxes": Option("str_map", {}, "BBox features from VOC-style XML: feature -> path"),
        "reencode_invalid": Option("bool", False, "re-encode image files the feature refuses"),
        "header_lines": Option(
            "int", 0, "lines at the top that are no examples", counted_at_default=False
        ),
        "skip": Option(
            "str", None, "a regex of lines that are no examples", counted_at_default=False
        ),
        "opencv_jpeg": Option(
            "bool", False, "store OpenCV's JPEG of each image", counted_at_default=False
        ),
        "max_pixels": Option(
            "int", None, "opencv_jpeg: shrink to at most this many pixels", counted_at_default=False
        ),
        "jpeg_quality": Option(
            "int", None, "opencv_jpeg: the JPEG quality (OpenCV's 95)", counted_at_default=False
        ),
        "btgraham_radius": Option(
            "int",
            None,
            "Ben Graham's retina preprocessing at this radius",
            counted_at_default=False,
        ),
    },
    features=_features,
    examples=examples,
    validate=_validate,
)
