"""WebDataset shards -> a spec of one feature per member extension.

The shards are ``.tar`` files (one, a folder of them or a glob; split by name as
`catalog.spec.infer.layout` says, ``train-0000.tar``). The first `InferOptions.sample`
examples of the first shard decide the features, named by extension as the webdataset
library names a sample's fields: ``png``/``jpg``/``jpeg`` members (``seg.png`` too) are
Images (PNG or JPEG bytes stored as they are), members whose text is an integer in every
sampled example (``cls``) are ``Scalar('int64')``, other UTF-8 members (``txt``, ``json``)
are Text holding the member's text exactly. Every example of every shard must hold the same
members (`catalog.formats.shards.webdataset` checks each one).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from catalog.errors import SpecError
from catalog.features import Feature, Image, Scalar, Text
from catalog.formats.shards.members import paths
from catalog.formats.shards.webdataset import samples, split_name
from catalog.spec.infer.common import InferOptions, complete_options, feature_names, make_spec
from catalog.spec.infer.layout import expand, split_files, split_refs
from catalog.spec.model import BuilderSpec, SplitSpec

__all__ = ["infer_shards"]

_IMAGE = re.compile(r"(^|\.)(png|jpe?g)$", re.IGNORECASE)
_INT = re.compile(r"^\s*[+-]?\d+\s*$")


def infer_shards(text: str, options: InferOptions) -> BuilderSpec:
    """The spec of the WebDataset shards `text` names."""
    files, base, pattern = expand(text, [".tar"])
    groups = split_files(files, base, pattern)
    first = files[0]
    held: dict[str, list[bytes]] = {}
    for key, sample in itertools.islice(samples(first), options.sample):
        for extension, data in sample.items():
            if not extension:
                raise SpecError(f"{first}: member {key!r} has no extension; name it <key>.<ext>")
            held.setdefault(extension, []).append(data)
    if not held:
        raise SpecError(f"{first}: no members")
    names = feature_names(sorted(held), str(first))
    features: dict[str, Feature] = {}
    for name, extension in names.items():
        features[name] = _feature(first, extension, held[extension], options.sample)
    downloads, refs = split_refs(groups)
    splits = {
        split: SplitSpec(
            split,
            "webdataset",
            {"shards": refs[split]},
            sum(_count(shard) for shard in group.files),
            complete_options("webdataset", {"fields": names}),
        )
        for split, group in groups.items()
    }
    return make_spec(
        options, text, features, downloads, splits,
        description=f"WebDataset shards of {', '.join(sorted(held))} members",
    )  # fmt: skip


def _feature(shard: Path, extension: str, values: list[bytes], sample: int) -> Feature:
    if _IMAGE.search(extension):
        from catalog.formats.images.image_files import decode_pixels

        channels = 1
        for data in values[:sample]:
            pixels = decode_pixels(data, f"{shard}: a .{extension} member")
            depth = 1 if pixels.ndim == 2 else pixels.shape[2]
            channels = max(channels, 3 if depth == 3 else depth)
        return Image((None, None, channels), encoding="png")
    texts = []
    for data in values:
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise SpecError(
                f"{shard}: .{extension} members are neither images (png, jpg) nor UTF-8 text; "
                "not supported yet"
            ) from None
    if all(_INT.match(t) and -(1 << 63) <= int(t) < (1 << 63) for t in texts):
        return Scalar("int64")
    return Text()


def _count(shard: Path) -> int:
    """How many examples (keys) a shard holds, without reading the members' contents."""
    keys = {split_name(path)[0] for path in paths(shard)}
    return len(keys)
