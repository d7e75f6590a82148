"""catalog.features.image_decode: the photo path's decoder keeps pixels honest.

A full-size decode equals Pillow's (JPEG: the same libjpeg-turbo IDCT, measured bit-exact on
these files; PNG: exact, lossless), on generated photos and on the 50 real Fashion-MNIST
images. Each file takes its fixed route (simplejpeg, OpenCV, Pillow), and the fast routes
never touch Pillow: a test replaces Pillow's open with a failure and still decodes. A
damaged file is a SourceFormatError, and a prepared record that holds one is named (shard and
record) by the data source.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage

from catalog.errors import SourceFormatError
from catalog.features import Image, image_decode
from tests.conftest import FIRST50
from tests.photos import photo

Array = np.ndarray[Any, Any]


def pillow(data: bytes, mode: str = "RGB") -> Array:
    with PILImage.open(io.BytesIO(data)) as img:
        return np.asarray(img.convert(mode))


def png(pixels: Array) -> bytes:
    out = io.BytesIO()
    PILImage.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def first50() -> Array:
    raw = gzip.decompress((FIRST50 / "t10k-images-idx3-ubyte.gz").read_bytes())
    return np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)


# -- honest pixels ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "save",
    [{}, {"subsampling": 0}, {"progressive": True}, {"quality": 75, "subsampling": 1}],
    ids=["420", "444", "progressive", "q75-422"],
)
def test_a_full_size_jpeg_decode_equals_pillows(save: dict[str, Any]) -> None:
    """Measured: max and mean absolute difference 0 on every file here (same IDCT)."""
    for seed, (h, w) in enumerate([(375, 500), (201, 333), (17, 9)]):
        data = photo(h, w, seed, **save)
        assert image_decode.decoder_for(data) == "simplejpeg"
        ours = image_decode.decode(data)
        assert ours.shape == (h, w, 3) and ours.dtype == np.uint8 and ours.flags.writeable
        assert np.abs(ours.astype(int) - pillow(data)).max() == 0


def test_grayscale_jpegs_decode_as_pillow_does_in_every_channel_count() -> None:
    gray = pillow(photo(64, 48), "L")
    out = io.BytesIO()
    PILImage.fromarray(gray).save(out, format="JPEG", quality=90)
    data = out.getvalue()
    assert np.array_equal(image_decode.decode(data, 1)[:, :, 0], pillow(data, "L"))
    assert np.array_equal(image_decode.decode(data, 3), pillow(data, "RGB"))
    assert np.array_equal(image_decode.decode(data, 4), pillow(data, "RGBA"))


def test_the_50_real_fashion_mnist_images_as_png_decode_exactly() -> None:
    images = first50()
    for image in images:
        data = png(image)
        assert image_decode.decoder_for(data, 1) == "opencv"
        assert image_decode.decoder_for(data, 3) == "pillow"  # gray -> RGB: Pillow converts
        assert np.array_equal(image_decode.decode(data, 1)[:, :, 0], image)
        assert np.array_equal(image_decode.decode(data, 3), pillow(data, "RGB"))


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "P", "LA", "I;16"])
def test_pngs_of_every_kind_decode_to_pillows_pixels(mode: str) -> None:
    rng = np.random.default_rng(3)
    if mode == "I;16":
        img = PILImage.fromarray(rng.integers(0, 65536, (20, 30), np.uint16))
    else:
        img = PILImage.fromarray(rng.integers(0, 256, (20, 30, 4), np.uint8), "RGBA")
        img = img.convert("RGB").convert("P") if mode == "P" else img.convert(mode)
    out = io.BytesIO()
    img.save(out, format="PNG")
    data = out.getvalue()
    for channels, target in ((1, "L"), (3, "RGB"), (4, "RGBA")):
        if mode == "I;16" and channels != 1:
            continue  # Pillow itself cannot convert I;16 to RGB
        assert np.array_equal(
            image_decode.decode(data, channels), pillow(data, target).reshape(20, 30, channels)
        )


def test_a_window_at_a_scale_covers_what_was_asked_and_matches_the_full_decode() -> None:
    data = photo(400, 480, 5)
    full = image_decode.decode(data)
    # the whole image at >= 50x60: 1/8 scale exactly
    assert image_decode.decode(data, at_least=(50, 60)).shape == (50, 60, 3)
    assert image_decode.decode(data, at_least=(51, 60)).shape == (100, 120, 3)  # 2/8
    # 5/8, 6/8, 7/8 run without SIMD (slower than full size): full size instead
    assert image_decode.jpeg_scale(400, 480, (201, 10)) == 8
    assert image_decode.decode(data, at_least=(201, 10)).shape == (400, 480, 3)
    window = (100, 40, 200, 240)
    cut = image_decode.decode(data, window=window)
    assert np.array_equal(cut, full[100:300, 40:280])
    small = image_decode.decode(data, window=window, at_least=(50, 60))
    assert small.shape == (50, 60, 3)  # the window at 1/4 scale
    quarter = image_decode.decode(data, at_least=(100, 120))
    assert np.array_equal(small, quarter[25:75, 10:70])
    with pytest.raises(ValueError, match="not inside"):
        image_decode.decode(data, window=(300, 0, 200, 10))


def test_the_fast_routes_never_touch_pillow(no_pillow: None) -> None:
    data = photo(120, 160)
    assert image_decode.decode(data).shape == (120, 160, 3)
    assert image_decode.decode(data, window=(0, 0, 60, 60), at_least=(30, 30)).shape[0] >= 30
    assert image_decode.image_size(data) == (120, 160)
    gray = png(first50()[0])
    assert np.array_equal(image_decode.decode(gray, 1)[:, :, 0], first50()[0])
    feature = Image(shape=(None, None, 3), encoding="jpeg")
    buf = bytearray(b"xx" + data)
    assert feature.decode(buf, 2, len(data)).shape == (120, 160, 3)
    with pytest.raises(SourceFormatError, match="fell back"):  # the guard itself works
        image_decode.decode(png(np.zeros((4, 4, 3), np.uint8)), 1)


# -- damaged files ------------------------------------------------------------------------
def test_corrupt_and_truncated_files_are_one_clear_error() -> None:
    data = photo(120, 160)
    cases = {
        "truncated JPEG": data[: len(data) // 2],
        "JPEG without its end": data[:-2],
        "not an image": b"\xff\xd8\xff" + b"\x00" * 40,
        "truncated PNG": png(first50()[1])[:-30],
        "garbage": b"hello",
    }
    for name, bad in cases.items():
        with pytest.raises(SourceFormatError, match=r"damaged|not an image file") as caught:
            image_decode.decode(bad, 1 if "PNG" in name else 3)
        assert f"{len(bad)} bytes" in str(caught.value), name


def test_a_truncated_jpeg_in_a_prepared_dataset_names_its_record(tmp_path: Path) -> None:
    """A truncated JPEG passes prepare (its header is fine); reading it names the shard and
    the record, whether the data source decodes it or a transform does."""
    from catalog import pipeline
    from catalog import transforms as T
    from catalog.api.builder import DatasetBuilder
    from catalog.errors import PipelineError
    from catalog.spec.load import load_spec
    from catalog.testing.harness import dummy_spec
    from catalog.testing.http_server import LoopbackServer

    root = Path(__file__).resolve().parents[2]
    source = tmp_path / "source"
    source.mkdir()
    files = [photo(60 + i, 80, i) for i in range(4)]
    files[2] = files[2][: len(files[2]) * 2 // 3]
    with tarfile.open(source / "flower_photos.tgz", "w:gz") as tar:
        for i, data in enumerate(files):
            info = tarfile.TarInfo(f"flower_photos/daisy/{i:03d}.jpg")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    spec = load_spec(root / "builders" / "tf_flowers")
    with LoopbackServer() as server:
        builder = DatasetBuilder(dummy_spec(spec, server, source, {"train": 4}), data_dir=tmp_path)
        builder.download_and_prepare(download_dir=tmp_path / "downloads")
    raw = builder.as_data_source("train", decoders={"image": False})
    (bad,) = [i for i in range(4) if raw[i]["image"] == files[2]]  # stored as it was
    ds = builder.as_data_source("train")
    with pytest.raises(
        SourceFormatError, match=r"record \d+ \(split 'train'\) cannot be"
    ) as caught:
        ds[bad]
    assert "damaged JPEG" in str(caught.value) and "Premature end" in str(caught.value)
    assert ".array_record" in str(caught.value) or "shard" in str(caught.value)
    for i in set(range(4)) - {bad}:  # one damaged record costs that record only
        assert ds[i]["image"].shape[1] == 80

    def crop(example: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        return {**example, "image": T.random_resized_crop(example["image"], 32, rng)}

    damaged = rf"failed on example {bad} of epoch 0: SourceFormatError: a damaged JPEG"
    with pytest.raises(PipelineError, match=damaged):
        list(pipeline(raw).map(crop, with_rng=True))
