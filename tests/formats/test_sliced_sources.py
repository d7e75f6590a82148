"""Big sources read a slice at a time: .mat (v5 plain and compressed, v7.3/HDF5) and .npz,
and every random-access reader gives the examples its format's sequential reader gives."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.api.builder import DatasetBuilder
from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Text
from catalog.formats import FORMATS, Source
from catalog.formats.arrays.matfile import H5Array, OnDiskArray, mat_arrays
from catalog.spec.load import load_spec
from catalog.testing.harness import dummy_spec
from catalog.testing.http_server import LoopbackServer

from make_dummy_data import cifar_images, cifar_records

scipy_io = pytest.importorskip("scipy.io")
ROOT = Path(__file__).resolve().parents[2]

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


def test_preparing_a_big_compressed_mat_holds_a_few_blocks_in_memory(tmp_path: Path) -> None:
    # svhn_cropped's real spec on an `extra` of 20,000 images (61 MB of pixels) in a
    # compressed .mat, as SVHN ships it: the variable is inflated, streamed, into a staged
    # .npy and read a block of 1024 images at a time, so Python holds about 11 MB, not the array
    # (scipy's loadmat would hold all 61 MB, twice while converting).
    spec = load_spec(ROOT / "builders" / "svhn_cropped")
    counts = {"train": 3, "test": 2, "extra": 20_000}
    for split, count in counts.items():
        pixels = np.repeat(cifar_images(1, seed=count % 7), count, 0).transpose(1, 2, 3, 0)
        labels = (np.arange(count) % 10 + 1).reshape(-1, 1).astype(np.float64)
        mat = {"X": pixels, "y": labels}
        scipy_io.savemat(tmp_path / f"{split}_32x32.mat", mat, do_compression=True)
    array_bytes = 20_000 * 32 * 32 * 3
    with LoopbackServer() as server:
        test_spec = dummy_spec(spec, server, tmp_path, counts)
        b = DatasetBuilder(test_spec, data_dir=tmp_path / "data")
        tracemalloc.start()
        try:
            info = b.download_and_prepare(shard_size=16 << 20)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert info.splits["extra"].num_examples == 20_000
    assert len(info.splits["extra"].shards) > 1
    assert peak < array_bytes / 4, (peak, array_bytes)  # measured: 11 MB
    example = b.as_data_source("extra")[12_345]
    assert example["label"] == (12_345 % 10 + 1) % 10 and example["id"] == "extra_012345"
