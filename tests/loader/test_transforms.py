"""catalog.transforms: image decoding, resizing (JPEG draft mode), crops, flips, scaling."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage

from catalog import transforms as T


def jpeg(height: int, width: int) -> bytes:
    """A smooth picture (gradients and a slow wave), as photos are at small scales."""
    r, c = np.ogrid[:height, :width]
    pixels = np.stack(
        [255 * r / height + 0 * c, 255 * c / width + 0 * r, 127 + 100 * np.sin(r / 25 + c / 40)],
        axis=-1,
    )
    out = io.BytesIO()
    PILImage.fromarray(pixels.astype(np.uint8)).save(out, format="JPEG", quality=95)
    return out.getvalue()


def test_decode_image_gives_pixels_in_the_asked_channels() -> None:
    data = jpeg(40, 30)
    rgb = T.decode_image(data)
    assert rgb.shape == (40, 30, 3) and rgb.dtype == np.uint8
    assert T.decode_image(data, channels=1).shape == (40, 30, 1)
    with pytest.raises(ValueError, match="not an image file"):
        T.decode_image(b"nope")


def test_resize_from_jpeg_bytes_uses_draft_mode_and_matches_a_full_decode() -> None:
    data = jpeg(480, 400)
    fast = T.resize(data, (60, 50))  # 1/8 scale: draft mode decodes 60x50 directly
    full = T.resize(T.decode_image(data), (60, 50))
    assert fast.shape == full.shape == (60, 50, 3)
    assert np.abs(fast.astype(int) - full.astype(int)).mean() < 3  # the same picture
    with PILImage.open(io.BytesIO(data)) as img:
        img.draft("RGB", (50, 60))
        assert img.size == (50, 60)  # what resize relies on: Pillow decodes at 1/8 scale
    assert T.resize(data, (500, 600)).shape == (500, 600, 3)  # enlarging: no draft
    assert T.resize(np.zeros((5, 5, 1), np.uint8), (3, 2)).shape == (3, 2, 1)


def test_random_crop_and_flip_are_reproducible_and_copy() -> None:
    image = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)
    a = T.random_crop(image, (4, 4), np.random.default_rng(1))
    b = T.random_crop(image, (4, 4), np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4, 4, 3) and not np.shares_memory(a, image)
    corners = {
        int(T.random_crop(image, (4, 4), np.random.default_rng(s))[0, 0, 0]) for s in range(50)
    }
    assert len(corners) > 5  # several positions
    flips = [T.random_flip(image, np.random.default_rng(s)) for s in range(20)]
    assert any(np.array_equal(f, image[:, ::-1]) for f in flips)
    assert any(np.array_equal(f, image) for f in flips)
    assert all(f.flags.c_contiguous and not np.shares_memory(f, image) for f in flips)
    np.testing.assert_array_equal(T.center_crop(image, (2, 2)), image[2:4, 3:5])
    with pytest.raises(ValueError, match="cannot crop 7x4"):
        T.random_crop(image, (7, 4), np.random.default_rng(0))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int64])
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_flips_of_every_layout_equal_numpy_s(dtype: Any, channels: int) -> None:
    full = np.arange(7 * 10 * channels * 2).astype(dtype).reshape(7, 10, channels * 2)
    for image in (full[:, :, :channels].copy(), full[1:6, ::2, ::2]):  # contiguous, a view
        seen = set()
        for seed in range(40):
            got = T.random_flip(image, np.random.default_rng(seed), vertical=True)
            assert got.dtype == image.dtype and got.flags.c_contiguous
            assert not np.shares_memory(got, full)
            match = [
                (h, v)
                for h in (0, 1)
                for v in (0, 1)
                if np.array_equal(got, image[:: -1 if v else 1, :: -1 if h else 1])
            ]
            assert match
            seen.update(match)
        assert seen == {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_rescale_and_normalize() -> None:
    image = np.array([[[0, 255, 51]]], np.uint8)
    np.testing.assert_allclose(T.rescale(image), [[[0, 1, 0.2]]], rtol=1e-6)
    np.testing.assert_allclose(T.rescale(image, 1 / 127.5, -1), [[[-1, 1, -0.6]]], rtol=1e-6)
    out: Any = T.normalize(image, mean=(0, 0.5, 0.2), std=(1, 0.5, 0.1))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[[0, 1, 0]]], atol=1e-6)


def test_every_result_is_a_writable_array_of_its_own() -> None:
    """The module's promise: an augmentation may change its result in place (``img -= mean``)
    and a cached input is never changed. Pillow's array view of an image is read-only."""
    photo = jpeg(80, 60)
    png = io.BytesIO()
    PILImage.fromarray(np.zeros((20, 30), np.uint8)).save(png, format="PNG")
    image = T.decode_image(photo)
    rng = np.random.default_rng(0)
    results = {
        "decode_image(jpeg)": T.decode_image(photo),
        "decode_image(png, 1)": T.decode_image(png.getvalue(), channels=1),
        "resize(jpeg bytes, draft)": T.resize(photo, (20, 15)),
        "resize(jpeg bytes, enlarging)": T.resize(photo, (100, 90)),
        "resize(png bytes)": T.resize(png.getvalue(), (10, 10), channels=1),
        "resize(array)": T.resize(image, (40, 30)),
        "resize(1-channel array)": T.resize(image[:, :, :1], (40, 30)),
        "random_crop": T.random_crop(image, (40, 30), rng),
        "center_crop": T.center_crop(image, (40, 30)),
        "random_flip": T.random_flip(image, rng),
        "rescale": T.rescale(image),
        "normalize": T.normalize(image, 0.5, 0.25),
    }
    for name, out in results.items():
        assert out.flags.writeable, f"{name} is read-only"
        assert out.flags.c_contiguous, f"{name} is not C-contiguous"
        assert not np.shares_memory(out, image), f"{name} shares the input's memory"
        out[...] = 0  # and it can be changed in place
