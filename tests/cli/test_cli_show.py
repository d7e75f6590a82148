"""`catalog show`: a PNG grid of real Fashion-MNIST examples, checked pixel by pixel."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from catalog.present.show import GridLayout

from conftest import FIRST50
from make_readme_picture import PICTURE, SHOW_ARGS
from make_readme_picture import main as make_readme_picture


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, cwd=cwd, env=os.environ,
    )  # fmt: skip


def load(path: Path) -> np.ndarray:
    with PILImage.open(path) as image:
        return np.asarray(image)


def real_pixels() -> np.ndarray:
    raw = gzip.decompress((FIRST50 / "t10k-images-idx3-ubyte.gz").read_bytes())
    return np.frombuffer(raw, np.uint8, offset=16).reshape(50, 28, 28)


@pytest.fixture
def prepared(first50_builder: Path, tmp_path: Path) -> list[str]:
    """`catalog prepare` of the 50 real images; the arguments naming it for other commands."""
    args = [str(first50_builder), "--data-dir", str(tmp_path / "data")]
    result = run("prepare", *args)
    assert result.returncode == 0, result.stderr
    return args


def cells(picture: np.ndarray, rows: int, columns: int, box: int) -> list[np.ndarray]:
    """Each cell's image box, found from the picture's size alone: cells are equal, and a
    box starts 4 px into its cell."""
    height, width = picture.shape[:2]
    assert height % rows == 0 and width % columns == 0
    cell_h, cell_w = height // rows, width // columns
    assert cell_w == box + 8
    return [
        picture[r * cell_h + 4 : r * cell_h + 4 + box, c * cell_w + 4 : c * cell_w + 4 + box]
        for r in range(rows)
        for c in range(columns)
    ]


def test_show_draws_the_first_examples_in_order(prepared: list[str], tmp_path: Path) -> None:
    out = tmp_path / "grid.png"
    result = run("show", *prepared, "-n", "6", "--columns", "3", "-o", str(out))
    assert result.returncode == 0, result.stderr
    picture = load(out)
    height, width = picture.shape[:2]
    assert result.stdout == f"wrote {out}: 6 examples of first50 test ({width}x{height} px)\n"
    assert picture.ndim == 2  # all grayscale: a grayscale PNG
    assert width == 3 * (84 + 8)
    pixels = real_pixels()
    for i, box in enumerate(cells(picture, 2, 3, 84)):
        # 28x28 scaled by 3 with nearest neighbour: each pixel a 3x3 block, no letterbox.
        np.testing.assert_array_equal(box, np.kron(pixels[i], np.ones((3, 3), np.uint8)))
    # Each caption strip holds dark text on white.
    caption = picture[4 + 84 : picture.shape[0] // 2, : 84 + 8]
    assert caption.min() < 100 and caption.max() == 255


def test_show_with_a_seed_and_a_split_spec(prepared: list[str], tmp_path: Path) -> None:
    out = tmp_path / "seeded.png"
    args = ["show", *prepared, "--split", "test[10:40]", "-n", "4", "--seed", "7", "-o", str(out)]
    assert run(*args).returncode == 0
    # The documented draw: default_rng(seed).choice without replacement, in index order.
    rows = sorted(np.random.default_rng(7).choice(30, size=4, replace=False).tolist())
    pixels = real_pixels()[10:40]
    picture = load(out)
    for row, box in zip(rows, cells(picture, 2, 2, 84), strict=True):
        np.testing.assert_array_equal(box, np.kron(pixels[row], np.ones((3, 3), np.uint8)))
    assert run(*args[:-1], str(tmp_path / "again.png")).returncode == 0
    assert (tmp_path / "again.png").read_bytes() == out.read_bytes()


def test_show_default_output_name_and_split(prepared: list[str], tmp_path: Path) -> None:
    result = run("show", *prepared, "-n", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("wrote first50.png: 2 examples of first50 test")
    assert load(tmp_path / "first50.png").shape[1] == 2 * (84 + 8)


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("--split", "train"), 2, "first50: no split 'train' (in split spec 'train')"),
        (("--split", "test[:"), 2, "test[:"),
        (("--image-key", "label"), 2, "'label' is not an Image feature"),
        (("-o", "/nonexistent-dir/grid.png"), 1, "cannot write /nonexistent-dir/grid.png"),
    ],
)
def test_show_errors_are_one_line(
    prepared: list[str], args: tuple[str, ...], code: int, words: str
) -> None:
    result = run("show", *prepared, *args)
    assert result.returncode == code, result
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("catalog: error: ") and words in result.stderr


def test_show_before_prepare_says_how(first50_builder: Path, tmp_path: Path) -> None:
    result = run("show", str(first50_builder), "--data-dir", str(tmp_path / "empty"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"prepare it first: catalog prepare {first50_builder}" in result.stderr


def test_the_readme_picture_is_what_catalog_show_draws(tmp_path: Path) -> None:
    """docs/fashion_mnist_show.png, made by tests/make_readme_picture.py from the real sample,
    still shows the real images in order (captions are left out: fonts vary by platform)."""
    assert SHOW_ARGS == ("--split", "test", "-n", "32", "--columns", "8")
    committed = load(PICTURE)
    make_readme_picture(tmp_path / "fresh.png")
    fresh = load(tmp_path / "fresh.png")
    assert committed.shape[1] == fresh.shape[1] == 8 * 92
    pixels = real_pixels()
    for picture in (committed, fresh):
        layout = GridLayout(32, 8, 84, picture.shape[0] // 4 - 84 - 8)
        for i in range(32):
            left, top = layout.box_origin(i)
            box = picture[top : top + 84, left : left + 84]
            np.testing.assert_array_equal(box, np.kron(pixels[i], np.ones((3, 3), np.uint8)))
