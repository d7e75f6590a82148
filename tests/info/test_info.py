"""DatasetInfo: what `builder(name).info` holds, how it prints, and the spec fields behind it."""

from __future__ import annotations

import dataclasses
import json
import textwrap
from pathlib import Path

import pytest

import catalog
from catalog import ClassLabel, DatasetInfo, FeaturesDict, Image, Sequence, Tensor, Text
from catalog._util.units import format_size
from catalog.errors import SpecError
from catalog.features import from_json, supervised_pair
from catalog.info.dataset_info import ShardInfo, SplitInfo
from catalog.info.text import Location, format_info
from catalog.spec.load import load_spec
from catalog.spec.yaml_file import read_yaml
from catalog.storage.diskspace import disk_usage

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def info() -> DatasetInfo:
    return catalog.builder("fashion_mnist").info


def test_info_holds_what_users_look_up(info: DatasetInfo) -> None:
    label = info.features["label"]
    assert isinstance(label, ClassLabel)
    assert label.names[0] == "T-shirt/top" and label.int2str(9) == "Ankle boot"
    assert info.splits["train"].num_examples == 60000 and info.splits["test"].num_examples == 10000
    assert info.citation.startswith("@article{DBLP:journals/corr/abs-1708-07747,")
    assert info.homepage == "https://github.com/zalandoresearch/fashion-mnist"
    assert info.license == "MIT" and info.version == "3.0.1"
    assert info.supervised_keys == ("image", "label")
    assert info.download_size == 26421880 + 29515 + 4422102 + 5148


@pytest.mark.parametrize("name", catalog.list_datasets())
def test_every_registered_info_prints_and_roundtrips(name: str) -> None:
    info = catalog.builder(name).info
    text = str(info)
    assert text.startswith(f"{info.full_name} {info.version}\n") and "features:\n" in text
    assert DatasetInfo.from_json(json.loads(json.dumps(info.to_json()))) == info


def test_print_info_reads_well(info: DatasetInfo) -> None:
    text = str(info)
    assert "\nsupervised keys: (image, label)\n" in text
    assert "  label  ClassLabel  ()           int64  10 classes: T-shirt/top, Trouser, Pullover, " \
        "..., Ankle boot\n" in text  # fmt: skip
    assert "prepared:" not in text  # only `catalog info` knows the data dir
    assert max(len(line) for line in text.splitlines()) <= 100


def test_nested_features_print_as_a_tree() -> None:
    info = DatasetInfo(
        name="detect",
        version="1.0.0",
        features=FeaturesDict(
            {
                "image": Image((None, None, 3), encoding="jpeg"),
                "objects": Sequence(
                    {"bbox": Tensor((4,), "float32"), "label": ClassLabel(names=["a", "b"])}
                ),
                "meta": {"caption": Text(), "tags": Sequence(Text())},
            }
        ),
        splits={"train": SplitInfo("train", 1234, (ShardInfo("f", 1234, 5 << 20, "0" * 64),))},
        downloads={"photos": {"url": "http://x/p.tgz", "size": None, "sha256": None}},
    )
    location = Location(Path("/data/detect/1.0.0"), prepared=True, num_bytes=6 << 20)
    assert format_info(info, location) == textwrap.dedent("""\
        detect 1.0.0

        download size: 0 B (1 file, 1 of unknown size)
        prepared:      yes, 6.0 MiB in /data/detect/1.0.0

        features:
          image      Image           (None, None, 3)  uint8    jpeg
          objects    Sequence
            bbox     Tensor          (None, 4)        float32
            label    ClassLabel      (None,)          int64    2 classes: a, b
          meta       FeaturesDict
            caption  Text            ()               str
            tags     Sequence(Text)  (None,)          str

        splits:
          train  1,234 examples  5.0 MiB
        """)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        (("image", "target"), "'target' is not a feature; features: image, label"),
        (("image",), "expected [input, target]"),
        (({"x": "image", "y": "label"}, "label"), "the target not among the dict's inputs"),
        (({"x": "pixels"}, "label"), "'pixels' is not a feature"),
        (({}, "label"), "the input dict maps names to feature names"),
        (({"x": 3}, "label"), "the input dict maps names to feature names"),
    ],
)
def test_supervised_keys_are_validated(
    info: DatasetInfo, keys: tuple[str, str], message: str
) -> None:
    with pytest.raises(SpecError) as error:
        dataclasses.replace(info, supervised_keys=keys)
    assert message in str(error.value)


def test_supervised_keys_may_name_a_dict_of_inputs_as_tfds(info: DatasetInfo) -> None:
    """TFDS's titanic: ``({name: feature, ...}, target)``; it round-trips through JSON."""
    keyed = dataclasses.replace(info, supervised_keys=({"pixels": "image"}, "label"))
    assert DatasetInfo.from_json(keyed.to_json()).supervised_keys == ({"pixels": "image"}, "label")
    assert "\nsupervised keys: ({pixels: image}, label)\n" in str(keyed)


def test_supervised_keys_may_name_one_feature_as_input_and_target(info: DatasetInfo) -> None:
    """TFDS's lm1b: ``("text", "text")`` (a language model's); as_supervised gives the value
    twice. It round-trips through JSON."""
    same = dataclasses.replace(info, supervised_keys=("label", "label"))
    assert DatasetInfo.from_json(same.to_json()).supervised_keys == ("label", "label")
    assert supervised_pair(("label", "label"), {"image": 0, "label": 3}) == (3, 3)


def test_spec_names_file_is_relative_to_the_builder_folder(tmp_path: Path) -> None:
    spec = (ROOT / "builders" / "mnist" / "builder.yaml").read_text()
    old = "label: {type: ClassLabel, num_classes: 10}"
    assert old in spec
    (tmp_path / "builder.yaml").write_text(
        spec.replace(old, "label: {type: ClassLabel, names_file: names.txt}")
    )
    (tmp_path / "names.txt").write_text("zero\none\n\ntwo\nthree\nfour\nfive\nsix\nseven\n"
                                        "eight\nnine\n")  # fmt: skip
    features = load_spec(tmp_path).features
    assert features["label"].names[:3] == ["zero", "one", "two"]  # type: ignore[attr-defined]
    assert features["label"].to_json()["names"][-1] == "nine"
    (tmp_path / "names.txt").unlink()
    with pytest.raises(SpecError, match="field 'features': .*names.txt'.*No such file"):
        load_spec(tmp_path)


def test_spec_with_every_feature_type(tmp_path: Path) -> None:
    # Features as builder.yaml writes them. (A spec also checks them against its splits'
    # format, which yields no such features: tests/spec/test_spec.py covers that.)
    text = textwrap.dedent("""\
        image: {type: Image, shape: [28, 28, 1]}
        label: {type: ClassLabel, num_classes: 10}
        id: {type: Text}
        boxes: {type: Tensor, shape: [null, 4], dtype: float32}
        objects:
          type: Sequence
          feature:
            type: FeaturesDict
            features:
              kind: {type: ClassLabel, names: [a, b]}
              area: {type: Scalar, dtype: float32}
        meta:
          type: FeaturesDict
          features:
            tags: {type: Sequence, feature: {type: Text}, length: 2}""")
    (tmp_path / "features.yaml").write_text(text)
    raw = read_yaml(tmp_path / "features.yaml")
    features = from_json({"type": "FeaturesDict", "features": raw})
    assert isinstance(features, FeaturesDict)
    assert list(features) == ["image", "label", "id", "boxes", "objects", "meta"]
    assert features["boxes"] == Tensor((None, 4), "float32")
    assert features["meta"] == FeaturesDict({"tags": Sequence(Text(), length=2)})
    assert from_json(features.to_json()) == features


def test_sizes_and_disk_usage(tmp_path: Path) -> None:
    assert [format_size(n) for n in (0, 1023, 1024, 5 << 20, 3 << 30)] == [
        "0 B", "1023 B", "1.0 KiB", "5.0 MiB", "3.0 GiB",
    ]  # fmt: skip
    assert disk_usage(tmp_path / "missing") == 0
    (tmp_path / "a").write_bytes(b"x" * 10)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 5)
    assert disk_usage(tmp_path) == 15
