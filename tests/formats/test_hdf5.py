"""The hdf5 source format on its own: datasets and columns mapped to features, rows read by
block and by range (random access), and malformed files named with what they hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Tensor, Text
from catalog.formats import FORMATS, Source

FEATURES = FeaturesDict(
    {
        "image": Image((4, 5, 1), encoding="png"),
        "label": ClassLabel(num_classes=3),
        "value": Tensor((), "float32"),
        "id": Text(),
    }
)


def h5(path: Path, **arrays: Any) -> Path:
    with h5py.File(path, "w") as f:
        for name, array in arrays.items():
            f.create_dataset(name.replace("__", "/"), data=array)
    return path


def source(tmp_path: Path, **options: Any) -> Source:
    fmt = FORMATS["hdf5"]
    defaults = {name: option.default for name, option in fmt.options.items()}
    n = 600  # more than one block of rows
    images = (np.arange(n * 20) % 251).astype(np.uint8).reshape(n, 4, 5)
    latents = np.stack([np.arange(n) % 3, np.arange(n) * 7], axis=1)
    main = h5(tmp_path / "x.h5", imgs=images, latents__classes=latents)
    other = h5(tmp_path / "y.h5", v=np.linspace(0, 1, n).reshape(n, 1, 1))
    given = {"files": {"more": other}, "id": "row_{index}", **options}
    given.setdefault("arrays", {"image": "imgs", "label": "latents/classes[0]", "value": "more:v"})
    problem = fmt.problem({**defaults, **given}, FEATURES)
    if problem:
        raise ValueError(problem)
    return Source("train", {"file": (main,)}, {**defaults, **given}, FEATURES)


def test_rows_columns_and_other_files(tmp_path: Path) -> None:
    examples = list(FORMATS["hdf5"].examples(source(tmp_path)))
    assert len(examples) == 600
    key, first = examples[257]
    assert key == "257" and first["id"] == "row_257" and first["label"] == 257 % 3
    assert first["image"].shape == (4, 5, 1) and first["image"][0, 0, 0] == (257 * 20) % 251
    assert first["value"].dtype == np.float32
    assert first["value"] == np.float32(np.linspace(0, 1, 600)[257])


def test_a_range_is_read_without_the_rows_before_it(tmp_path: Path) -> None:
    src = source(tmp_path)
    reader = FORMATS["hdf5"].random_access(src)  # type: ignore[misc]
    try:
        assert reader.length == 600
        part = list(reader.examples(590, 600))
    finally:
        reader.close()
    whole = list(FORMATS["hdf5"].examples(src))[590:600]
    assert [k for k, _ in part] == [k for k, _ in whole]
    for (_, a), (_, b) in zip(part, whole, strict=True):
        np.testing.assert_array_equal(a["image"], b["image"])


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"image": "images", "label": "latents/classes[0]", "value": "more:v"},
         r"x.h5: no HDF5 dataset 'images'; it holds \['imgs', 'latents'"),
        ({"image": "imgs", "label": "latents/classes[2]", "value": "more:v"},
         r"'latents/classes' has shape \(600, 2\), no column 2"),
        ({"image": "imgs", "label": "latents/classes[0]", "value": "latents/classes[1]"},
         None),
    ],
)  # fmt: skip
def test_missing_datasets_and_columns_are_named(
    tmp_path: Path, arrays: dict[str, str], message: str | None
) -> None:
    src = source(tmp_path, arrays=arrays)
    if message is None:  # an int column for a float feature: cast as it is, 7 * 3 = 21.0
        assert list(FORMATS["hdf5"].examples(src))[3][1]["value"] == 21
        return
    with pytest.raises(SourceFormatError, match=message):
        list(FORMATS["hdf5"].examples(src))


def test_datasets_of_different_lengths_are_refused(tmp_path: Path) -> None:
    h5(tmp_path / "short.h5", v=np.zeros(5))
    src = source(tmp_path)
    src = Source("train", src.files, {**src.options, "files": {"more": tmp_path / "short.h5"}},
                 FEATURES)  # fmt: skip
    with pytest.raises(SourceFormatError, match="differ in length: .*imgs 600.*v 5"):
        list(FORMATS["hdf5"].examples(src))


def test_options_are_checked_when_the_spec_loads() -> None:
    fmt = FORMATS["hdf5"]
    defaults = {name: option.default for name, option in fmt.options.items()}
    bad = {**defaults, "arrays": {"image": "nope:x", "label": "y", "value": "z"}, "id": "{index}"}
    assert "'nope' is not a name of options.files" in str(fmt.problem(bad, FEATURES))
    bad["arrays"] = {"image": "x[a]", "label": "y", "value": "z"}
    assert "expected [file:]dataset[column]" in str(fmt.problem(bad, FEATURES))
