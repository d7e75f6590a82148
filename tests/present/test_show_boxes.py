"""`catalog show` on a detection dataset: each object's box outlined in its class's colour,
with its class name, on the prepared VOC dummy images."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image as PILImage

from catalog.present.show import BOX_COLOURS, BOXES_MAX_SIDE, PAD, fit, render_grid
from catalog.testing.harness import run_builder

from dummy_images import PETS, PETS_IMAGES, VOC_IMAGES, VOC_SPLITS

ROOT = Path(__file__).resolve().parents[2]


def colour_extent(cell: np.ndarray, colour: tuple[int, int, int]) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) of the pixels of exactly `colour` in `cell`."""
    rows, cols = np.nonzero((cell == colour).all(axis=2))
    assert len(rows), f"no pixel of colour {colour}"
    return int(rows.min()), int(cols.min()), int(rows.max()), int(cols.max())


def test_render_grid_outlines_each_box_where_it_is() -> None:
    image = np.full((40, 50, 3), 128, np.uint8)
    boxes = [[((0.25, 0.1, 0.75, 0.9), 3, "boat")]]
    grid = np.asarray(render_grid([image], ["0: 1 object"], boxes=boxes))
    height, width = fit(40, 50, BOXES_MAX_SIDE)  # 120 x 150: scaled up 3 times
    assert (height, width) == (120, 150)
    top = PAD + (width - height) // 2  # centred in a square box of side 150
    y0, x0, y1, x1 = colour_extent(grid, BOX_COLOURS[3])
    assert (y0, x0) == (top + round(0.25 * 119), PAD + round(0.1 * 149))
    assert (y1, x1) == (top + round(0.75 * 119), PAD + round(0.9 * 149))  # lines drawn inward
    inside = grid[top + 60, PAD + 75]  # the middle of the box: the image itself
    assert inside.tolist() == [128, 128, 128]


def test_catalog_show_draws_voc_boxes_and_class_names(tmp_path: Path) -> None:
    counts = {split: len(ids) for split, (_, _, ids) in VOC_SPLITS.items()}
    folder = tmp_path / "voc"  # a builder folder of the dummy spec prepared, for the CLI
    run_builder(ROOT / "builders" / "voc", tmp_path, num_examples=counts, spec_folder=folder)
    out = tmp_path / "voc.png"
    result = subprocess.run(
        [sys.executable, "-m", "catalog", "show", str(folder), "--data-dir", str(tmp_path / "data"),
         "--split", "train", "--columns", "2", "-o", str(out)],
        capture_output=True, text=True, timeout=120, env=os.environ,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with PILImage.open(out) as picture:
        grid = np.asarray(picture.convert("RGB"))
    cell_width = grid.shape[1] // 2
    first, second = grid[:, :cell_width], grid[:, cell_width:]
    # 000012: one car (class 6) at x 5..45 of 50, y 10..30 of 40, drawn 3x (150 x 120) and
    # centred in the grid's box, whose side (180) is 000017's 60 px drawn 3x.
    left = PAD + (180 - 150) // 2
    y0, x0, y1, x1 = colour_extent(first, BOX_COLOURS[6])
    assert (x0, x1) == (left + round(5 / 50 * 149), left + round(45 / 50 * 149))
    assert y1 - y0 == round(30 / 40 * 119) - round(10 / 40 * 119)
    # 000017: a person (14) and a horse (12), in their own colours; no car colour.
    colour_extent(second, BOX_COLOURS[14 % len(BOX_COLOURS)])
    colour_extent(second, BOX_COLOURS[12 % len(BOX_COLOURS)])
    assert not (second == BOX_COLOURS[6]).all(axis=2).any()
    assert VOC_IMAGES["000012"][3][0][0] == "Car"


def test_catalog_show_draws_a_single_bbox_feature(tmp_path: Path) -> None:
    counts = {split: len(lines) for split, lines in PETS.items()}
    folder = tmp_path / "oxford_iiit_pet"
    run_builder(
        ROOT / "builders" / "oxford_iiit_pet", tmp_path, num_examples=counts, spec_folder=folder
    )
    out = tmp_path / "pets.png"
    result = subprocess.run(
        [sys.executable, "-m", "catalog", "show", str(folder), "--data-dir",
         str(tmp_path / "data"), "--columns", "3", "-o", str(out)],
        capture_output=True, text=True, timeout=120, env=os.environ,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with PILImage.open(out) as picture:
        grid = np.asarray(picture.convert("RGB"))
    cells = np.split(grid, 3, axis=1)
    # Abyssinian_100 (label 0): head box (0.1, 0.1, 0.5, 0.5) of a 20x30 image drawn 6x
    # (120 x 180), centred in the grid's 192-px box (Egyptian_Mau_14's 12 px drawn 16x).
    y0, x0, y1, x1 = colour_extent(cells[0], BOX_COLOURS[0])
    top, left = PAD + (192 - 120) // 2, PAD + (192 - 180) // 2
    assert (y0, x0, y1, x1) == (top + round(0.1 * 119), left + round(0.1 * 179),
                                top + round(0.5 * 119), left + round(0.5 * 179))  # fmt: skip
    # yorkshire_terrier_7 (label 36): its box is the whole image.
    colour_extent(cells[1], BOX_COLOURS[36 % len(BOX_COLOURS)])
    # Egyptian_Mau_14 has no head box (0, 0, 0, 0): nothing drawn in its class's colour.
    assert not (cells[2] == BOX_COLOURS[11 % len(BOX_COLOURS)]).all(axis=2).any()
    assert PETS_IMAGES["Egyptian_Mau_14"][2] is None
