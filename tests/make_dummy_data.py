"""Write the dummy IDX files of the MNIST-family builders (run from the repository root).

    python tests/make_dummy_data.py

The files are committed; tests/test_builders.py recomputes the same patterns to check every
pixel and label that comes out of the prepared dataset.
"""

from __future__ import annotations

from pathlib import Path

from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

#: dataset -> seed; split -> (file prefix, example count, seed offset)
IDX_BUILDERS = {"mnist": 1, "fashion_mnist": 2, "kmnist": 3}
IDX_SPLITS = {"train": ("train", 12, 0), "test": ("t10k", 7, 100)}


def main() -> None:
    root = Path(__file__).resolve().parent.parent / "builders"
    for name, seed in IDX_BUILDERS.items():
        out = root / name / "dummy_data"
        out.mkdir(exist_ok=True)
        for prefix, count, offset in IDX_SPLITS.values():
            write_idx(
                out / f"{prefix}-images-idx3-ubyte.gz", pattern_images(count, seed=seed + offset)
            )
            write_idx(
                out / f"{prefix}-labels-idx1-ubyte.gz", pattern_labels(count, seed=seed + offset)
            )


if __name__ == "__main__":
    main()
