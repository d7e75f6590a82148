"""COCO: an annotation JSON file (``instances_train2017.json``) and a zip of the JPEGs it names.

The JSON holds ``images`` (``id``, ``file_name``, ``height``, ``width``), ``annotations``
(``id``, ``image_id``, ``category_id``, ``bbox`` = ``[x, y, width, height]`` in pixels,
``area``, ``iscrowd``) and ``categories`` (``id``, ``name``, in file order: the class names).
The test sets' ``image_info_test2017.json`` has no annotations (``annotated: false``). An
example per image, in the order of its id (TFDS's): ``image`` (the JPEG's bytes, read from the
image zip in place: ``<images_folder>/<file_name>``), ``filename``, ``id`` and ``objects``, its
annotations in the order of their id: ``id``, ``area`` (a whole number, truncated as TFDS's
int64 feature casts it), ``bbox`` (TFDS's normalised ``(y / height, x / width, (y + h) /
height, (x + w) / width)``), ``label`` (the category's name) and ``is_crowd``.

The JSON (450 MB for train2017) is parsed once, when the split is first opened, into arrays
staged in the prepare's scratch folder; each shard then reads its images' rows from those
(memory-mapped), so N workers do not each hold the parsed JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT"]

_INDEX = "coco-index"
_ARRAYS = (
    "image_id", "height", "width", "name_end", "first_object",
    "object_id", "area", "bbox", "category", "is_crowd",
)  # fmt: skip


def _load(path: Path | zipfile.Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            data = json.load(f)
    except (ValueError, UnicodeDecodeError) as error:
        raise SourceFormatError(f"{path}: not a JSON file ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise SourceFormatError(f"{path}: expected a COCO annotation file (a dict with 'images')")
    return data


def _stage(path: Path | zipfile.Path, annotated: bool, folder: Path) -> None:
    """Parse the JSON into `_ARRAYS` (.npy files), ``names`` and ``categories.json``."""
    data = _load(path)
    categories = data.get("categories", [])
    index_of = {c["id"]: i for i, c in enumerate(categories)}
    images = sorted(data["images"], key=lambda image: image["id"])
    by_image: dict[int, list[dict[str, Any]]] = {image["id"]: [] for image in images}
    if annotated:
        if not isinstance(data.get("annotations"), list):
            raise SourceFormatError(f"{path}: no 'annotations' list (options.annotated is true)")
        for a in data["annotations"]:
            if a["image_id"] not in by_image:
                raise SourceFormatError(f"{path}: annotation {a['id']} names no image")
            by_image[a["image_id"]].append(a)
    objects = [a for image in images for a in sorted(by_image[image["id"]], key=lambda a: a["id"])]
    names = [image["file_name"].encode() for image in images]
    counts = [len(by_image[image["id"]]) for image in images]
    try:
        arrays = {
            "image_id": np.array([image["id"] for image in images], np.int64),
            "height": np.array([image["height"] for image in images], np.float64),
            "width": np.array([image["width"] for image in images], np.float64),
            "name_end": np.cumsum([len(n) for n in names], dtype=np.int64),
            "first_object": np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]),
            "object_id": np.array([a["id"] for a in objects], np.int64),
            "area": np.array([a["area"] for a in objects], np.float64),
            "bbox": np.array([a["bbox"] for a in objects], np.float64).reshape(-1, 4),
            "category": np.array([index_of[a["category_id"]] for a in objects], np.int32),
            "is_crowd": np.array([bool(a["iscrowd"]) for a in objects], np.bool_),
        }
    except KeyError as error:
        raise SourceFormatError(f"{path}: an image or annotation without {error}") from None
    folder.mkdir(parents=True)
    for name, array in arrays.items():
        np.save(folder / f"{name}.npy", array)
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
        self._temp: tempfile.TemporaryDirectory[str] | None = None
        self._zip: zipfile.ZipFile | None = None
        if source.scratch is None:
            self._temp = tempfile.TemporaryDirectory(prefix="catalog-coco-")
            folder = Path(self._temp.name) / _INDEX
        else:
            folder = source.scratch / _INDEX
        try:
            if not folder.is_dir():
                folder.parent.mkdir(parents=True, exist_ok=True)
                partial = folder.with_name(f"{_INDEX}.partial-{os.getpid()}")
                shutil.rmtree(partial, ignore_errors=True)
                try:
                    _stage(source.stream("annotations"), source.options["annotated"], partial)
                    try:
                        partial.rename(folder)
                    except OSError:  # another process staged it first
                        if not folder.is_dir():
                            raise
                finally:
                    shutil.rmtree(partial, ignore_errors=True)
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
                "filename": name,
                "id": int(a["image_id"][i]),
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


def examples(source: Source) -> Examples:
    """Every image of the split, in the order of its id (see the module docstring)."""
    reader = _Reader(source)
    try:
        yield from reader.examples(0, reader.length)
    finally:
        reader.close()


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset({"image", "filename", "id", "objects"}), frozenset()


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
    random_access=_Reader,
)
