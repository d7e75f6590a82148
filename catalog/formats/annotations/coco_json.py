"""COCO: an annotation JSON file (``instances_train2017.json``) and a zip of the JPEGs it names.

The JSON holds ``images`` (``id``, ``file_name``, ``height``, ``width``), ``annotations``
(``id``, ``image_id``, ``category_id``, ``bbox`` = ``[x, y, width, height]`` in pixels,
``area``, ``iscrowd``) and ``categories`` (``id``, ``name``, in file order: the class names).
The test sets' ``image_info_test2017.json`` has no annotations (``annotated: false``). An
example per image, in the order of its id (TFDS's): ``image`` (the JPEG's bytes, read from the
image zip in place: ``<images_folder>/<file_name>``), ``image/filename``, ``image/id`` and
``objects``, its annotations in the order of their id: ``id``, ``area`` (a whole number,
truncated as TFDS's int64 feature casts it), ``bbox`` (TFDS's normalised ``(y / height, x /
width, (y + h) / height, (x + w) / width)``), ``label`` (the category's name) and
``is_crowd``.

The JSON (450 MB for train2017) is parsed once, when the split is first opened, as a stream
(ijson: the optional extra ``catalog[coco]``) into arrays staged in the prepare's scratch
folder, so memory holds numbers, never the parsed document (about 3 GB for train2017 with
Python's json); each shard then reads its images' rows from those (memory-mapped).
"""

from __future__ import annotations

import array
import json
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import MissingDependencyError, SourceFormatError
from catalog.features import ClassLabel, FeaturesDict
from catalog.formats.base import (
    Examples,
    Option,
    Role,
    Source,
    SourceFormat,
    staged,
    through_ranges,
)

__all__ = ["FORMAT"]

_INDEX = "coco-index"
_ARRAYS = (
    "image_id", "height", "width", "name_end", "first_object",
    "object_id", "area", "bbox", "category", "is_crowd",
)  # fmt: skip


def check() -> None:
    """Raise MissingDependencyError unless ijson (the streaming JSON parser) imports."""
    try:
        import ijson  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            "the coco_json format parses COCO's annotation files (450 MB for train2017) as a "
            "stream with ijson, an optional extra: pip install 'catalog[coco]'"
        ) from None


def _items(path: Path | zipfile.Path, prefix: str) -> Iterator[Any]:
    """The items of the top-level list `prefix` (``images``, ...), parsed as a stream."""
    import ijson

    with path.open("rb") as f:
        yield from ijson.items(f, f"{prefix}.item", use_float=True)


def _stage(path: Path | zipfile.Path, annotated: bool, folder: Path) -> None:
    """Parse the JSON into `_ARRAYS` (.npy files), ``names`` and ``categories.json``: one
    streamed pass per list (categories, images, annotations), each image or annotation turned
    into a few numbers at once, so memory holds arrays, never the parsed document."""
    import ijson

    try:
        categories = list(_items(path, "categories"))
        index_of = {c["id"]: i for i, c in enumerate(categories)}
        images = sorted(
            ((i["id"], i["file_name"], i["height"], i["width"]) for i in _items(path, "images")),
            key=lambda image: image[0],
        )
        ids = np.array([image[0] for image in images], np.int64)
        objects: dict[str, array.array[Any]] = {
            k: array.array(t) for k, t in (("id", "q"), ("image", "q"), ("category", "i"),
                                            ("area", "d"), ("crowd", "b"), ("bbox", "d"))
        }  # fmt: skip
        for a in _items(path, "annotations") if annotated else ():
            objects["id"].append(a["id"])
            objects["image"].append(a["image_id"])
            objects["category"].append(index_of[a["category_id"]])
            objects["area"].append(a["area"])
            objects["crowd"].append(bool(a["iscrowd"]))
            objects["bbox"].extend(a["bbox"])
    except (ijson.JSONError, UnicodeDecodeError) as error:
        raise SourceFormatError(f"{path}: not a JSON file ({error})") from None
    except (KeyError, TypeError) as error:
        raise SourceFormatError(f"{path}: an image or annotation without {error}") from None
    if not images:
        raise SourceFormatError(f"{path}: expected a COCO annotation file (its 'images' list)")
    image_of = np.frombuffer(objects["image"], np.int64) if objects["image"] else np.zeros(0, int)
    position = np.searchsorted(ids, image_of).clip(0, len(ids) - 1)
    unknown = np.flatnonzero(ids[position] != image_of)
    if unknown.size:
        raise SourceFormatError(f"{path}: annotation {objects['id'][unknown[0]]} names no image")
    object_ids = np.array(objects["id"], np.int64)
    order = np.lexsort((object_ids, position))  # by image (id order), then annotation id
    names = [image[1].encode() for image in images]
    arrays = {
        "image_id": ids,
        "height": np.array([image[2] for image in images], np.float64),
        "width": np.array([image[3] for image in images], np.float64),
        "name_end": np.cumsum([len(n) for n in names], dtype=np.int64),
        "first_object": np.concatenate(
            [[0], np.cumsum(np.bincount(position, minlength=len(ids)), dtype=np.int64)]
        ),
        "object_id": object_ids[order],
        "area": np.array(objects["area"], np.float64)[order],
        "bbox": np.array(objects["bbox"], np.float64).reshape(-1, 4)[order],
        "category": np.array(objects["category"], np.int32)[order],
        "is_crowd": np.array(objects["crowd"], np.bool_)[order],
    }
    folder.mkdir(parents=True)
    for name, values in arrays.items():
        np.save(folder / f"{name}.npy", values)
    (folder / "names").write_bytes(b"".join(names))
    (folder / "categories.json").write_text(json.dumps([c["name"] for c in categories]))


def _check_names(source: Source, categories: list[str]) -> None:
    """The JSON's categories (file order) must be the ``objects/label`` feature's names."""
    objects = source.features["objects"]
    fields = getattr(objects, "feature", None)
    label = fields["label"] if isinstance(fields, FeaturesDict) and "label" in fields else None
    names = label.names if isinstance(label, ClassLabel) else None
    if names is not None and names != categories:
        first = next(
            (i for i, (a, b) in enumerate(zip(categories, names, strict=False)) if a != b),
            min(len(categories), len(names)),
        )
        raise SourceFormatError(
            f"{source.stream('annotations')} names {len(categories)} categories but the spec's "
            f"objects/label has {len(names)}; first difference at index {first}"
        )


class _Reader:
    """The images of a COCO split by position (`catalog.formats.base.RandomAccess`)."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._zip: zipfile.ZipFile | None = None
        annotations, annotated = source.stream("annotations"), source.options["annotated"]
        folder, self._temp = staged(source, _INDEX, lambda to: _stage(annotations, annotated, to))
        try:
            self._a = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
            self._names = (folder / "names").read_bytes()
            self.categories: list[str] = json.loads((folder / "categories.json").read_text())
            if source.options["annotated"]:
                _check_names(source, self.categories)
        except BaseException:
            self.close()
            raise

    @property
    def length(self) -> int:
        return len(self._a["image_id"])

    def _image(self, name: str) -> bytes:
        images, folder = self._source.file("images"), self._source.options["images_folder"]
        member = f"{folder}/{name}" if folder else name
        if images.is_dir():
            return (images / member).read_bytes()
        if self._zip is None:
            self._zip = zipfile.ZipFile(images)
        try:
            return self._zip.read(member)
        except KeyError:
            raise SourceFormatError(f"{images}: no member {member!r}") from None

    def examples(self, start: int, stop: int) -> Examples:
        a = self._a
        for i in range(start, min(stop, self.length)):
            begin = int(a["name_end"][i - 1]) if i else 0
            name = self._names[begin : int(a["name_end"][i])].decode()
            height, width = float(a["height"][i]), float(a["width"][i])
            first, last = int(a["first_object"][i]), int(a["first_object"][i + 1])
            objects = []
            for j in range(first, last):
                x, y, w, h = (float(v) for v in a["bbox"][j])
                objects.append({
                    "id": int(a["object_id"][j]),
                    "area": int(a["area"][j]),  # truncated, as TFDS's int64 cast does
                    "bbox": (y / height, x / width, (y + h) / height, (x + w) / width),
                    "label": self.categories[int(a["category"][j])],
                    "is_crowd": bool(a["is_crowd"][j]),
                })  # fmt: skip
            example = {
                "image": self._image(name),
                "image/filename": name,
                "image/id": int(a["image_id"][i]),
                "objects": objects,
            }
            yield name, example

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()
            self._zip = None
        if self._temp is not None:
            self._temp.cleanup()
            self._temp = None


#: Every image of the split, in the order of its id (see the module docstring).
examples = through_ranges(_Reader)


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset({"image", "image/filename", "image/id", "objects"}), frozenset()


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    folder = options["images_folder"]
    if folder.startswith("/") or ".." in folder.split("/"):
        return f"images_folder must be a relative path inside the zip, got {folder!r}"
    return None


FORMAT = SourceFormat(
    name="coco_json",
    description="COCO: an annotation JSON and a zip of the JPEGs it names, read in place",
    roles=(Role("annotations", stream=True), Role("images")),
    options={
        "images_folder": Option("str", "", "the folder of the images inside the zip"),
        "annotated": Option("bool", True, "false: image info only (test sets), no objects"),
    },
    features=_features,
    examples=examples,
    validate=_validate,
    check=check,
    random_access=_Reader,
)
