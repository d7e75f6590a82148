"""TFDS builders that read image files out of an archive with ``dl_manager.iter_archive``
(tf_flowers, beans, rock_paper_scissors), from archives re-made in their upstream layout in a
``--mirror`` dir: the images are the files' own pixels, labels from the folder names."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from tfds_files import SKIP_REASON

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

from PIL import Image as PILImage
from tfds_files import mirror_file, tar_gz

import catalog
from catalog.download import DownloadConfig

Picture = tuple[str, bytes]  # (label, image file)


def _picture(size: int, seed: int, fmt: str) -> bytes:
    i, j, c = np.ogrid[:size, :size, :3]
    pixels = ((7 * i + 3 * j + 90 * c + 37 * seed) % 256).astype(np.uint8)
    buffer = io.BytesIO()
    PILImage.fromarray(pixels).save(buffer, format=fmt, quality=90)
    return buffer.getvalue()


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _flowers() -> tuple[dict[str, bytes], dict[str, list[Picture]]]:
    pictures = [("daisy", _picture(40, 1, "JPEG")), ("roses", _picture(24, 2, "JPEG")),
                ("tulips", _picture(32, 3, "JPEG"))]  # fmt: skip
    files = {f"flower_photos/{label}/{k}.jpg": data for k, (label, data) in enumerate(pictures)}
    files["flower_photos/LICENSE.txt"] = b"not an image"
    return {"http://download.tensorflow.org/example_images/flower_photos.tgz": tar_gz(files)}, {
        "train": pictures
    }


def _beans() -> tuple[dict[str, bytes], dict[str, list[Picture]]]:
    splits = {
        "train": [("healthy", _picture(500, 4, "JPEG")), ("bean_rust", _picture(500, 5, "JPEG"))],
        "validation": [("angular_leaf_spot", _picture(500, 6, "JPEG"))],
        "test": [("healthy", _picture(500, 7, "JPEG"))],
    }
    urls = {}
    for split, pictures in splits.items():
        files = {f"{split}/{label}/{k}.jpg": data for k, (label, data) in enumerate(pictures)}
        urls[f"https://storage.googleapis.com/ibeans/{split}.zip"] = _zip(files)
    return urls, splits


def _rock_paper_scissors() -> tuple[dict[str, bytes], dict[str, list[Picture]]]:
    splits = {
        "train": [("rock", _picture(300, 8, "PNG")), ("paper", _picture(300, 9, "PNG"))],
        "test": [("scissors", _picture(300, 10, "PNG"))],
    }
    base = "https://storage.googleapis.com/download.tensorflow.org/data/"
    folders = {"train": ("rps.zip", "rps"), "test": ("rps-test-set.zip", "rps-test-set")}
    urls = {}
    for split, pictures in splits.items():
        name, folder = folders[split]
        files = {
            f"{folder}/{label}/{label}{k}.png": data for k, (label, data) in enumerate(pictures)
        }
        files[f"{folder}/README.txt"] = b"skipped by the builder"
        urls[base + name] = _zip(files)
    return urls, splits


@pytest.mark.parametrize(
    ("name", "make"),
    [("tf_flowers", _flowers), ("beans", _beans), ("rock_paper_scissors", _rock_paper_scissors)],
)
def test_images_out_of_an_archive(
    name: str,
    make: Callable[[], tuple[dict[str, bytes], dict[str, list[Picture]]]],
    tmp_path: Path,
) -> None:
    urls, expected = make()
    mirror = tmp_path / "mirror"
    for url, body in urls.items():
        mirror_file(mirror, url, body)
    config = DownloadConfig(
        download_dir=tmp_path / "dl", mirrors=[str(mirror)], offline=True,
        register_checksums=True, progress="none",
    )  # fmt: skip
    sources = catalog.data_source(f"tfds:{name}", data_dir=tmp_path / "data",
                                  download_config=config)  # fmt: skip
    assert isinstance(sources, dict) and set(sources) == set(expected)
    for split, pictures in expected.items():
        ds = sources[split]
        names = ds.features["label"].names
        got = sorted((names[int(ds[i]["label"])], ds[i]["image"].tobytes()) for i in range(len(ds)))
        want = sorted(
            (label, np.asarray(PILImage.open(io.BytesIO(data)).convert("RGB")).tobytes())
            for label, data in pictures
        )
        assert [label for label, _ in got] == [label for label, _ in want]
        for (_, pixels), (_, reference) in zip(got, want, strict=True):
            assert pixels == reference  # the file's own pixels (PNG; JPEG kept byte for byte)
