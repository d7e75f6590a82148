"""One pixel budget for every image decode (catalog.features.pixel_budget): a file whose header
claims more pixels than the budget is one error naming the file or record, before anything is
allocated, on every route (simplejpeg, OpenCV, Pillow, foreign records, a folder's inference
and prepare); the budget is Pillow's default unless $CATALOG_MAX_IMAGE_PIXELS or an argument
says otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog.errors import FeatureError, SourceFormatError
from catalog.features import Image, image_decode, pixel_budget
from catalog.transforms import decode_image
from tests.bombs import claiming, small
from tests.conftest import catalog_cli

ROOT = Path(__file__).resolve().parents[2]
BOMB = claiming(small("JPEG", size=64), 60000, 60000)  # 3 KB claiming 3.6e9 pixels

MEMORY_CAPPED = """\
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from catalog.transforms import decode_image
try:
    decode_image(open(sys.argv[1], "rb").read())
except Exception as error:
    print(type(error).__name__, error)
"""


def test_a_jpeg_bomb_is_refused_from_its_header_before_any_allocation(tmp_path: Path) -> None:
    """3 KB claiming 60000x60000: 10 GiB if decoded. Run under a 3 GiB address-space cap, so
    the allocation the fast path used to attempt fails the test instead of the machine."""
    assert len(BOMB) < 4000
    (tmp_path / "bomb.jpg").write_bytes(BOMB)
    (tmp_path / "run.py").write_text(MEMORY_CAPPED)
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    run = subprocess.run(
        [sys.executable, str(tmp_path / "run.py"), str(tmp_path / "bomb.jpg")],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("OverBudgetError a JPEG file of"), run.stdout
    assert "claims 60000x60000 pixels" in run.stdout and "CATALOG_MAX_IMAGE_PIXELS" in run.stdout


@pytest.mark.parametrize(
    ("data", "route", "kind"),
    [
        (small("JPEG"), "simplejpeg", "JPEG"),
        (small("PNG"), "opencv", "PNG"),
        (small("PNG", "P"), "pillow", "image"),  # palette: Pillow
        (small("JPEG", "CMYK"), "pillow", "JPEG"),  # CMYK: Pillow
        (small("GIF"), "pillow", "image"),
        (small("BMP"), "pillow", "image"),
    ],
    ids=["jpeg", "png", "palette-png", "cmyk-jpeg", "gif", "bmp"],
)
def test_every_decoder_route_keeps_the_budget(data: bytes, route: str, kind: str) -> None:
    assert image_decode.decoder_for(data) == route
    assert image_decode.decode(data).shape[:2] == (16, 16)  # 256 pixels: within the default
    with pytest.raises(pixel_budget.OverBudgetError, match=rf"a {kind} file of {len(data)} b"):
        image_decode.decode(data, max_pixels=255)
    with pytest.raises(SourceFormatError, match="16x16 pixels .*more than the 100 an image"):
        decode_image(data, max_pixels=100)


def test_the_environment_sets_the_budget_and_pillows_own_limit_does_not_lift_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = small("PNG")
    monkeypatch.setenv("CATALOG_MAX_IMAGE_PIXELS", "100")
    with pytest.raises(SourceFormatError, match="more than the 100 an image may have"):
        decode_image(data)
    assert decode_image(data, max_pixels=256).shape == (16, 16, 3)  # the argument first
    monkeypatch.setenv("CATALOG_MAX_IMAGE_PIXELS", "many")
    with pytest.raises(SourceFormatError, match="not a positive number of pixels"):
        decode_image(data)
    monkeypatch.delenv("CATALOG_MAX_IMAGE_PIXELS")
    big = claiming(small("PNG"), 20000, 10000)  # 2e8: over Pillow's hard limit (2x its own)
    monkeypatch.setattr(PILImage, "MAX_IMAGE_PIXELS", None)  # a program lifted Pillow's
    with pytest.raises(pixel_budget.OverBudgetError, match="20000x10000 pixels"):
        pixel_budget.open_image(big, "big.png")
    monkeypatch.setattr(PILImage, "MAX_IMAGE_PIXELS", pixel_budget.DEFAULT)
    monkeypatch.setenv("CATALOG_MAX_IMAGE_PIXELS", "300_000_000")  # a budget raised on purpose
    with pixel_budget.open_image(big, "big.png") as img:  # the header only: Pillow agrees
        assert img.size == (10000, 20000)


def test_foreign_records_and_files_for_a_feature_are_refused_naming_the_feature() -> None:
    feature = Image(shape=(None, None, 3), encoding="jpeg")
    for call in (feature.check_file, feature.decode_file, feature.encode):
        with pytest.raises(FeatureError, match="claims 60000x60000 pixels") as caught:
            call(BOMB)
        assert "decompression bomb" in str(caught.value)
    png = claiming(small("PNG"), 20000, 10000)
    with pytest.raises(FeatureError, match="20000x10000 pixels"):
        Image(shape=(None, None, 3), encoding="png").encode(png)


def folder_with_a_bomb(root: Path) -> Path:
    for label in ("cat", "dog"):
        (root / "train" / label).mkdir(parents=True)
        for i in range(2):
            (root / "train" / label / f"{i}.jpg").write_bytes(small("JPEG"))
    (root / "train" / "cat" / "bomb.jpg").write_bytes(BOMB)
    return root


def test_catalog_prepare_of_a_folder_with_a_bomb_is_one_error_naming_the_file(
    tmp_path: Path,
) -> None:
    folder = folder_with_a_bomb(tmp_path / "photos")
    run = catalog_cli("prepare", str(folder), "--data-dir", str(tmp_path / "data"))
    assert run.returncode == 3, run.stderr
    assert "Traceback" not in run.stderr and "PIL" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("catalog: error")]
    assert len(lines) == 1 and "bomb.jpg" in lines[0], run.stderr
    assert "claims 60000x60000 pixels" in lines[0]
    with pytest.raises(SourceFormatError, match="bomb.jpg: it claims 60000x60000"):
        catalog.prepare_files(folder, data_dir=tmp_path / "data")


def test_a_prepared_record_over_the_budget_names_shard_and_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prepared with a budget raised on purpose, read with the default one."""
    monkeypatch.setenv("CATALOG_MAX_IMAGE_PIXELS", str(60000 * 60000))
    folder = folder_with_a_bomb(tmp_path / "photos")
    builder = catalog.prepare_files(folder, data_dir=tmp_path / "data")
    monkeypatch.delenv("CATALOG_MAX_IMAGE_PIXELS")
    ds = builder.as_data_source("train")
    refused = {}
    for i in range(len(ds)):
        try:
            assert np.asarray(ds[i]["image"]).shape == (16, 16, 3)
        except SourceFormatError as error:
            refused[i] = str(error)
    assert len(refused) == 1 and len(ds) == 5, refused
    [(bad, message)] = refused.items()
    assert f"record {bad}" in message and "array_record" in message, message
    assert "claims 60000x60000 pixels" in message
