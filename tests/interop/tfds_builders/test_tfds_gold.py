"""``tfds:NAME`` gives TFDS's own examples: TFDS + TensorFlow as the oracle.

tests/tfds_gold/<name>[-<config>].json hold what TensorFlow Datasets 4.9.10 (with TensorFlow)
prepared from each catalog builder's dummy files (`tools/tfds_equivalence.py`). Here the same
files go into a ``--mirror`` dir at TFDS's own URLs (by the URL, else by file name, as the tool
matched them), catalog prepares ``tfds:NAME[/CONFIG]`` through its real download and prepare
path, running TFDS's generators with no TensorFlow, and every example is compared with
TFDS's, canonical as the tool makes them, each split as a multiset (TFDS shuffles).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tfds_files import SKIP_REASON, assert_examples_equal

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

import catalog
from catalog.download import DownloadConfig

from conftest import load_module

ROOT = Path(__file__).resolve().parents[3]
tool = load_module(ROOT / "tools" / "tfds_equivalence.py")

#: Gold files the tfds: route is compared with, and why the others are not (yet).
NOT_COMPARED = {
    "cats_vs_dogs": "TFDS re-encodes its photos with TensorFlow's JPEG encoder (no stand-in)",
    "oxford_iiit_pet": "TFDS re-encodes files it lists as corrupt with TensorFlow's encoder",
    "horses_or_humans": "RGBA PNGs: TFDS's data source gives 4 channels, catalog the 3 declared",
    "speech_commands": "its generator imports pydub itself (pip install pydub): not installed",
}
#: Compared with every split's examples together: caltech101's builder draws its 30 training
#: images per class in the order tf.io.gfile.listdir lists them, the file system's order
#: under TensorFlow (TFDS itself differs between machines), sorted under the stand-in.
SPLITS_TOGETHER = {"caltech101"}
#: TFDS keeps float64 features in tf.train.Example's float_list, so they come back rounded to
#: float32; catalog keeps float64. Compared with both sides' floats rounded to float32.
FLOAT64_ROUNDED = {"wine_quality"}


def _golds() -> list[Path]:
    return sorted((ROOT / "tests" / "tfds_gold").glob("*.json"))


def _name(gold: Path) -> tuple[str, str | None]:
    """(TFDS name, config) of a gold file: ``imdb_reviews-plain_text`` -> both parts."""
    stem = gold.stem
    folder = ROOT / "builders"
    if (folder / stem).is_dir():
        return stem, tool.default_config(stem)
    for cut in range(len(stem) - 1, 0, -1):
        if stem[cut] == "-" and (folder / stem[:cut]).is_dir():
            return stem[:cut], stem[cut + 1 :]
    raise AssertionError(f"{gold}: no builder folder for it")


def _mirror(name: str, config: str | None, mirror: Path) -> None:
    """The builder's dummy files in `mirror` at the URLs TFDS's builder asks for."""
    from catalog.formats.tfds.runtime import builder_class

    files = tool.local_files(name, config)
    by_base = {url.rsplit("/", 1)[-1]: path for url, path in files.items()}
    urls = set(builder_class(name).url_infos or {}) | set(files)
    for url in urls:
        path = files.get(url) or by_base.get(url.split("?")[0].rstrip("/").rsplit("/", 1)[-1])
        if path is None:
            continue
        target = mirror / url.split("://", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())


def _patch(name: str, config: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the tool patched in TFDS for the MNIST family: its hard-coded example counts."""
    if name not in ("mnist", "fashion_mnist", "kmnist", "emnist"):
        return
    from tensorflow_datasets.image_classification import mnist

    counts = tool._idx_counts(tool.local_files(name, config), config)
    monkeypatch.setattr(mnist, "_TRAIN_EXAMPLES", counts["train"])
    monkeypatch.setattr(mnist, "_TEST_EXAMPLES", counts["test"])
    if name == "emnist":
        from catalog.formats.tfds.runtime import builder_class

        chosen = next(c for c in builder_class(name).BUILDER_CONFIGS if c.name == config)
        monkeypatch.setattr(chosen, "train_examples", counts["train"])
        monkeypatch.setattr(chosen, "test_examples", counts["test"])


def _examples(ds: Any) -> list[Any]:
    return [tool.canonical(ds[i]) for i in range(len(ds))]


@pytest.mark.parametrize("gold", _golds(), ids=lambda p: p.stem)
def test_tfds_route_gives_tfds_examples(
    gold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, config = _name(gold)
    if name in NOT_COMPARED:
        pytest.skip(NOT_COMPARED[name])
    expected = json.loads(gold.read_text("utf-8"))
    mirror = tmp_path / "mirror"
    _mirror(name, config, mirror)
    _patch(name, config, monkeypatch)
    download = DownloadConfig(
        download_dir=tmp_path / "dl", mirrors=[str(mirror)], offline=True,
        manual_dir=tmp_path / "manual", register_checksums=True, progress="none",
    )  # fmt: skip
    text = f"tfds:{name}/{config}" if config else f"tfds:{name}"
    sources = catalog.data_source(text, data_dir=tmp_path / "data", download_config=download)
    assert isinstance(sources, dict)
    assert set(sources) == set(expected["splits"])
    wanted = dict(expected["splits"])
    got = {split: _examples(sources[split]) for split in wanted}
    if name in SPLITS_TOGETHER:
        wanted = {"all": [e for split in sorted(wanted) for e in wanted[split]]}
        got = {"all": [e for split in sorted(got) for e in got[split]]}
    assert_examples_equal(got, wanted, tool.multiset, float32=name in FLOAT64_ROUNDED)
    assert "tensorflow" not in sys.modules


#: Datasets other tests of this folder prepare from their upstream layout.
TESTED_ELSEWHERE = {
    "beans", "cifar10", "cifar100", "emnist", "fashion_mnist", "imdb_reviews", "kmnist",
    "mnist", "rock_paper_scissors", "samsum", "squad", "tf_flowers",
}  # fmt: skip


def test_the_listing_says_prepares_for_exactly_the_tested_datasets() -> None:
    from catalog.interop.tfds.builder_index import TESTED

    compared = {_name(gold)[0] for gold in _golds()} - set(NOT_COMPARED)
    assert compared | TESTED_ELSEWHERE == TESTED
