"""Big sources read a slice at a time: .mat (v5 plain and compressed, v7.3/HDF5) and .npz,
and every random-access reader gives the examples its format's sequential reader gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Text
from catalog.formats import FORMATS, Source
from catalog.formats.matfile import H5Array, OnDiskArray, mat_arrays

from make_dummy_data import cifar_images, cifar_records

scipy_io = pytest.importorskip("scipy.io")

FEATURES = FeaturesDict(
    {"id": Text(), "image": Image((32, 32, 3)), "label": ClassLabel(num_classes=10)}
)


def source(fmt: str, files: dict[str, Any], scratch: Path | None, **options: Any) -> Source:
    defaults = {name: option.default for name, option in FORMATS[fmt].options.items()}
    files = {role: tuple(p) if isinstance(p, list) else (p,) for role, p in files.items()}
    features = FEATURES if fmt != "npz" else FeaturesDict({"image": Image((32, 32, 3))})
    return Source("train", files, {**defaults, **options}, features, scratch)


def same_examples(fmt: str, src: Source, ranges: list[tuple[int, int]]) -> int:
    """Check each range read through random access equals the sequential reader's; the count."""
    whole = list(FORMATS[fmt].examples(src))
    reader = FORMATS[fmt].random_access(src)  # type: ignore[misc]
    assert reader.length == len(whole)
    for start, stop in ranges:
        got = list(reader.examples(start, stop))
        assert [k for k, _ in got] == [k for k, _ in whole[start:stop]]
        for (_, a), (_, b) in zip(got, whole[start:stop], strict=True):
            assert a.keys() == b.keys()
            for name in a:
                np.testing.assert_array_equal(a[name], b[name])
    reader.close()
    return len(whole)


@pytest.mark.parametrize("compressed", [False, True])
def test_mat_v5_is_read_in_slices(tmp_path: Path, compressed: bool) -> None:
    images = cifar_images(2500, seed=3)  # more than one 1024-example block
    labels = (np.arange(2500) % 10 + 1).astype(np.float64).reshape(-1, 1)
    path = tmp_path / "x.mat"
    mat = {"X": images.transpose(1, 2, 3, 0), "y": labels, "other": np.arange(3)}
    scipy_io.savemat(path, mat, do_compression=compressed)
    arrays = mat_arrays(path, ["X", "y"], tmp_path / "scratch")
    assert isinstance(arrays["X"], OnDiskArray)
    # Plain: read in place; compressed: inflated once into a staged .npy.
    assert (arrays["X"].path == path) is not compressed
    src = source("mat", {"mat": path}, tmp_path / "scratch", label_modulo=10)
    count = same_examples("mat", src, [(0, 3), (1000, 1030), (2490, 2600)])
    assert count == 2500
    first = list(FORMATS["mat"].random_access(src).examples(1023, 1025))  # type: ignore[misc]
    np.testing.assert_array_equal(first[0][1]["image"], images[1023])
    assert [e["label"] for _, e in first] == [4, 5]


def test_mat_examples_along_another_axis(tmp_path: Path) -> None:
    images = cifar_images(5, seed=1)
    path = tmp_path / "x.mat"
    scipy_io.savemat(path, {"X": images, "y": np.arange(5).reshape(-1, 1)})  # axis 0: (N, ...)
    src = source("mat", {"mat": path}, tmp_path / "s", example_axis=0)
    assert same_examples("mat", src, [(1, 4)]) == 5


def test_mat_v73_is_read_through_h5py(tmp_path: Path) -> None:
    h5py = pytest.importorskip("h5py")
    images = cifar_images(40, seed=2)
    path = tmp_path / "x.mat"
    with h5py.File(path, "w", userblock_size=512) as f:  # MATLAB's layout: axes reversed
        f["X"] = images.transpose(1, 2, 3, 0).T
        f["y"] = (np.arange(40) % 10 + 1).astype(np.float64).reshape(-1, 1).T
    with open(path, "r+b") as f:
        f.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64".ljust(128, b" "))
    arrays = mat_arrays(path, ["X", "y"], None)
    assert isinstance(arrays["X"], H5Array) and arrays["X"].shape == (32, 32, 3, 40)
    src = source("mat", {"mat": path}, None, label_modulo=10)
    reader = FORMATS["mat"].random_access(src)  # type: ignore[misc]
    got = list(reader.examples(10, 13))
    for (key, example), i in zip(got, range(10, 13), strict=True):
        assert key == f"train_{i:05d}"
        np.testing.assert_array_equal(example["image"], images[i])
        assert example["label"] == (i % 10 + 1) % 10


def test_cifar_records_by_position_across_files(tmp_path: Path) -> None:
    images = cifar_images(30, seed=5)
    paths = []
    for part in range(3):
        chunk = slice(10 * part, 10 * part + 10)
        paths.append(tmp_path / f"b{part}.bin")
        paths[-1].write_bytes(cifar_records([np.arange(30)[chunk] % 10], images[chunk]))
    src = source("cifar_bin", {"records": paths}, None)
    assert same_examples("cifar_bin", src, [(0, 30), (8, 23), (29, 40)]) == 30


def test_npz_is_staged_and_read_in_blocks(tmp_path: Path) -> None:
    images = cifar_images(2100, seed=6)  # more than two 1024-example blocks
    path = tmp_path / "x.npz"
    np.savez_compressed(path, images=images, labels=np.arange(2100))
    scratch = tmp_path / "scratch"
    src = source("npz", {"arrays": path}, scratch, arrays={"image": "images"})
    assert same_examples("npz", src, [(0, 5), (1020, 1030), (2090, 2200)]) == 2100
    assert (scratch / "npz" / "images.npy").is_file()
    staged = np.load(scratch / "npz" / "images.npy", mmap_mode="r")
    np.testing.assert_array_equal(staged, images)


def test_npz_objects_are_refused_when_staging_too(tmp_path: Path) -> None:
    path = tmp_path / "evil.npz"
    np.savez(path, images=np.array([object(), 1], dtype=object), labels=np.arange(2))
    src = source("npz", {"arrays": path}, tmp_path / "scratch", arrays={"image": "images"})
    with pytest.raises(SourceFormatError, match="evil.npz: not an .npz file NumPy can read"):
        FORMATS["npz"].random_access(src)  # type: ignore[misc]
