"""A folder of user photos mixing PNG and JPEG files (`image_folder`), through the CLI.

Each file is stored as it is, whatever the Image feature's declared encoding (png or jpeg):
its own signature says which it is, and decoding reads it from there. So every prepared
example is its source file byte for byte and decodes to the file's own pixels, `catalog
verify` passes, and no file is re-encoded (a PNG made JPEG would lose pixels). Files the
feature refuses for another reason (an RGBA PNG for an RGB feature, a GIF) still fail, with
the option that re-encodes them named.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog.errors import FeatureError
from catalog.features import Image
from catalog.testing.http_server import LoopbackServer


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=300, env=os.environ,
    )  # fmt: skip


def photo(mode: str, size: tuple[int, int], fmt: str, seed: int) -> bytes:
    """An image file of noise (so a lossy re-encoding could not keep its pixels)."""
    rng = np.random.default_rng(seed)
    channels = {"L": 1, "RGB": 3, "RGBA": 4}[mode]
    width, height = size
    pixels = rng.integers(0, 256, (height, width, channels), dtype=np.uint8)
    out = io.BytesIO()
    PILImage.fromarray(pixels[:, :, 0] if channels == 1 else pixels, mode).save(out, format=fmt)
    return out.getvalue()


#: A user's photos: JPEG and PNG side by side in each class folder, of varying sizes, one a
#: PNG named .jpg, one a grayscale PNG (the RGB feature converts it when decoding).
PHOTOS = {
    "photos/cat/IMG_0001.jpg": photo("RGB", (6, 4), "JPEG", 1),
    "photos/cat/screenshot.png": photo("RGB", (5, 7), "PNG", 2),
    "photos/dog/IMG_0002.JPG": photo("RGB", (9, 3), "JPEG", 3),
    "photos/dog/scan.png": photo("L", (4, 4), "PNG", 4),
    "photos/dog/saved_as.jpg": photo("RGB", (3, 8), "PNG", 5),
}


def zipped(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in sorted(files.items()):
            zf.writestr(name, data)
    return out.getvalue()


def photos_builder(
    root: Path, server: LoopbackServer, encoding: str, files: dict[str, bytes], options: str = ""
) -> Path:
    """A builder folder `mypets` reading `files` (zipped, extracted) with image_folder."""
    data = zipped(files)
    url = server.add(f"/mypets/{encoding}/photos.zip", data)
    folder = root / "mypets"
    folder.mkdir(parents=True)
    (folder / "builder.yaml").write_text(
        "name: mypets\n"
        "version: 1.0.0\n"
        "description: My pets.\n"
        "features:\n"
        f"  image: {{type: Image, shape: [null, null, 3], encoding: {encoding}}}\n"
        "  label: {type: ClassLabel, names: [cat, dog]}\n"
        "downloads:\n"
        f"  photos: {{url: {url}}}\n"
        "splits:\n"
        "  train:\n"
        "    format: image_folder\n"
        "    files: {root: {download: photos, member: photos}}\n"
        f"    options: {{{options}}}\n"
        f"    num_examples: {len(files)}\n"
    )
    digest = hashlib.sha256(data).hexdigest()
    (folder / "checksums.tsv").write_text(f"{url}\t{len(data)}\t{digest}\tphotos.zip\n")
    return folder


def pixels(data: bytes) -> np.ndarray:
    with PILImage.open(io.BytesIO(data)) as img:
        return np.array(img.convert("RGB"))


@pytest.mark.parametrize("encoding", ["jpeg", "png"])
def test_mixed_png_and_jpeg_photos_are_kept_as_they_are(
    encoding: str, tmp_path: Path, server: LoopbackServer
) -> None:
    folder = photos_builder(tmp_path, server, encoding, PHOTOS)
    data = str(tmp_path / "data")
    result = run("prepare", str(folder), "--data-dir", data, "-q")
    assert result.returncode == 0, result.stderr
    result = run("verify", str(folder), "--data-dir", data)
    assert result.returncode == 0, result.stdout + result.stderr

    train = catalog.data_source(str(folder), split="train", data_dir=data)
    stored = catalog.data_source(
        str(folder), split="train", data_dir=data, decoders={"image": False}
    )
    names = train.features["label"].names
    paths = sorted(PHOTOS)  # a directory is read in sorted path order
    assert len(train) == len(paths)
    for i, path in enumerate(paths):
        original = PHOTOS[path]
        assert stored[i]["image"] == original, path  # byte for byte, never re-encoded
        image = train[i]["image"]
        assert image.dtype == np.uint8 and image.flags.writeable
        np.testing.assert_array_equal(image, pixels(original), err_msg=path)
        assert names[train[i]["label"]] == path.split("/")[1]


def test_the_feature_keeps_a_png_or_jpeg_file_whatever_its_encoding() -> None:
    png, jpeg = PHOTOS["photos/cat/screenshot.png"], PHOTOS["photos/cat/IMG_0001.jpg"]
    for encoding in ("png", "jpeg"):
        feature = Image((None, None, 3), encoding=encoding)
        for data in (png, jpeg):
            stored = feature.encode(data)
            assert stored == data
            buf = bytearray(stored)
            np.testing.assert_array_equal(feature.decode(buf, 0, len(buf)), pixels(data))
    # Arrays are still encoded in the declared encoding.
    array = pixels(png)
    assert Image((None, None, 3), encoding="jpeg").encode(array)[:2] == b"\xff\xd8"
    assert Image((None, None, 3), encoding="png").encode(array)[:4] == b"\x89PNG"


def test_other_image_formats_are_still_refused() -> None:
    gif = photo("RGB", (4, 4), "GIF", 6)
    with pytest.raises(FeatureError, match="expected a PNG or JPEG file, got a GIF image; "):
        Image((None, None, 3), encoding="jpeg").encode(gif)


def test_an_mpo_camera_jpeg_is_kept_too() -> None:
    out = io.BytesIO()
    first, second = (
        PILImage.fromarray(pixels(PHOTOS["photos/cat/screenshot.png"]) + i) for i in (0, 9)
    )
    first.save(out, format="MPO", save_all=True, append_images=[second])
    feature = Image((None, None, 3), encoding="jpeg")
    data = out.getvalue()
    assert feature.encode(data) == data
    buf = bytearray(data)
    np.testing.assert_array_equal(feature.decode(buf, 0, len(buf)), pixels(data))


def test_a_refused_photo_is_reencoded_losslessly_with_the_option(
    tmp_path: Path, server: LoopbackServer
) -> None:
    sticker = "photos/cat/sticker.png"  # RGBA: the RGB feature refuses it as it is
    files = {**PHOTOS, sticker: photo("RGBA", (4, 4), "PNG", 7)}
    folder = photos_builder(tmp_path / "strict", server, "jpeg", files)
    data = str(tmp_path / "data")
    result = run("prepare", str(folder), "--data-dir", data, "-q")
    assert result.returncode != 0
    assert "key 'cat/sticker.png'" in result.stderr
    assert "got a PNG image in mode RGBA" in result.stderr
    assert "Traceback" not in result.stderr

    # With the option the RGBA file is decoded (alpha dropped) and stored as a PNG, never a
    # lossy JPEG, so it decodes to exactly its RGB pixels; the others keep their bytes.
    folder = photos_builder(
        tmp_path / "lenient", server, "jpeg", files, options="reencode_invalid: true"
    )
    result = run("prepare", str(folder), "--data-dir", data, "-q")
    assert result.returncode == 0, result.stderr
    assert run("verify", str(folder), "--data-dir", data).returncode == 0
    train = catalog.data_source(str(folder), split="train", data_dir=data)
    stored = catalog.data_source(
        str(folder), split="train", data_dir=data, decoders={"image": False}
    )
    for i, path in enumerate(sorted(files)):
        if path == sticker:
            assert stored[i]["image"] != files[path] and stored[i]["image"][:4] == b"\x89PNG"
        else:
            assert stored[i]["image"] == files[path], path
        np.testing.assert_array_equal(train[i]["image"], pixels(files[path]), err_msg=path)
