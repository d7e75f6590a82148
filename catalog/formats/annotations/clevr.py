"""CLEVR: rendered scenes, their objects (scene JSON) and questions (question JSON).

CLEVR_v1.0 holds ``images/<split>/CLEVR_<split>_<n>.png``, ``scenes/CLEVR_<split>_scenes.json``
(``{"scenes": [{"image_filename", "objects": [{"color", "material", "shape", "size",
"rotation", "3d_coords", "pixel_coords", ...}]}]}``, none for the test split) and
``questions/CLEVR_<split>_questions.json`` (``{"questions": [{"image_filename", "question",
"answer"}]}``, no answers for test). Format ``clevr`` reads role ``images`` (the split's image
folder: every file, in sorted name order), role ``questions``, and option ``scenes``
(``{scenes: file}``; left out for the test split, whose examples then have no objects). As in
the reference catalog, the n-th scene describes the n-th image (each scene's
``image_filename`` is checked to be that image's), and an example holds:

- ``image``: the PNG (CLEVR's are RGBA; the feature's 3 channels drop alpha, re-encoded
  losslessly: `catalog.formats.images.image_files.stored_or_pixels`), ``file_name``: its name;
- ``objects``: per object its ``color``, ``material``, ``shape``, ``size`` (class names),
  ``rotation``, ``3d_coords`` and ``pixel_coords`` (JSON's doubles cast to float32);
- ``question_answer``: the image's questions, each ``question`` and ``answer`` ("" without).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.formats.images.image_files import stored_or_pixels

__all__ = ["FORMAT", "examples"]

_CLASSES = ("color", "material", "shape", "size")
_ATTRIBUTES = ("color", "material", "shape", "size", "rotation", "3d_coords", "pixel_coords")


def _cast(attribute: str, value: Any) -> Any:
    """Class names as they are; numbers as float32 (JSON's doubles, cast as the reference
    catalog's float32 features do)."""
    return value if attribute in _CLASSES else np.asarray(value, np.float32)


def _json(path: Path, key: str) -> list[Any]:
    try:
        with open(path, encoding="utf-8") as f:
            items = json.load(f)[key]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SourceFormatError(f"{path}: not a CLEVR JSON file with {key!r} ({error})") from None
    if not isinstance(items, list):
        raise SourceFormatError(f"{path}: {key!r} is not a list")
    return items


def examples(source: Source) -> Examples:
    """Yield ``(file name, {"image", "file_name", "objects", "question_answer"})`` per image."""
    folder, questions_path = source.file("images"), source.file("questions")
    images = sorted(p for p in folder.iterdir() if p.is_file())
    questions: dict[str, list[dict[str, str]]] = {}
    for q in _json(questions_path, "questions"):
        questions.setdefault(q["image_filename"], []).append(
            {"question": q["question"], "answer": q.get("answer", "")}
        )
    scenes_files = list(source.options["scenes"].values())
    scenes = _json(scenes_files[0], "scenes") if scenes_files else [{"objects": []}] * len(images)
    if len(scenes) != len(images):
        raise SourceFormatError(
            f"{scenes_files[0]}: {len(scenes)} scenes for the {len(images)} images in {folder}"
        )
    image_feature = source.features["image"]
    for image, scene in zip(images, scenes, strict=True):
        named = scene.get("image_filename", image.name)
        if named != image.name:
            raise SourceFormatError(
                f"{scenes_files[0]}: the scene of {image.name} names {named!r}; scenes and "
                "images must be in the same order"
            )
        try:
            objects = [{a: _cast(a, o[a]) for a in _ATTRIBUTES} for o in scene["objects"]]
        except (KeyError, TypeError) as error:
            raise SourceFormatError(
                f"{scenes_files[0]}: an object of {image.name} lacks {error}"
            ) from None
        yield (
            image.name,
            {
                "image": stored_or_pixels(image_feature, image, str(image)),
                "file_name": image.name,
                "objects": objects,
                "question_answer": questions.get(image.name, []),
            },
        )


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if len(options["scenes"]) > 1:
        return "scenes names one file: {scenes: FILE}"
    return None


FORMAT = SourceFormat(
    name="clevr",
    description="CLEVR: an image folder, its scenes' objects and its questions (JSON)",
    roles=(Role("images"), Role("questions")),
    options={"scenes": Option("file_map", {}, "{scenes: the split's scene JSON}, if it has one")},
    features=lambda options: (
        frozenset({"image", "file_name", "objects", "question_answer"}),
        frozenset(),
    ),
    examples=examples,
    validate=_validate,
)
