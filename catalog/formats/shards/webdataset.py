"""WebDataset shards: tar files whose members sharing a key make one example.

A shard holds ``<key>.<extension>`` members (``0001.jpg``, ``0001.cls``, ``0001.txt``;
the key is the path up to the first ``.`` of the base name, the extension the rest, as the
webdataset library splits them), the members of one example next to each other. Option
``fields`` maps features to extensions (``{image: jpg, label: cls}``); each example must hold
every one of them (a missing one is an error naming shard, key and extension), and members
with other extensions are an error unless ``extra: ignore``. Values by feature type: an
Image gets the file's bytes as they are (PNG or JPEG, stored byte for byte), Text the
member's UTF-8 text as it is, an integer Scalar the integer the member's text holds (a
``.cls`` file: ``3`` or ``3\\n``). Shards are read as streams in order, one member at a
time (`catalog.formats.shards.members`); the key of an example is ``<shard name>:<key>``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import Feature, FeaturesDict, Image, Scalar, Text
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.formats.shards.members import walk

__all__ = ["FORMAT", "examples", "samples", "split_name"]


def split_name(path: str) -> tuple[str, str]:
    """``(key, extension)`` of a member path.

    >>> split_name("a/0001.seg.png"), split_name("0002.cls")
    (('a/0001', 'seg.png'), ('0002', 'cls'))
    """
    folder, base = posixpath.split(path)
    stem, _, extension = base.partition(".")
    return posixpath.join(folder, stem), extension


def samples(shard: Path) -> Iterator[tuple[str, dict[str, bytes]]]:
    """``(key, {extension: bytes})`` of each example of a shard, in order; SourceFormatError
    when the members of a key are not next to each other, or one key holds an extension
    twice."""
    key: str | None = None
    held: dict[str, bytes] = {}
    done: set[str] = set()
    for member in walk(shard):
        name, extension = split_name(member.path)
        if name != key:
            if key is not None:
                yield key, held
                done.add(key)
            if name in done:
                raise SourceFormatError(
                    f"{shard}: the members of key {name!r} are not next to each other (at "
                    f"{member.path}); a WebDataset shard keeps an example's files together"
                )
            key, held = name, {}
        if extension in held:
            raise SourceFormatError(f"{shard}: key {name!r} holds .{extension} twice")
        held[extension] = member.read()
    if key is not None:
        yield key, held


def value_of(feature: Feature, data: bytes) -> Any:
    """A member's bytes as `feature` takes them; ValueError saying why they do not fit."""
    if isinstance(feature, Image):
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 text at byte {error.start}") from None
    if isinstance(feature, Text):
        return text
    if isinstance(feature, Scalar) and feature.dtype.kind in "iu":
        try:
            return int(text.strip())
        except ValueError:
            raise ValueError(f"expected an integer, got {text[:40]!r}") from None
    raise ValueError(f"a WebDataset member cannot fill {feature!r}")


def examples(source: Source) -> Examples:
    """Yield ``(shard:key, example)`` for every example of the shards, in order."""
    fields: Mapping[str, str] = source.options["fields"]
    wanted = set(fields.values())
    for shard in source.paths("shards"):
        for key, held in samples(shard):
            extra = sorted(set(held) - wanted)
            if extra and source.options["extra"] == "error":
                raise SourceFormatError(
                    f"{shard}: key {key!r}: a .{extra[0]} member, which no feature takes "
                    f"(fields: {', '.join(sorted(wanted))}); give options.extra: ignore"
                )
            example = {}
            for feature, extension in fields.items():
                if extension not in held:
                    raise SourceFormatError(
                        f"{shard}: key {key!r} has no .{extension} member (feature {feature!r}); "
                        f"it holds {', '.join('.' + e for e in sorted(held))}"
                    )
                try:
                    example[feature] = value_of(source.features[feature], held[extension])
                except ValueError as error:
                    raise SourceFormatError(
                        f"{shard}: {key}.{extension} (feature {feature!r}): {error}"
                    ) from None
            yield f"{shard.name}:{key}", example


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if options["extra"] not in ("error", "ignore"):
        return f"options.extra must be error or ignore, got {options['extra']!r}"
    for name, feature in features.items():
        fits = isinstance(feature, (Image, Text)) or (
            isinstance(feature, Scalar) and feature.dtype.kind in "iu"
        )
        if not fits:
            return f"feature {name!r}: a WebDataset member fills Image, Text or integer features"
    return None


FORMAT = SourceFormat(
    name="webdataset",
    description="WebDataset tar shards: members sharing a key make one example",
    roles=(Role("shards", many=True),),
    options={
        "fields": Option("str_map", {}, "feature -> the extension of its member (jpg, cls)"),
        "extra": Option("str", "error", "error or ignore: members no feature takes"),
    },
    features=lambda options: (frozenset(options["fields"]), frozenset()),
    examples=examples,
    validate=_validate,
)
