"""catalog.transforms.random_resized_crop and center_crop_resize.

The window follows torchvision's RandomResizedCrop (area fraction in `scale`, aspect ratio
log-uniform in `ratio`, 10 tries, then the centred fallback); on file bytes only the window
is decoded, at the smallest scale that covers the output, and gives the same picture as
cropping the decoded array; in a pipeline the crops are a pure function of (seed, epoch,
example), so two runs, thread workers and a resumed iterator all give the same batches.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
import simplejpeg

import catalog
from catalog import transforms as T
from catalog.transforms.crops import crop_window
from tests.photos import photo
from tests.transforms.test_photo_resize import PSNR_DB, psnr

Array = np.ndarray[Any, Any]


def test_windows_follow_torchvisions_distribution() -> None:
    rng = np.random.default_rng(0)
    areas, ratios = [], []
    for _ in range(3000):
        top, left, h, w = T.random_resized_crop_window((375, 500), rng)
        assert top >= 0 and top + h <= 375 and left >= 0 and left + w <= 500
        areas.append(h * w / (375 * 500))
        ratios.append(w / h)
    # rounding to whole pixels moves the bounds by a little
    assert min(areas) >= 0.075 and max(areas) <= 1.0
    assert min(ratios) >= 0.73 and max(ratios) <= 1.37
    # log-uniform ratio: as many crops wider than tall as taller than wide
    wide = np.mean(np.array(ratios) > 1)
    assert 0.4 < wide < 0.6
    # area uniform in [0.08, 1], but a large area at an extreme ratio does not fit and is
    # drawn again, which favours smaller areas (torchvision's too): median ~0.42 at 4:3
    assert 0.38 < np.median(areas) < 0.47


def test_the_fallback_is_the_centred_window_of_the_clamped_ratio() -> None:
    rng = np.random.default_rng(0)
    # an area of the whole image at ratio 2 never fits a square: centred, ratio clamped to 2
    assert T.random_resized_crop_window((100, 100), rng, scale=(1, 1), ratio=(2, 2)) == (
        25, 0, 50, 100,
    )  # fmt: skip
    assert T.random_resized_crop_window((100, 300), rng, scale=(1, 1), ratio=(1, 1)) == (
        0, 100, 100, 100,
    )  # fmt: skip
    with pytest.raises(ValueError, match="scale and ratio"):
        T.random_resized_crop_window((10, 10), rng, scale=(0.5, 0.1))


def test_a_crop_of_bytes_is_the_crop_of_the_decoded_array() -> None:
    data = photo(375, 500, 1)
    full = T.decode_image(data)
    for seed in range(30):
        from_bytes = T.random_resized_crop(data, 96, np.random.default_rng(seed))
        from_array = T.random_resized_crop(full, 96, np.random.default_rng(seed))
        assert from_bytes.shape == from_array.shape == (96, 96, 3)
        # the same window; bytes may come from a smaller DCT scale
        assert psnr(from_bytes, from_array) >= PSNR_DB, seed
    # a window that needs full size: decoded at full size, identical
    big = T.random_resized_crop(data, 400, np.random.default_rng(7))
    assert np.array_equal(big, T.random_resized_crop(full, 400, np.random.default_rng(7)))


def test_only_the_scale_the_window_needs_is_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    shapes: list[tuple[int, ...]] = []
    original = simplejpeg.decode_jpeg

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        shapes.append(out.shape)
        return out

    monkeypatch.setattr(simplejpeg, "decode_jpeg", spy)
    data = photo(800, 800, 2)
    rng = np.random.default_rng(3)
    for _ in range(20):
        seed = int(rng.integers(1 << 30))
        window = T.random_resized_crop_window((800, 800), np.random.default_rng(seed))
        T.random_resized_crop(data, 32, np.random.default_rng(seed))
        _, _, h, w = window
        m = next((m for m in (1, 2, 3, 4) if h * m / 8 >= 32 and w * m / 8 >= 32), 8)
        assert shapes[-1][:2] == (math.ceil(800 * m / 8),) * 2, (window, shapes[-1])
    # the evaluation crop of an 800x800 photo to 96: the window (the image) at 1/8 = 100
    T.center_crop_resize(data, 96)
    assert shapes[-1][:2] == (100, 100)


def test_center_crop_resize_keeps_the_middle_at_the_output_ratio() -> None:
    image = np.zeros((300, 400, 3), np.uint8)
    image[:, 50:350] = 255  # the centred 300x300 square is white
    out = T.center_crop_resize(image, (60, 60))
    assert out.shape == (60, 60, 3) and out.min() == 255
    assert crop_window((300, 400), (60, 60)) == (0, 50, 300, 300)
    # torchvision's Resize(256) + CenterCrop(224): a 224/256 window of the short side
    assert crop_window((256, 512), (224, 224), crop_fraction=224 / 256) == (16, 144, 224, 224)
    wide = crop_window((300, 400), (30, 80))
    assert wide == (75, 0, 150, 400)
    data = photo(375, 500, 4)
    from_bytes = T.center_crop_resize(data, (224, 224), crop_fraction=0.875)
    from_array = T.center_crop_resize(T.decode_image(data), (224, 224), crop_fraction=0.875)
    assert psnr(from_bytes, from_array) >= PSNR_DB
    with pytest.raises(ValueError, match="crop_fraction"):
        T.center_crop_resize(data, 10, crop_fraction=1.5)


def augment(example: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    image = T.random_flip(T.random_resized_crop(example["image"], 24, rng), rng)
    return {"image": image, "label": example["label"]}


def test_crops_in_a_pipeline_repeat_exactly_and_resume_exactly() -> None:
    source = [{"image": photo(60 + 7 * i, 90 - 3 * i, i), "label": i} for i in range(12)]
    p = catalog.pipeline(source).shuffle(3).repeat(2).map(augment, with_rng=True).batch(4)
    full = list(p)
    again = list(p.prefetch(2, "thread"))
    assert len(full) == 6
    for a, b in zip(full, again, strict=True):
        assert np.array_equal(a["image"], b["image"]) and np.array_equal(a["label"], b["label"])
    # the two epochs crop the same example differently (per-epoch random numbers)
    first, second = (np.concatenate([b["image"] for b in full[k : k + 3]]) for k in (0, 3))
    labels = [np.concatenate([b["label"] for b in full[k : k + 3]]) for k in (0, 3)]
    order = [np.argsort(x) for x in labels]
    assert not np.array_equal(first[order[0]], second[order[1]])
    it = p.iterator()
    head = [next(it) for _ in range(2)]
    state = json.loads(json.dumps(it.state_dict()))
    it.close()
    rest = list(p.iterator(state))
    for a, b in zip(head + rest, full, strict=True):
        assert np.array_equal(a["image"], b["image"])
