"""`catalog.torch.collate`: DataLoader batches of a prepared image dataset whose images differ
in size fail with one clear error (the feature, its shapes, the fix), not deep in PyTorch.

A real dataset: photos of varying sizes in an image folder, prepared by ``catalog prepare``
from a loopback HTTP server, read by torch's DataLoader with two worker processes.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog.errors import FeatureError
from catalog.testing.http_server import LoopbackServer
from catalog.torch import collate, to_torch_iter
from catalog.transforms import resize

torch = pytest.importorskip("torch")  # a test-only dependency (the `test` extra pins it)

COUNT = 20


def size(i: int) -> tuple[int, int]:
    """(height, width) of photo i: they vary."""
    return 4 + i % 3, 5 + i % 4


def colour(i: int) -> tuple[int, int, int]:
    return (10 * i, 200 - 5 * i, 7 * i % 256)


def prepare(root: Path, server: LoopbackServer, sizes: list[tuple[int, int]]) -> Path:
    """A builder folder of PNG photos of these sizes (pet/00.png, ...) in one class,
    prepared with the CLI into root/data; returns the data dir."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        for i, (height, width) in enumerate(sizes):
            out = io.BytesIO()
            PILImage.new("RGB", (width, height), colour(i)).save(out, format="PNG")
            zf.writestr(f"photos/pet/{i:02d}.png", out.getvalue())
    data = archive.getvalue()
    url = server.add(f"/{root.name}/photos.zip", data)
    folder = root / "pets"
    folder.mkdir(parents=True)
    (folder / "builder.yaml").write_text(
        "name: pets\nversion: 1.0.0\n"
        "features:\n"
        "  image: {type: Image, shape: [null, null, 3]}\n"
        "  label: {type: ClassLabel, names: [pet]}\n"
        "  filename: {type: Text}\n"
        f"downloads:\n  photos: {{url: {url}}}\n"
        "splits:\n  train:\n    format: image_folder\n"
        "    files: {root: {download: photos, member: photos}}\n"
        "    options: {text_features: {filename: name}}\n"
        f"    num_examples: {len(sizes)}\n"
    )
    (folder / "checksums.tsv").write_text(
        f"{url}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}\tphotos.zip\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(folder), "--data-dir",
         str(root / "data"), "-q"],
        capture_output=True, text=True, timeout=300, env=os.environ,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture
def varying(tmp_path: Path, server: LoopbackServer) -> Any:
    folder = prepare(tmp_path / "varying", server, [size(i) for i in range(COUNT)])
    return catalog.data_source(folder, split="train", data_dir=tmp_path / "varying" / "data")


def test_images_of_different_sizes_fail_with_one_clear_error(varying: Any) -> None:
    loader = torch.utils.data.DataLoader(varying, batch_size=8, num_workers=2, collate_fn=collate)
    with pytest.raises(FeatureError) as info:
        list(loader)
    # The first batch (examples 0..7) holds eight sizes: the first four are named.
    line = (
        "feature 'image': arrays of different shapes in one batch of 8 cannot be stacked into "
        "a tensor: (4, 5, 3) in example 0, (5, 6, 3) in example 1, (6, 7, 3) in example 2, "
        "(4, 8, 3) in example 3, and 4 more; give them one shape before batching: resize them "
        "with catalog.transforms.resize in catalog.pipeline(ds).map(...).batch(n) (then "
        "catalog.torch.to_torch_iter), or pad them to one shape in a collate_fn of your own"
    )
    assert line in str(info.value)  # in a worker: torch adds the worker's traceback
    assert "resize storage" not in str(info.value)

    loader = torch.utils.data.DataLoader(varying, batch_size=8, collate_fn=collate)
    with pytest.raises(FeatureError) as info:
        next(iter(loader))
    assert str(info.value) == line  # no workers: the error itself
    assert info.value.feature_path == "image"


def test_the_fix_the_error_gives_works(varying: Any) -> None:
    def resized(example: dict[str, Any]) -> dict[str, Any]:
        return {**example, "image": resize(example["image"], (6, 6))}

    pipe = catalog.pipeline(varying).map(resized).batch(8)
    batches = list(to_torch_iter(pipe))
    assert [tuple(b["image"].shape) for b in batches] == [(8, 6, 6, 3)] * 2 + [(4, 6, 6, 3)]
    images = torch.cat([b["image"] for b in batches]).numpy()
    assert all((images[i] == colour(i)).all() for i in range(COUNT))  # one colour each


def test_one_size_collates_as_torch_does(tmp_path: Path, server: LoopbackServer) -> None:
    folder = prepare(tmp_path / "same", server, [(5, 7)] * 10)
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "same" / "data")
    loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, collate_fn=collate)
    batches = list(loader)
    assert [b["image"].shape for b in batches] == [(4, 5, 7, 3)] * 2 + [(2, 5, 7, 3)]
    assert batches[0]["image"].dtype == torch.uint8
    assert batches[0]["label"].dtype == torch.int64
    assert batches[0]["filename"] == ["00.png", "01.png", "02.png", "03.png"]
    expected = torch.utils.data.default_collate([ds[i] for i in range(4)])
    assert torch.equal(batches[0]["image"], expected["image"])
    np.testing.assert_array_equal(batches[2]["image"][1].numpy(), np.full((5, 7, 3), colour(9)))


def test_nested_features_lists_and_tuples_are_named() -> None:
    def boxes(n: int) -> dict[str, Any]:
        return {"objects": {"bbox": np.zeros((n, 4), np.float32)}, "label": 1}

    with pytest.raises(FeatureError, match=r"^feature 'objects/bbox': arrays of different "
                       r"shapes in one batch of 3 cannot be stacked into a tensor: \(1, 4\) in "
                       r"example 0, \(2, 4\) in example 2; "):  # fmt: skip
        collate([boxes(1), boxes(1), boxes(2)])
    with pytest.raises(FeatureError, match=r"^feature 'tokens': lists of different lengths "
                       r"in one batch of 2 cannot be stacked into a tensor: length 2 in example "
                       r"0, length 3 in example 1; "):  # fmt: skip
        collate([{"tokens": [1, 2]}, {"tokens": [1, 2, 3]}])
    image = np.zeros((2, 2, 3), np.uint8)
    with pytest.raises(FeatureError, match=r"^item \[0\] of the examples: arrays of different"):
        collate([(image, 0), (image[:1], 1)])
    batch = collate([(image, 0), (image, 1)])
    assert batch[0].shape == (2, 2, 2, 3) and batch[1].tolist() == [0, 1]
