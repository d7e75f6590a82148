"""A list file naming one example per line: the image path, its labels and other fields.

Many datasets list each split's examples in a text file (DTD's ``labels/train1.txt`` holds
``banded/banded_0002.jpg``; Oxford-IIIT Pet's ``trainval.txt`` holds ``Abyssinian_100 1 1
1``). Each line (blank lines and lines starting with ``#`` aside) must match the regular
expression ``line``, whose named groups are the line's fields; the files are found from
templates over those fields and the ``roots`` (directories, usually inside an extracted
archive). Options:

- ``line``: the regex of a line (default ``(?P<path>\\S+)``); every named group is a field.
- ``roots``: ``{name: file reference}``: directories the templates use as ``{name}``.
- ``image``: the template of the image's path (``{dtd}/images/{path}``).
- ``class_index_base``: when set, fields filling ClassLabel features are numbers counted from
  it (Oxford-IIIT Pet: 1); otherwise they are class names.
- ``images``: ``{feature: template}`` of more Image features (a segmentation mask).
- ``texts``: ``{feature: template}`` of Text features (``{name}.jpg``).
- ``xml_boxes``: ``{feature: template}`` of BBox features filled from the first ``<object>``
  of a VOC-style XML annotation, ``(0, 0, 0, 0)`` when the file does not exist.
- ``reencode_invalid``: a file the image feature refuses as it is (CMYK, damaged, a GIF) is
  decoded and stored losslessly instead of failing (`catalog.formats.image_files`); valid files keep
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
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.formats.image_files import stored_or_pixels

__all__ = ["FORMAT", "examples", "fill"]


def fill(template: str, fields: Mapping[str, str], roots: Mapping[str, Path]) -> Path:
    """`template` with ``{root}`` and ``{field}`` filled in, as a path."""
    return Path(template.format_map({**fields, **{k: str(v) for k, v in roots.items()}}))


def examples(source: Source) -> Examples:
    """Yield ``(image path, {"image": path, fields..., more images, boxes})`` per line."""
    from catalog.formats.voc_xml import first_box

    listing = source.file("list")
    options = source.options
    line_re = re.compile(options["line"])
    roots: Mapping[str, Path] = options["roots"]
    base = options["class_index_base"]
    features = source.features
    image_feature = features["image"]
    with open(listing, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
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
        if options["reencode_invalid"]:
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
    },
    features=_features,
    examples=examples,
    validate=_validate,
)
