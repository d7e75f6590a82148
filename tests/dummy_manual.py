"""Dummy files of the manual downloads with no published checksum (resisc45,
diabetic_retinopathy_detection, imagenet2012's test tar), in each source's exact layout.

`python tests/make_dummy_data.py NAME` writes them (NAME as in `MAKERS`); the constants here
are what tests/builders/test_builders_manual.py checks the prepared examples against.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from dummy_images import jpeg, out_dir, tar_bytes

#: resisc45: (class folder, file name, RGB colour) under NWPU-RESISC45/, in sorted path order.
RESISC45 = [
    ("airplane", "airplane_001.jpg", (200, 200, 210)),
    ("airplane", "airplane_700.jpg", (180, 190, 200)),
    ("sea_ice", "sea_ice_010.jpg", (240, 250, 255)),
    ("wetland", "wetland_100.jpg", (40, 120, 60)),
]
#: A file of a class folder that is no .jpg: the reference catalog's glob leaves it out.
RESISC45_JUNK = "NWPU-RESISC45/airplane/Thumbs.db"


def make_resisc45() -> None:
    out = out_dir("resisc45", "NWPU-RESISC45")
    for label, name, colour in RESISC45:
        (out / label).mkdir(exist_ok=True)
        (out / label / name).write_bytes(jpeg(256, 256, colour))
    (out.parent / RESISC45_JUNK).write_bytes(b"not an image")


#: diabetic_retinopathy_detection: folder -> [(image name, (height, width))]; the labels:
#: trainLabels.csv's rows (name, level) and the solution file's (name, level, Usage).
RETINA_IMAGES = {
    "sample": [("10_left", (90, 120)), ("10_right", (100, 130)), ("13_left", (80, 80))],
    "train": [("10_left", (90, 120)), ("10_right", (600, 500)), ("15_left", (120, 160))],
    "test": [("1_left", (110, 150)), ("1_right", (96, 128)), ("3_left", (70, 100)),
             ("5_right", (120, 120))],
}  # fmt: skip
RETINA_TRAIN_LABELS = [("10_left", 0), ("10_right", 2), ("15_left", 4)]
RETINA_SOLUTION = [("1_left", 0, "Private"), ("1_right", 1, "Public"),
                   ("3_left", 3, "Private"), ("5_right", 2, "Public")]  # fmt: skip


def retina_pixels(folder: str, name: str, size: tuple[int, int]) -> np.ndarray[Any, Any]:
    """A fundus-like photo: a dark frame around a bright disc of shaded colours."""
    height, width = size
    seed = sum(map(ord, folder + name))
    y, x = np.ogrid[:height, :width]
    radius = 0.42 * min(height, width)
    inside = (y - height / 2) ** 2 + (x - width / 2) ** 2 <= radius**2
    image = np.zeros((height, width, 3), np.uint8)
    shade = np.stack(
        [(120 + seed % 60 + y // 2 + 0 * x), (60 + x // 3 + 0 * y), (30 + (x + y + seed) % 40)],
        axis=-1,
    )
    image[inside] = np.clip(shade, 0, 255).astype(np.uint8)[inside]
    return image


def retina_jpeg(folder: str, name: str, size: tuple[int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(retina_pixels(folder, name, size)).save(out, format="JPEG", quality=90)
    return out.getvalue()


def make_diabetic_retinopathy_detection() -> None:
    out = out_dir("diabetic_retinopathy_detection")
    for folder, images in RETINA_IMAGES.items():
        (out / folder).mkdir(exist_ok=True)
        for name, size in images:
            (out / folder / f"{name}.jpeg").write_bytes(retina_jpeg(folder, name, size))
    (out / "sample" / "readme.txt").write_text("not an image: left out\n")
    train = "".join(f"{name},{level}\n" for name, level in RETINA_TRAIN_LABELS)
    (out / "trainLabels.csv").write_text("image,level\n" + train)
    rows = "".join(f"{name},{level},{usage}\n" for name, level, usage in RETINA_SOLUTION)
    (out / "retinopathy_solution.csv").write_text("image,level,Usage\n" + rows)


#: imagenet2012's test tar (flat, as the validation tar): (file name, (height, width), colour)
#: in archive order.
IMAGENET_TEST = [
    ("ILSVRC2012_test_00000002.JPEG", (6, 5), (90, 30, 160)),
    ("ILSVRC2012_test_00000001.JPEG", (4, 7), (250, 250, 20)),
    ("ILSVRC2012_test_00100000.JPEG", (5, 5), (0, 100, 200)),
]


def imagenet_test_files() -> dict[str, bytes]:
    return {name: jpeg(*size, colour) for name, size, colour in IMAGENET_TEST}


def make_imagenet2012_test() -> None:
    out = out_dir("imagenet2012")
    (out / "ILSVRC2012_img_test.tar").write_bytes(tar_bytes(imagenet_test_files()))


MAKERS = {
    "resisc45": make_resisc45,
    "diabetic_retinopathy_detection": make_diabetic_retinopathy_detection,
    "imagenet2012_test": make_imagenet2012_test,
}
