"""Every registered builder gives TFDS's examples from the same source files.

tests/tfds_gold/<name>[-<config>].json hold what TensorFlow Datasets 4.9.10 prepared from each
builder's dummy files (its download manager pointed at them; `tools/tfds_equivalence.py`,
run with TensorFlow installed, writes them). Here catalog prepares the same files through its
real download and prepare path and every example is compared, canonical as the tool makes
them (arrays by shape, dtype and sha256 of their values: JPEG pixels as both decode them),
each split as a multiset (TFDS shuffles the examples it writes). The few builders where
catalog deliberately differs are in `DIFFERS` (and in the README's table "Where catalog
differs from TFDS, and why"): their test checks that everything else is equal and that the
difference is the documented one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from catalog.testing.harness import run_builder

from conftest import load_module

ROOT = Path(__file__).resolve().parents[2]
tool = load_module(ROOT / "tools" / "tfds_equivalence.py")

GOLD = sorted((ROOT / "tests" / "tfds_gold").glob("*.json"))


def _without(*keys: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda example: {k: v for k, v in example.items() if k not in keys}


@dataclass(frozen=True)
class Differs:
    """Where catalog deliberately differs from TFDS (the README's table, row for row)."""

    why: str
    #: the part of each example that must still equal TFDS's
    equal_part: Callable[[dict[str, Any]], dict[str, Any]] = lambda example: example
    #: the splits compared as one multiset (a different draw of the same files), with
    #: catalog's own split sizes
    splits_together: dict[str, int] | None = None


DIFFERS = {
    "cats_vs_dogs": Differs(
        "TFDS re-encodes every photo with TensorFlow's JPEG encoder; catalog keeps each "
        "file's own bytes (re-encoding only a file Pillow finds damaged), so pixels differ",
        _without("image"),
    ),
    "oxford_iiit_pet": Differs(
        "TFDS re-encodes the files it lists as corrupt (e.g. an RGBA PNG named .jpg) with "
        "TensorFlow's JPEG encoder; catalog keeps their bytes, so those pixels differ",
        _without("image"),
    ),
    "horses_or_humans": Differs(
        "its PNGs are RGBA: TFDS's data source decodes them with 4 channels although the "
        "feature says 3 (TFDS's tf.data path gives 3); catalog gives the 3 the feature says",
        _without("image"),
    ),
    "caltech101": Differs(
        "TFDS draws the 30 training images per class in the file system's listing order "
        "(so TFDS itself differs between machines); catalog draws from the sorted listing: "
        "the same files and labels, split otherwise",
        splits_together={"train": 90, "test": 3},
    ),
    "speech_commands": Differs(
        "a path in validation_list.txt written unnormalised (./go//g0_nohash_1.wav, as the "
        "dummy list has one to test this) is that file for catalog, no file for TFDS (which "
        "compares the text as is); the real lists are clean, so the real splits agree",
        splits_together={"train": 5, "validation": 4, "test": 3},
    ),
}


#: Where the type of a value catalog's data source gives differs from what TFDS's data source
#: gives, on purpose (docs/guides/tfds-differences.md, "Value types"): (TFDS's declared
#: feature, a pattern of TFDS's value kind (`tool.kind`)) -> catalog's value kind. Any
#: feature no rule names has TFDS's kind exactly.
KIND_RULES: list[tuple[str, str, Callable[[dict[str, str]], str]]] = [
    # Text is str (TFDS: UTF-8 bytes), alone and in a Sequence (a list in both); TFDS's
    # scalar string Tensor (titanic's name, squad's id) is a Text feature in catalog
    (r"(Text|Tensor) object", r"bytes", lambda m: "str"),
    (r"Sequence of Text object", r"list\[bytes\]", lambda m: "list[str]"),
    # a scalar Tensor is a NumPy scalar of its declared dtype (TFDS: a Python int or float,
    # so a float32 value reads back widened, 0.5600000023841858); ClassLabel is int in both
    (r"(Scalar|Tensor) (?P<dtype>\w+)", r"int|float|bool", lambda m: f"np.{m['dtype']}"),
    # a Sequence of fixed-shape elements is one stacked array (TFDS's data source: a list
    # of NumPy scalars or arrays; TFDS's tf.data path stacks them as catalog does)
    (
        r"Sequence of \w+ \w+",
        r"list\[np\.(?P<dtype>\w+)\]",
        lambda m: f"ndarray[{m['dtype']}, rank 1]",
    ),
    (
        r"Sequence of \w+ \w+",
        r"list\[ndarray\[(?P<dtype>\w+), rank (?P<rank>\d+)\]\]",
        lambda m: f"ndarray[{m['dtype']}, rank {int(m['rank']) + 1}]",
    ),
]


def _rule(tfds_kind: str, declared: str) -> tuple[int, dict[str, str]] | None:
    """The `KIND_RULES` rule for this kind of this feature (its index and named groups)."""
    for i, (feature, kind, _) in enumerate(KIND_RULES):
        matched_feature = re.fullmatch(feature, declared)
        matched_kind = re.fullmatch(kind, tfds_kind)
        if matched_feature and matched_kind:
            return i, {**matched_feature.groupdict(), **matched_kind.groupdict()}
    return None


def catalog_kind(tfds_kind: str, declared: str) -> str:
    """The kind catalog's data source gives where TFDS's gives `tfds_kind` for a feature
    TFDS declares as `declared` (``tool.declared``): `KIND_RULES`' answer, else the same."""
    rule = _rule(tfds_kind, declared)
    if rule is None:
        return tfds_kind
    i, names = rule
    return KIND_RULES[i][2](names)


def test_every_kind_rule_is_met() -> None:
    """Each rule in `KIND_RULES` is a difference some gold file shows (none is stale)."""
    used = set()
    for path in GOLD:
        gold = json.loads(path.read_text("utf-8"))
        for tfds_kinds in gold["kinds"].values():
            for feature, found in tfds_kinds.items():
                rules = (_rule(kind, gold["declared"][feature]) for kind in found)
                used.update(rule[0] for rule in rules if rule is not None)
    assert used == set(range(len(KIND_RULES)))


def _name_config(path: Path) -> tuple[str, str | None]:
    name, _, config = path.stem.partition("-")
    return name, config or None


def catalog_examples(path: Path, tmp_path: Path) -> tuple[dict[str, list[Any]], Any]:
    gold = json.loads(path.read_text("utf-8"))
    name, config = _name_config(path)
    counts = {split: len(examples) for split, examples in gold["splits"].items()}
    if name in DIFFERS and DIFFERS[name].splits_together is not None:
        counts = dict(DIFFERS[name].splits_together or {})
    sources = run_builder(ROOT / "builders" / name, tmp_path, num_examples=counts, config=config)
    got = {split: [tool.canonical(e) for e in ds] for split, ds in sources.items()}
    got["kinds"] = {split: tool.kinds(list(ds)) for split, ds in sources.items()}
    keys = next(iter(sources.values())).info.supervised_keys
    got["supervised_keys"] = tool.canonical(list(keys) if keys else None)
    return got, gold


@pytest.mark.parametrize("path", GOLD, ids=lambda p: p.stem)
def test_the_same_examples_as_tfds(path: Path, tmp_path: Path) -> None:
    name, _ = _name_config(path)
    got, gold = catalog_examples(path, tmp_path)
    assert got.pop("supervised_keys") == gold["supervised_keys"]  # titanic's dict too
    got_kinds = got.pop("kinds")
    for split, tfds_kinds in gold["kinds"].items():  # the types and dtypes, feature by feature
        expected = {
            feature: sorted(catalog_kind(kind, gold["declared"][feature]) for kind in found)
            for feature, found in tfds_kinds.items()
        }
        assert got_kinds[split] == expected, split
    first = next(iter(gold["splits"].values()))
    assert sorted(first[0]) == gold["features"]  # the gold holds every TFDS feature
    differs = DIFFERS.get(name)
    if differs is None:
        assert set(got) == set(gold["splits"])
        for split, examples in gold["splits"].items():
            assert tool.multiset(got[split]) == tool.multiset(examples), split
        return
    if differs.splits_together is not None:  # the same examples, drawn into splits otherwise
        got = {"all": [e for split in sorted(got) for e in got[split]]}
        gold["splits"] = {"all": [e for s in sorted(gold["splits"]) for e in gold["splits"][s]]}
    for split, examples in gold["splits"].items():
        part = differs.equal_part
        assert tool.multiset([part(e) for e in got[split]]) == tool.multiset(
            [part(e) for e in examples]
        ), split
    if differs.splits_together is None:  # and the difference is still there
        assert any(tool.multiset(got[s]) != tool.multiset(e) for s, e in gold["splits"].items())


def test_every_registered_builder_has_a_gold_file() -> None:
    import yaml

    registered = set(yaml.safe_load((ROOT / "registry.yaml").read_text())["datasets"])
    have = {_name_config(p)[0] for p in GOLD}
    assert registered - have - checked_elsewhere() == MISSING_GOLD


def checked_elsewhere() -> set[str]:
    """Builders compared with TFDS's own examples in their own builder tests
    (tests/builders/test_builders_imagenet.py, test_builders_vtab.py and
    test_builders_manual.py), from the gold files TFDS 4.9.10 wrote there
    (tests/fixtures/tf/make_imagenet_gold.py, make_vtab_gold.py, make_manual_gold.py)."""
    tf = ROOT / "tests" / "fixtures" / "tf"
    keys = [*json.loads((tf / "imagenet_gold.json").read_text()),
            *json.loads((tf / "vtab_gold.json").read_text()),
            *json.loads((tf / "manual_gold.json").read_text())]  # fmt: skip
    return {key.split("/")[0] for key in keys} - {"tfds", "opencv"}


#: Registered builders TFDS 4.9.10 cannot prepare from their dummy files, and why.
MISSING_GOLD_WHY: dict[str, str] = {}
MISSING_GOLD = set(MISSING_GOLD_WHY)
