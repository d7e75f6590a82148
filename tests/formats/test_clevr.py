"""The clevr source format on its own: images in sorted order matched to scenes by position
(each scene naming its image), questions grouped by image; mismatches are named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.errors import SourceFormatError
from catalog.formats import FORMATS, Source
from catalog.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[2]
OBJECT = {"color": "red", "material": "metal", "shape": "cube", "size": "large",
          "rotation": 0.1, "3d_coords": [0.1, 0.2, 0.3], "pixel_coords": [1, 2, 3.5]}  # fmt: skip


def source(tmp_path: Path, scenes: list[dict[str, Any]] | None) -> Source:
    from PIL import Image

    images = tmp_path / "images"
    images.mkdir()
    for name in ("b.png", "a.png"):
        Image.new("RGBA", (4, 3), (10, 20, 30, 40)).save(images / name)
    questions = [{"image_filename": "a.png", "question": "Q1?", "answer": "yes"},
                 {"image_filename": "a.png", "question": "Q2?"}]  # fmt: skip
    (tmp_path / "q.json").write_text(json.dumps({"questions": questions}))
    options: dict[str, Any] = {"scenes": {}}
    if scenes is not None:
        (tmp_path / "s.json").write_text(json.dumps({"scenes": scenes}))
        options["scenes"] = {"scenes": tmp_path / "s.json"}
    features = load_spec(ROOT / "builders" / "clevr").features
    return Source("train", {"images": (images,), "questions": (tmp_path / "q.json",)}, options,
                  features)  # fmt: skip


def test_sorted_images_their_scene_and_questions(tmp_path: Path) -> None:
    scenes = [{"image_filename": "a.png", "objects": [OBJECT]},
              {"image_filename": "b.png", "objects": []}]  # fmt: skip
    (a_key, a), (b_key, b) = FORMATS["clevr"].examples(source(tmp_path, scenes))
    assert (a_key, b_key) == ("a.png", "b.png") and a["file_name"] == "a.png"
    assert a["question_answer"] == [{"question": "Q1?", "answer": "yes"},
                                    {"question": "Q2?", "answer": ""}]  # fmt: skip
    (obj,) = a["objects"]
    assert obj["color"] == "red" and obj["3d_coords"].dtype == np.float32
    assert a["image"].shape == (3, 4, 3) and b["objects"] == [] and b["question_answer"] == []


def test_without_scenes_examples_have_no_objects(tmp_path: Path) -> None:
    examples = list(FORMATS["clevr"].examples(source(tmp_path, None)))
    assert [e["objects"] for _, e in examples] == [[], []]


@pytest.mark.parametrize(
    ("scenes", "message"),
    [
        ([{"image_filename": "b.png", "objects": []}, {"image_filename": "a.png", "objects": []}],
         r"the scene of a.png names 'b.png'"),
        ([{"image_filename": "a.png", "objects": []}], r"1 scenes for the 2 images"),
        ([{"image_filename": "a.png", "objects": [{"color": "red"}]},
          {"image_filename": "b.png", "objects": []}], r"an object of a.png lacks 'material'"),
    ],
)  # fmt: skip
def test_scenes_that_do_not_fit_are_named(
    tmp_path: Path, scenes: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(SourceFormatError, match=message):
        list(FORMATS["clevr"].examples(source(tmp_path, scenes)))
