"""HDF5 and MATLAB sources checked before they are read (issue 49): rows of the wrong shape,
rows and storage chunks over the byte budget (filter bombs: a small file that inflates to
gigabytes) are refused before any row is read; a truncated compressed .mat ends with an
error, not an endless loop; a value that is not a whole number where an integer belongs
(a label, an id) is an error, never truncated (1.7 -> 1). Files written by h5py and scipy."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import scipy.io

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Tensor
from catalog.formats import FORMATS, Source

FEATURES = FeaturesDict(
    {"image": Image((4, 5, 1), encoding="png"), "label": ClassLabel(num_classes=3)}
)


def hdf5_source(path: Path, features: FeaturesDict = FEATURES, **arrays: str) -> Source:
    fmt = FORMATS["hdf5"]
    options = {name: option.default for name, option in fmt.options.items()}
    options["arrays"] = arrays or {"image": "imgs", "label": "labels"}
    return Source("train", {"file": (path,)}, options, features)


def read_hdf5(source: Source) -> list[Any]:
    return list(FORMATS["hdf5"].examples(source))


def test_a_float_label_that_is_not_whole_is_an_error_naming_file_dataset_and_row(
    tmp_path: Path,
) -> None:
    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:
        f["imgs"] = np.zeros((3, 4, 5), np.uint8)
        f["labels"] = np.array([1.0, 2.0, 1.7])
    with pytest.raises(SourceFormatError) as raised:
        read_hdf5(hdf5_source(path))
    message = str(raised.value)
    assert "x.h5: '/labels' row 2 (feature 'label')" in message
    assert "1.7" in message and "not a whole number" in message
    with h5py.File(path, "a") as f:
        f["labels"][2] = 2.0  # whole floats are integers, as the `mat` reader reads them
    assert [e["label"] for _, e in read_hdf5(hdf5_source(path))] == [1, 2, 2]


def test_an_integer_tensor_given_fractions_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:
        f["v"] = np.array([[1.0, 2.5], [3.0, 4.0]])
    features = FeaturesDict({"v": Tensor((2,), "int64")})
    with pytest.raises(SourceFormatError, match=r"'/v' row 0 .* 2\.5 at index 1"):
        read_hdf5(hdf5_source(path, features, v="v"))


def test_rows_of_the_wrong_shape_are_refused_before_they_are_read(tmp_path: Path) -> None:
    """A 596 GiB MemoryError before: the rows were read whole, then found not to fit."""
    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:  # nothing written: the file stays small
        f.create_dataset("imgs", (1000, 40000, 40000), np.uint8, chunks=(1, 100, 100))
        f["labels"] = np.zeros(1000)
    assert path.stat().st_size < 1 << 20
    with pytest.raises(SourceFormatError, match=r"'/imgs' has rows of shape \(40000, 40000\); "):
        read_hdf5(hdf5_source(path))


def test_rows_and_chunks_over_the_budget_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("big", (4, 9000, 9000), np.uint8, chunks=(1, 1000, 1000))
        f.create_dataset("chunk", (100_000, 1000), np.uint8, chunks=(70_000, 1000))
        f["labels"] = np.zeros(4)
    features = FeaturesDict({"image": Tensor((None, None), "uint8")})
    with pytest.raises(SourceFormatError, match="rows of 81000000 bytes; catalog reads rows of"):
        read_hdf5(hdf5_source(path, features, image="big"))
    features = FeaturesDict({"image": Tensor((1000,), "uint8")})
    with pytest.raises(SourceFormatError, match="chunks of 70000000 bytes .*h5repack"):
        read_hdf5(hdf5_source(path, features, image="chunk"))


def test_large_rows_are_read_in_smaller_blocks(tmp_path: Path) -> None:
    """A block of rows holds at most BLOCK_BYTES (256 rows of 8 MiB were 2 GiB)."""
    from catalog.formats.arrays import hdf5

    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=np.arange(12, dtype=np.float64).reshape(6, 2))
    features = FeaturesDict({"v": Tensor((2,), "float64")})
    source = hdf5_source(path, features, v="v")
    reader = hdf5._Datasets(source)
    assert reader._block == 256
    reader.close()
    old = hdf5.BLOCK_BYTES
    try:
        hdf5.BLOCK_BYTES = 32  # two rows of 16 bytes
        reader = hdf5._Datasets(source)
        assert reader._block == 2
        rows = [e["v"].tolist() for _, e in reader.examples(1, 6)]
        reader.close()
    finally:
        hdf5.BLOCK_BYTES = old
    assert rows == [[2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]


TRUNCATED = """\
import sys
from pathlib import Path
from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image
from catalog.formats import FORMATS, Source

fmt = FORMATS["mat"]
options = {name: option.default for name, option in fmt.options.items()}
features = FeaturesDict({"image": Image((8, 8, 3)), "label": ClassLabel(num_classes=10)})
source = Source("train", {"mat": (Path(sys.argv[1]),)}, options, features, Path(sys.argv[2]))
try:
    list(fmt.examples(source))
except SourceFormatError as error:
    print("refused:", error)
"""


def test_a_truncated_compressed_mat_ends_with_an_error_not_a_loop(tmp_path: Path) -> None:
    """It looped forever in matfile._Inflated.read; run in a process with a time limit."""
    path = tmp_path / "x.mat"
    images = (np.arange(8 * 8 * 3 * 50) % 251).astype(np.uint8).reshape(8, 8, 3, 50)
    scipy.io.savemat(path, {"X": images, "y": np.arange(50) % 10}, do_compression=True)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(TRUNCATED), str(path), str(tmp_path / "scratch")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused:") and "x.mat" in done.stdout, done.stdout


def test_mat_ids_that_are_not_whole_numbers_are_refused(tmp_path: Path) -> None:
    """oxford_flowers102's imagelabels.mat read through `mat_ids`: 1.7 was taken as 1."""
    root = tmp_path / "jpg"
    root.mkdir()
    scipy.io.savemat(tmp_path / "labels.mat", {"labels": np.array([[1.0, 1.7]])})
    scipy.io.savemat(tmp_path / "ids.mat", {"ids": np.array([[1, 2]])})
    fmt = FORMATS["mat_ids"]
    options = {name: option.default for name, option in fmt.options.items()}
    files = {"root": (root,), "labels": (tmp_path / "labels.mat",), "ids": (tmp_path / "ids.mat",)}
    features = FeaturesDict({"image": Image(), "label": ClassLabel(num_classes=3)})
    with pytest.raises(
        SourceFormatError, match=r"labels.mat: array 'labels': value 1.7 at index 1"
    ):
        list(fmt.examples(Source("train", files, options, features)))


def test_mat_examples_are_read_in_blocks_within_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks of 1024 examples of large images were read at once; now a block holds at most
    BLOCK_BYTES, and an example over EXAMPLE_BYTES is refused before it is read."""
    from catalog.formats.arrays import mat

    path = tmp_path / "x.mat"
    images = (np.arange(4 * 4 * 3 * 5) % 251).astype(np.uint8).reshape(4, 4, 3, 5)
    scipy.io.savemat(path, {"X": images, "y": np.arange(5).reshape(5, 1)})
    fmt = FORMATS["mat"]
    options = {name: option.default for name, option in fmt.options.items()}
    features = FeaturesDict({"image": Image((4, 4, 3)), "label": ClassLabel(num_classes=10)})
    source = Source("train", {"mat": (path,)}, options, features, tmp_path / "scratch")
    monkeypatch.setattr(mat, "BLOCK_BYTES", 2 * 48)  # two examples of 48 bytes
    reader = mat._Arrays(source)
    assert reader._block == 2
    got = [e["image"] for _, e in reader.examples(0, 5)]
    for i, image in enumerate(got):
        np.testing.assert_array_equal(image, images[..., i])
    monkeypatch.setattr(mat, "EXAMPLE_BYTES", 47)
    with pytest.raises(SourceFormatError, match="holds 48 bytes per example; catalog reads"):
        mat._Arrays(source)
