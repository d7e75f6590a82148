"""``catalog info tfds:NAME``: offline, importing only the TFDS module that registers NAME
(`catalog.formats.tfds.names`, a cache of TFDS's own answer), and one clear line where a
builder needs a library, TensorFlow, or a feature catalog does not map. Its speed over every
name is measured by benchmarks/bench_tfds_info.py, never timed here."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tfds_files import SKIP_REASON

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

from conftest import catalog_cli

#: `catalog info NAME` in a fresh process, then which TFDS category packages it imported.
_INFO = """
import sys
{block}
from catalog.cli import main
status = main(["info", sys.argv[1], "--data-dir", sys.argv[2]])
packages = sorted({{m.split(".")[1] for m in sys.modules
                    if m.startswith("tensorflow_datasets.") and m.count(".") >= 1}})
print("PACKAGES", " ".join(packages), file=sys.stderr)
print("TENSORFLOW", "tensorflow" in sys.modules, file=sys.stderr)
sys.exit(status)
"""
#: TFDS's category packages (each imports every builder module in it).
_CATEGORIES = {"audio", "image", "image_classification", "object_detection", "robotics",
               "structured", "text", "translate", "video", "vision_language"}  # fmt: skip


def info(name: str, cache: Path, data: Path, block: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _INFO.format(block=block), name, str(data)],
        capture_output=True, text=True, timeout=300,
        env={**_environ(), "XDG_CACHE_HOME": str(cache)},
    )  # fmt: skip


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}


def _imported(result: subprocess.CompletedProcess[str]) -> set[str]:
    line = next(x for x in result.stderr.splitlines() if x.startswith("PACKAGES"))
    return set(line.split()[1:])


def test_info_imports_only_the_module_that_registers_the_name(tmp_path: Path) -> None:
    """The first `info` asks TFDS once for every name's module and keeps the answer in the
    cache dir (keyed by tensorflow-datasets' version); every later `info` imports only the
    package of the name it shows: mnist's image_classification, iris' structured, and for a
    builder of TFDS's datasets/ folder (imdb_reviews) none of the category packages."""
    cache, data = tmp_path / "cache", tmp_path / "data"
    first = info("tfds:mnist", cache, data)
    assert first.returncode == 0, first.stderr
    index = json.loads((cache / "catalog" / "tfds-modules.json").read_text())
    assert index["modules"]["mnist"] == "tensorflow_datasets.image_classification.mnist"
    assert index["modules"]["glue"] == "tensorflow_datasets.text.glue"
    assert index["modules"]["imdb_reviews"].startswith("tensorflow_datasets.datasets.")
    assert len(index["modules"]) > 400
    for name, wanted in [
        ("tfds:mnist", {"image_classification"}),
        ("tfds:iris", {"structured"}),
        ("tfds:imdb_reviews", set()),  # tensorflow_datasets/datasets/imdb_reviews
    ]:
        shutil.rmtree(cache / "catalog" / "tfds-declared", ignore_errors=True)  # not kept yet
        result = info(name, cache, data)
        assert result.returncode == 0, result.stderr
        assert _imported(result) & _CATEGORIES == wanted, (name, _imported(result))
        assert "TENSORFLOW False" in result.stderr
    assert "tfds.mnist 3.0.1" in first.stdout and "10 classes" in first.stdout
    assert not data.exists() or not any(data.iterdir())  # nothing written, nothing fetched


def test_a_stale_or_damaged_index_still_finds_every_name(tmp_path: Path) -> None:
    """The index is only a cache: a name it lacks takes TFDS's full lookup, a module that no
    longer registers the name too, and a damaged file is made again. (The declared specs kept
    beside it are removed first: with them, `info` asks no module at all.)"""
    cache, data = tmp_path / "cache", tmp_path / "data"
    assert info("tfds:mnist", cache, data).returncode == 0
    declared = cache / "catalog" / "tfds-declared"
    path = cache / "catalog" / "tfds-modules.json"
    index = json.loads(path.read_text())
    del index["modules"]["mnist"]
    index["modules"]["imdb_reviews"] = "tensorflow_datasets.text.glue"  # registers other names
    path.write_text(json.dumps(index))
    for name, shown in [("tfds:mnist", "tfds.mnist 3.0.1"),
                        ("tfds:imdb_reviews", "tfds.imdb_reviews/plain_text 1.0.0")]:  # fmt: skip
        shutil.rmtree(declared, ignore_errors=True)
        result = info(name, cache, data)
        assert result.returncode == 0, result.stderr
        assert shown in result.stdout
    path.write_text("{not json")
    shutil.rmtree(declared, ignore_errors=True)
    result = info("tfds:mnist", cache, data)
    assert result.returncode == 0, result.stderr
    assert json.loads(path.read_text())["modules"]["mnist"].endswith(".mnist")


def test_a_builder_needing_a_library_that_is_missing_is_one_line_naming_it(
    tmp_path: Path,
) -> None:
    """sift1m's builder imports h5py: with h5py not importable, `info` says so and what to
    install, in one line with no traceback (before: "TFDS registers no dataset 'sift1m'")."""
    block = "sys.modules['h5py'] = None  # not installed"
    for cache in (tmp_path / "cold", tmp_path / "warm"):
        if cache.name == "warm":
            assert info("tfds:mnist", cache, tmp_path / "data").returncode == 0  # index made
        result = info("tfds:sift1m", cache, tmp_path / "data", block)
        assert result.returncode != 0
        lines = [x for x in result.stderr.splitlines() if x.startswith("catalog: error:")]
        assert lines == [
            "catalog: error: tfds:sift1m: TFDS's builder needs h5py, which is not installed: "
            "pip install h5py"
        ], result.stderr
        assert "Traceback" not in result.stderr


def test_features_catalog_does_not_map_are_one_line_naming_the_dataset(tmp_path: Path) -> None:
    """d4rl's steps are TFDS's Dataset feature: the error names tfds:NAME and the feature,
    not a temporary features.json."""
    result = catalog_cli("info", "tfds:d4rl_mujoco_walker2d", "--data-dir", str(tmp_path))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.startswith(
        "catalog: error: tfds:d4rl_mujoco_walker2d: TFDS's features: feature 'steps': TFDS "
        "feature class 'tensorflow_datasets.core.features.dataset_feature.Dataset' is not "
        "supported"
    ), result.stderr
    assert "features.json" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_builder_that_needs_tensorflow_for_its_info_is_one_line(tmp_path: Path) -> None:
    result = catalog_cli("info", "tfds:rlu_rwrl", "--data-dir", str(tmp_path))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.startswith("catalog: error: tfds:rlu_rwrl needs TensorFlow for tf.data")
    assert len(result.stderr.splitlines()) == 1


def test_small_png_images_are_stored_raw_as_catalog_own_builders_store_them() -> None:
    """TFDS stores mnist's 28x28 images as PNG; a prepared tfds:mnist stores them as
    catalog's mnist does (raw pixels, read with no decoding: bench_idx's tfds:mnist rows),
    with the same values. Images of varying shape keep TFDS's encoding."""
    from catalog.formats.tfds.runtime import TFDSName
    from catalog.interop.tfds.declared import declared_spec

    assert declared_spec(TFDSName("mnist")).features["image"].encoding == "raw"  # type: ignore[attr-defined]
    assert declared_spec(TFDSName("cifar10")).features["image"].encoding == "raw"  # type: ignore[attr-defined]
    flowers = declared_spec(TFDSName("tf_flowers")).features["image"]
    assert flowers.encoding == "png" and flowers.shape == (None, None, 3)  # type: ignore[attr-defined]


def test_a_declared_spec_is_kept_and_info_then_imports_no_tfds(tmp_path: Path) -> None:
    """`info tfds:NAME` keeps the declared spec in the cache dir
    (`catalog.interop.tfds.declared_cache`): asked again, the same text comes with no TFDS
    module imported; a file of another code or tensorflow-datasets version, or a damaged one,
    is declared again."""
    cache, data = tmp_path / "cache", tmp_path / "data"
    first = info("tfds:cifar10_corrupted/fog_1", cache, data)
    assert first.returncode == 0, first.stderr
    again = info("tfds:cifar10_corrupted/fog_1", cache, data)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout and "fog_1" in first.stdout
    assert _imported(again) == set(), _imported(again)  # not even TFDS's core
    [kept] = (cache / "catalog" / "tfds-declared").iterdir()
    document = json.loads(kept.read_text())
    document["key"]["tensorflow_datasets"] = "0.0.1"  # another version's
    kept.write_text(json.dumps(document))
    stale = info("tfds:cifar10_corrupted/fog_1", cache, data)
    assert stale.stdout == first.stdout and "image_classification" in _imported(stale)
    kept.write_text("{not json")
    damaged = info("tfds:cifar10_corrupted/fog_1", cache, data)
    assert damaged.stdout == first.stdout and "image_classification" in _imported(damaged)
    assert json.loads(kept.read_text())["key"]["tensorflow_datasets"] != "0.0.1"  # anew


@pytest.mark.parametrize("name", ["tfds:mnist", "tfds:criteo", "tfds:para_crawl/enbg"])
def test_a_kept_declared_spec_equals_the_one_declared(name: str) -> None:
    """Features (Translation's dicts of texts too), supervised keys (criteo's dict input),
    configs and citation come back from the cache as TFDS's builder declares them."""
    from catalog.formats.tfds.runtime import load_builder, parse_name
    from catalog.interop.tfds.declared import declared_of, declared_spec

    tfds_name = parse_name(name)
    assert tfds_name is not None
    fresh = declared_of(load_builder(tfds_name), tfds_name)
    assert declared_spec(tfds_name) == fresh  # declared, and kept
    assert declared_spec(tfds_name) == fresh  # read back
    assert fresh.configs == declared_spec(tfds_name).configs
