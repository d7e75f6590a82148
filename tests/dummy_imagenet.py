"""The ImageNet family's dummy files, in the exact upstream layout: ILSVRC2012_img_train.tar
is a tar of per-class tars (with a CMYK JPEG and a PNG named .JPEG where the real ones are),
ILSVRC2012_img_val.tar a flat tar whose archive order is not the sorted order of its names.
The values tests/builders/test_builders_imagenet.py checks come from here."""

from __future__ import annotations

import io
from pathlib import Path

from dummy_images import jpeg, out_dir, png, tar_bytes

BUILDERS = Path(__file__).resolve().parent.parent / "builders"

#: train: (class, file name, (height, width), colour, kind) in archive order; kind is how
#: the file is written: "jpeg", "gray" (a grayscale JPEG), "cmyk" (a CMYK JPEG), "png".
TRAIN = [
    ("n01440764", "n01440764_10026.JPEG", (6, 8), (200, 30, 30), "jpeg"),
    ("n01440764", "n01440764_39.JPEG", (5, 5), (30, 200, 30), "gray"),
    ("n01739381", "n01739381_1309.JPEG", (4, 6), (0, 255, 255, 0), "cmyk"),  # a CMYK one
    ("n01739381", "n01739381_77.JPEG", (7, 3), (30, 30, 200), "jpeg"),
    ("n02105855", "n02105855_2933.JPEG", (5, 4), (250, 200, 10), "png"),  # the PNG one
]
#: validation: (file name, (height, width), colour) in archive order (not sorted)
VALIDATION = [
    ("ILSVRC2012_val_00000003.JPEG", (5, 7), (10, 10, 10)),
    ("ILSVRC2012_val_00000001.JPEG", (6, 6), (100, 120, 140)),
    ("ILSVRC2012_val_00000004.JPEG", (3, 8), (220, 20, 120)),
    ("ILSVRC2012_val_00000002.JPEG", (8, 5), (40, 240, 40)),
]
#: the first lines of TFDS's validation_labels.txt: the labels of val_00000001..4
VALIDATION_LABELS = ["n01751748", "n09193705", "n02105855", "n04263257"]


def image_file(kind: str, size: tuple[int, int], colour: tuple[int, ...]) -> bytes:
    from PIL import Image

    height, width = size
    if kind == "jpeg":
        return jpeg(height, width, colour)  # type: ignore[arg-type]
    if kind == "png":
        return png(height, width, colour)
    out = io.BytesIO()
    if kind == "gray":
        Image.new("L", (width, height), colour[0]).save(out, format="JPEG", quality=90)
    else:
        Image.new("CMYK", (width, height), colour).save(out, format="JPEG", quality=90)
    return out.getvalue()


def train_files() -> dict[str, bytes]:
    return {name: image_file(kind, size, colour) for _, name, size, colour, kind in TRAIN}


def validation_files() -> dict[str, bytes]:
    return {name: image_file("jpeg", size, colour) for name, size, colour in VALIDATION}


def train_tar() -> bytes:
    files = train_files()
    inner: dict[str, dict[str, bytes]] = {}
    for label, name, *_ in TRAIN:
        inner.setdefault(f"{label}.tar", {})[name] = files[name]
    return tar_bytes({name: tar_bytes(members) for name, members in inner.items()})


def make_imagenet2012() -> None:
    out = out_dir("imagenet2012")
    (out / "ILSVRC2012_img_train.tar").write_bytes(train_tar())
    (out / "ILSVRC2012_img_val.tar").write_bytes(tar_bytes(validation_files()))
    (out / "validation_labels.txt").write_text("".join(f"{x}\n" for x in VALIDATION_LABELS))


MAKERS = {"imagenet2012": make_imagenet2012}
