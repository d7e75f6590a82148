"""The `tfrecord` source format: a builder turns TFRecord files of Examples into a catalog
dataset, through the real download -> prepare -> read path (the builder test harness)."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from catalog.errors import SourceFormatError, SpecError
from catalog.features import ClassLabel, FeaturesDict, Image, Sequence, Text
from catalog.formats import FORMATS, Source
from catalog.interop.tfrecord import encode_example, write_records
from catalog.spec.load import load_spec
from catalog.testing.harness import run_builder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text("utf-8"))["fashion_mnist_style"]

SPEC = """\
name: my_tfrecords
version: 1.0.0
description: Fashion-MNIST written to TFRecord the tutorial way.
features:
  image: {{type: Image, shape: [28, 28, 1]}}
  label: {{type: ClassLabel, num_classes: 10}}
downloads:
  train: {{url: "https://example.org/{file}"}}
splits:
  train:
    format: tfrecord
    files: {{records: train}}
    options:
      keys: {{image: image_raw, label: label}}
      shapes: {{image: "height,width,depth"}}
    num_examples: 20
"""


def make_builder(tmp_path: Path, file: str, spec: str = SPEC) -> Path:
    folder = tmp_path / "my_tfrecords"
    (folder / "dummy_data").mkdir(parents=True)
    shutil.copy(FIXTURES / file, folder / "dummy_data" / file)
    (folder / "builder.yaml").write_text(spec.format(file=file))
    return folder


@pytest.mark.parametrize(
    "file", ["fashion_mnist_style.tfrecord", "fashion_mnist_style.tfrecord.gz"]
)
def test_prepares_fashion_mnist_style_tfrecords(tmp_path: Path, file: str) -> None:
    folder = make_builder(tmp_path, file)
    ds = run_builder(folder, tmp_path / "run", num_examples={"train": 20})["train"]
    assert len(ds) == 20
    for example, want in zip(ds, EXPECTED["examples"], strict=True):
        image = example["image"]
        digest = hashlib.sha256(np.ascontiguousarray(image).tobytes()).hexdigest()
        assert (list(image.shape), digest) == (want["image"]["shape"], want["image"]["sha256"])
        assert example["label"] == want["label"]


def test_a_missing_key_is_named(tmp_path: Path) -> None:
    spec = SPEC.replace("label: label}", "label: class}")
    folder = make_builder(tmp_path, "fashion_mnist_style.tfrecord", spec)
    with pytest.raises(SourceFormatError, match=r"record 0 has no key 'class' .*holds depth"):
        run_builder(folder, tmp_path / "run", num_examples={"train": 20})


def test_every_feature_needs_a_key(tmp_path: Path) -> None:
    spec = SPEC.replace("keys: {{image: image_raw, label: label}}", "keys: {{image: image_raw}}")
    folder = make_builder(tmp_path, "fashion_mnist_style.tfrecord", spec)
    with pytest.raises(SpecError, match="format 'tfrecord' gives examples of image"):
        load_spec(folder)


def test_png_bytes_and_class_names(tmp_path: Path) -> None:
    buf = io.BytesIO()
    PILImage.fromarray(np.full((5, 4, 3), 7, np.uint8)).save(buf, "PNG")
    path = tmp_path / "x.tfrecord"
    write_records(
        path,
        [encode_example({"img": [buf.getvalue()], "cls": [b"dog"], "t": ["a", "b"], "c": "hi"})],
    )
    features = FeaturesDict(
        {
            "img": Image((None, None, 3), encoding="png"),
            "cls": ClassLabel(names=["cat", "dog"]),
            "tags": Sequence(Text()),
            "caption": Text(),
        }
    )
    options = {
        "keys": {"img": "img", "cls": "cls", "tags": "t", "caption": "c"},
        "shapes": {},
        "compression": "auto",
    }
    source = Source("train", {"records": (path,)}, options, features)
    [(key, ex)] = list(FORMATS["tfrecord"].examples(source))
    assert key == "x.tfrecord:0"
    assert ex["img"] == buf.getvalue() and ex["cls"] == "dog"
    assert ex["tags"] == ["a", "b"] and ex["caption"] == "hi"
    assert features.encode(ex)  # every value fits its feature
