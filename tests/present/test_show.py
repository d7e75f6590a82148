"""catalog.present.show: sampling, scaling, letterboxing, grayscale/RGB/RGBA, which features to
draw."""

from __future__ import annotations

import numpy as np
import pytest

from catalog.features import ClassLabel, FeaturesDict, Image, Scalar, Text
from catalog.present.show import LETTERBOX, GridLayout, fit, pick_features, render_grid, sample


def test_sample_is_the_first_rows_or_a_seeded_draw_in_index_order() -> None:
    assert sample(100, 5) == [0, 1, 2, 3, 4]
    assert sample(3, 16) == [0, 1, 2]
    drawn = sample(1000, 10, seed=3)
    assert drawn == sorted(np.random.default_rng(3).choice(1000, 10, replace=False).tolist())
    assert drawn == sample(1000, 10, seed=3) != sample(1000, 10, seed=4)
    assert sample(5, 10, seed=1) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("size", "drawn"),
    [
        ((28, 28), (84, 84)),  # whole factor 3
        ((32, 32), (96, 96)),
        ((96, 96), (96, 96)),
        ((10, 20), (40, 80)),  # factor 4, aspect kept
        ((1, 1), (96, 96)),
        ((200, 100), (96, 48)),  # scaled down to fit
        ((300, 1), (96, 1)),
    ],
)
def test_fit(size: tuple[int, int], drawn: tuple[int, int]) -> None:
    assert fit(*size) == drawn


def test_rgb_images_of_varying_size_are_letterboxed() -> None:
    rng = np.random.default_rng(0)
    wide = rng.integers(0, 255, (10, 20, 3), dtype=np.uint8)
    tall = rng.integers(0, 255, (48, 24, 3), dtype=np.uint8)
    gray = rng.integers(0, 255, (28, 28, 1), dtype=np.uint8)
    big = rng.integers(0, 255, (300, 200, 3), dtype=np.uint8)
    grid = render_grid([wide, tall, gray, big], ["0: a", "1: b", "2: c", "3: d"])
    assert grid.mode == "RGB"
    layout = GridLayout(4, 2, 96, grid.height // 2 - 96 - 8)
    assert grid.size == layout.size == (2 * 104, grid.height)
    picture = np.asarray(grid)

    def box(i: int) -> np.ndarray:
        left, top = layout.box_origin(i)
        return picture[top : top + 96, left : left + 96]

    # wide: 40x80 (factor 4) centred in the 96 box, gray above and below.
    np.testing.assert_array_equal(box(0)[28:68, 8:88], np.kron(wide, np.ones((4, 4, 1), np.uint8)))
    assert (box(0)[:28] == LETTERBOX).all() and (box(0)[68:] == LETTERBOX).all()
    # tall: 96x48 (factor 2), gray left and right.
    np.testing.assert_array_equal(box(1)[:, 24:72], np.kron(tall, np.ones((2, 2, 1), np.uint8)))
    assert (box(1)[:, :24] == LETTERBOX).all()
    # grayscale in an RGB grid: the same level in every channel.
    expected = np.kron(gray[:, :, 0], np.ones((3, 3), np.uint8))
    for channel in range(3):
        np.testing.assert_array_equal(box(2)[6:90, 6:90, channel], expected)
    # big: scaled down to 96x64, aspect kept.
    assert (box(3)[:, :16] == LETTERBOX).all() and not (box(3)[:, 16:80] == LETTERBOX).all()


def test_grayscale_grid_and_rgba_over_gray() -> None:
    gray = np.full((28, 28), 7, np.uint8)  # a 2-D array is grayscale too
    grid = render_grid([gray, gray[:, :, None]], ["a", "b"])
    assert grid.mode == "L" and grid.size[0] == 2 * (84 + 8)
    clear = np.zeros((32, 32, 4), np.uint8)
    clear[:16, :, :] = (255, 0, 0, 255)  # opaque red top, transparent bottom
    grid = render_grid([clear], ["red"])
    picture = np.asarray(grid)
    assert picture[4 + 10, 4 + 10].tolist() == [255, 0, 0]
    assert picture[4 + 80, 4 + 10].tolist() == [LETTERBOX] * 3


def test_long_captions_are_cut_to_the_cell() -> None:
    grid = render_grid([np.zeros((28, 28, 1), np.uint8)], ["9: " + "a very long class name " * 5])
    assert grid.size[0] == 92  # the caption did not widen the cell


def test_render_grid_refuses_what_it_cannot_draw() -> None:
    with pytest.raises(ValueError, match="uint8"):
        render_grid([np.zeros((4, 4), np.float32)], ["x"])
    with pytest.raises(ValueError, match="shape"):
        render_grid([np.zeros((4, 4, 2), np.uint8)], ["x"])
    with pytest.raises(ValueError, match="2 images but 1 captions"):
        render_grid([np.zeros((4, 4), np.uint8)] * 2, ["x"])


def test_pick_features() -> None:
    features = FeaturesDict(
        {
            "id": Text(),
            "thumb": Image(shape=(8, 8, 3)),
            "photo": Image(shape=(None, None, 3)),
            "coarse": ClassLabel(num_classes=2),
            "fine": ClassLabel(names=["a", "b", "c"]),
        }
    )
    assert pick_features(features) == ("thumb", "coarse")
    assert pick_features(features, ("photo", "fine")) == ("photo", "fine")
    assert pick_features(features, image_key="photo") == ("photo", "coarse")
    with pytest.raises(ValueError, match="'id' is not an Image feature; the features are: id"):
        pick_features(features, image_key="id")
    no_image = FeaturesDict({"x": Scalar("float32"), "label": ClassLabel(num_classes=2)})
    with pytest.raises(ValueError, match=r"no Image feature to show; the features are: x \("):
        pick_features(no_image)
    assert pick_features(FeaturesDict({"image": Image(shape=(4, 4, 1))})) == ("image", None)
