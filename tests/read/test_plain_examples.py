"""Examples are plain dicts, as TFDS's: every tree library sees one leaf per feature.

This is why a renamed feature (cats_vs_dogs `filename` -> `image/filename`, ...) has no
deprecated alias (docs/guides/tfds-differences.md, "Renamed features"): an alias would need
a dict subclass, and JAX's and PyTorch's pytree utilities treat a dict subclass as a single
leaf, so ``jax.tree.map(f, example)`` would see the whole example as one value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch.utils._pytree as pytree

import catalog
from catalog.testing.harness import run_builder

ROOT = Path(__file__).resolve().parents[2]
KINDS = ROOT / "tests" / "fixtures" / "tf" / "tfds_kinds_array_record" / "tiny_kinds" / "2.1.0"


def _plain(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is dict and all(_plain(v) for v in value.values())
    return True


def _rebuilt(value: Any) -> Any:
    """`value` with every dict (of any type) made again as a plain dict."""
    if isinstance(value, dict):
        return {k: _rebuilt(v) for k, v in value.items()}
    return value


def test_every_read_path_gives_plain_dicts(tmp_path: Path) -> None:
    ds = run_builder(ROOT / "builders" / "spoken_digit", tmp_path, num_examples={"train": 3})
    train = ds["train"]
    kinds = catalog.open_tfds(KINDS, split="train")  # nested dicts, Sequences of a dict
    for source in (train, kinds):
        examples = [source[0], *source.__getitems__([1, 0]), *list(source), source[1:][0]]
        for example in examples:
            assert _plain(example), type(example)
            leaves = pytree.tree_leaves(example)
            assert len(leaves) == len(pytree.tree_leaves(_rebuilt(example))) >= len(example)
    example = train[0]
    assert "audio/filename" in example and "filename" not in example  # TFDS's keys, only
