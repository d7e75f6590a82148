"""catalog.transforms.resize on photos: scaled JPEG decode, OpenCV resize, antialiasing.

File bytes are decoded at the smallest covering scale (checked on the decoder's own
output, not inferred), Pillow is never used for them, a shrink by more than 2x is
antialiased by default (a striped pattern does not alias), and the result stays within a
stated PSNR of a reference resize (Pillow's full-size decode and antialiased bilinear
resize): 30 dB, where these photos measure 32-41 dB.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
import simplejpeg
from PIL import Image as PILImage

from catalog import transforms as T
from catalog.errors import SourceFormatError
from tests.photos import photo

Array = np.ndarray[Any, Any]
PSNR_DB = 30.0


def psnr(a: Array, b: Array) -> float:
    mse = float(np.mean((a.astype(np.float64) - b) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255**2 / mse)


def reference(data: bytes, size: tuple[int, int]) -> Array:
    with PILImage.open(io.BytesIO(data)) as img:
        resized = img.convert("RGB").resize(size[::-1], PILImage.Resampling.BILINEAR)
        return np.asarray(resized)


@pytest.fixture
def decoded_shapes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The shape of every image simplejpeg decodes during the test."""
    shapes: list[tuple[int, ...]] = []
    original = simplejpeg.decode_jpeg

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        shapes.append(out.shape)
        return out

    monkeypatch.setattr(simplejpeg, "decode_jpeg", spy)
    return shapes


def test_jpeg_bytes_are_decoded_at_the_smallest_covering_scale(
    decoded_shapes: list[tuple[int, ...]],
) -> None:
    data = photo(400, 480)
    cases = [
        ((48, 60), (50, 60)),  # 1/8
        ((51, 60), (100, 120)),  # 2/8
        ((120, 150), (150, 180)),  # 3/8
        ((192, 192), (200, 240)),  # 4/8
        ((224, 224), (400, 480)),  # 5/8 would cover, but runs without SIMD: full size
        ((500, 500), (400, 480)),  # enlarging: full size
    ]
    for size, decoded in cases:
        assert T.resize(data, size).shape == (*size, 3)
        assert decoded_shapes[-1][:2] == decoded, size


def test_photo_bytes_never_go_through_pillow(no_pillow: None) -> None:
    data = photo(300, 200)
    assert T.resize(data, (64, 64)).shape == (64, 64, 3)
    assert T.resize(data, (64, 64), channels=1).shape == (64, 64, 1)
    assert T.decode_image(data).shape == (300, 200, 3)
    rng = np.random.default_rng(0)
    assert T.random_resized_crop(data, 32, rng).shape == (32, 32, 3)
    assert T.center_crop_resize(data, (40, 30)).shape == (40, 30, 3)


@pytest.mark.parametrize("size", [(192, 192), (64, 64), (100, 180)])
def test_resized_photos_stay_within_the_stated_psnr_of_a_reference_resize(
    size: tuple[int, int],
) -> None:
    for seed, (h, w) in enumerate([(375, 500), (333, 250), (480, 480), (210, 300)]):
        data = photo(h, w, seed)
        ours = T.resize(data, size)
        assert psnr(ours, reference(data, size)) >= PSNR_DB, (seed, size)
        array = T.resize(T.decode_image(data), size)  # the same from decoded pixels
        assert psnr(array, reference(data, size)) >= PSNR_DB, (seed, size)


def stripes(height: int, width: int, period: float) -> Array:
    """Vertical stripes near the pixel frequency: any shrink past 2x aliases them unless it
    averages first."""
    x = np.arange(width)
    row = 127.5 + 127.5 * np.cos(2 * np.pi * x / period)
    return np.repeat(np.tile(row, (height, 1))[:, :, None], 3, axis=2).astype(np.uint8)


@pytest.mark.parametrize("period", [2.0, 2.2, 2.5, 3.0])
def test_the_default_resize_does_not_alias_a_striped_pattern(period: float) -> None:
    image = stripes(400, 400, period)
    smooth = T.resize(image, (47, 47))
    assert smooth.std() < 10 and abs(smooth.mean() - 127.5) < 5  # a flat grey, as it should
    aliased = T.resize(image, (47, 47), antialias=False)
    assert aliased.std() > 40  # plain bilinear sampling: moire (the check can fail)
    assert T.resize(image, (47, 47), method="bicubic").std() < 10
    assert T.resize(image, (47, 47), method="nearest").std() > 40  # nearest never averages


def test_no_aliasing_from_jpeg_bytes_either() -> None:
    out = io.BytesIO()
    PILImage.fromarray(stripes(400, 400, 2.2)).save(out, format="JPEG", quality=95)
    data = out.getvalue()
    # 1/8 scale gives 50x50 (the DCT averages); 2.5x more is left: area averaging
    smooth = T.resize(data, (20, 20))
    assert smooth.std() < 10
    assert T.resize(data, (20, 20), antialias=False).std() > smooth.std()


def test_resize_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        T.resize(photo(10, 10), (5, 5), method="fancy")
    with pytest.raises(ValueError, match="size must be"):
        T.resize(np.zeros((4, 4, 3), np.uint8), (0, 3))
    with pytest.raises(SourceFormatError, match="damaged JPEG"):
        T.resize(photo(50, 50)[:300], (10, 10))
    image = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    assert T.resize(image, 3).shape == (3, 3, 3)  # an int: square
    same = T.resize(image, (4, 6))
    assert np.array_equal(same, image) and not np.shares_memory(same, image)
    gray = T.resize(image, (4, 6), channels=1)
    assert gray.shape == (4, 6, 1)
