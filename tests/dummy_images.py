"""Dummy files of the image datasets (emnist ... voc), in each source's exact layout.

`python tests/make_dummy_data.py NAME` writes them (NAME as in `MAKERS`); the constants here
are what tests/builders/test_builders_images.py checks the prepared examples against.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

BUILDERS = Path(__file__).resolve().parent.parent / "builders"
_DATE = (1980, 1, 1, 0, 0, 0)

#: emnist config -> (seed, num_classes, {split: count})
EMNIST = {
    "byclass": (1, 62, {"train": 4, "test": 3}),
    "bymerge": (2, 47, {"train": 3, "test": 2}),
    "balanced": (3, 47, {"train": 3, "test": 2}),
    "letters": (4, 37, {"train": 3, "test": 2}),
    "digits": (5, 10, {"train": 2, "test": 2}),
    "mnist": (6, 10, {"train": 2, "test": 1}),
}
EMNIST_SPLIT_SEED = {"train": 0, "test": 50}


def out_dir(name: str, *sub: str) -> Path:
    out = BUILDERS.joinpath(name, "dummy_data", *sub)
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_zip(path: Path, members: dict[str, bytes]) -> None:
    """A zip of `members` (name -> bytes), the same bytes each run."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, _DATE), data, zipfile.ZIP_DEFLATED)


def tar_bytes(members: dict[str, bytes], compression: str = "") -> bytes:
    """A tar (`compression` "" or "gz") of `members` and their directories, fixed metadata."""
    import gzip

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        dirs: set[str] = set()
        for name in members:
            parts = name.split("/")[:-1]
            dirs |= {"/".join(parts[: i + 1]) for i in range(len(parts))}
        for name in sorted(dirs):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    return gzip.compress(data, mtime=0) if compression == "gz" else data


def idx_bytes(array: np.ndarray[Any, Any]) -> bytes:
    """An IDX file's bytes, gzip'd."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return write_idx(Path(tmp) / "x.gz", array).read_bytes()


def emnist_arrays(config: str, split: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    seed, classes, counts = EMNIST[config]
    offset = seed + EMNIST_SPLIT_SEED[split]
    return (
        pattern_images(counts[split], seed=offset),
        pattern_labels(counts[split], classes, seed=offset),
    )


def make_emnist() -> None:
    members = {}
    for config in EMNIST:
        for split in ("train", "test"):
            images, labels = emnist_arrays(config, split)
            prefix = f"gzip/emnist-{config}-{split}"
            members[f"{prefix}-images-idx3-ubyte.gz"] = idx_bytes(images)
            members[f"{prefix}-labels-idx1-ubyte.gz"] = idx_bytes(labels)
    write_zip(out_dir("emnist") / "gzip.zip", members)


MAKERS: dict[str, Callable[[], None]] = {
    "emnist": make_emnist,
}


def png(height: int, width: int, colour: tuple[int, ...]) -> bytes:
    """A PNG of one colour (RGB, or RGBA with 4 values)."""
    from PIL import Image

    out = io.BytesIO()
    mode = "RGBA" if len(colour) == 4 else "RGB"
    Image.new(mode, (width, height), colour).save(out, format="PNG")
    return out.getvalue()


def jpeg(height: int, width: int, colour: tuple[int, int, int]) -> bytes:
    """A JPEG (with its JFIF header) of one colour."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, format="JPEG", quality=90)
    return out.getvalue()


#: Files that are no examples, put in the archives to check they are left out.
JUNK = {"__MACOSX/train/healthy/._healthy_train.3.jpg": b"mac", ".hidden.png": b"hidden"}

#: rock_paper_scissors: split -> (zip, [(member, label, RGB colour)]) in the order read
#: (sorted member names), and the members that are not examples.
RPS = {
    "train": ("rps.zip", [
        ("rps/paper/paper01-000.png", "paper", (10, 20, 30)),
        ("rps/rock/rock01-000.png", "rock", (200, 10, 10)),
        ("rps/rock/rock02-013.png", "rock", (190, 20, 20)),
        ("rps/scissors/scissors_4.png", "scissors", (0, 0, 250)),
    ]),
    "test": ("rps-test-set.zip", [
        ("rps-test-set/paper/testpaper01-01.png", "paper", (1, 2, 3)),
        ("rps-test-set/rock/testrock01-01.png", "rock", (4, 5, 6)),
    ]),
}  # fmt: skip
RPS_JUNK = ["rps/rock/notes.txt", "rps/README.png", "rps/rock/bad name.png"]
#: horses_or_humans: split -> (zip, [(member, label, RGB colour)]).
HORSES = {
    "train": ("horse-or-human.zip", [
        ("horses/horse01-0.png", "horses", (120, 80, 40)),
        ("humans/human01-00.png", "humans", (240, 200, 180)),
        ("humans/human02-17.png", "humans", (230, 190, 170)),
    ]),
    "test": ("validation-horse-or-human.zip", [
        ("horses/horse5-000.png", "horses", (100, 70, 30)),
        ("humans/valhuman01-01.png", "humans", (220, 180, 160)),
    ]),
}  # fmt: skip
#: beans: split -> (zip, [(member, label, RGB colour)]).
BEANS = {
    "train": ("train.zip", [
        ("train/angular_leaf_spot/angular_leaf_spot_train.0.jpg", "angular_leaf_spot",
         (90, 120, 40)),
        ("train/bean_rust/bean_rust_train.12.jpg", "bean_rust", (140, 90, 30)),
        ("train/healthy/healthy_train.3.jpg", "healthy", (40, 160, 40)),
    ]),
    "validation": ("validation.zip", [
        ("validation/healthy/healthy_val.0.jpg", "healthy", (50, 150, 50)),
    ]),
    "test": ("test.zip", [
        ("test/bean_rust/bean_rust_test.1.jpg", "bean_rust", (130, 80, 20)),
        ("test/healthy/healthy_test.9.jpg", "healthy", (60, 170, 60)),
    ]),
}  # fmt: skip
#: cats_vs_dogs: the kept files, sorted, with their label; and how the skipped ones look.
CATS_VS_DOGS = [
    ("PetImages/Cat/0.jpg", "cat", (200, 150, 100)),
    ("PetImages/Cat/12.jpg", "cat", (190, 140, 90)),
    ("PetImages/Dog/7.jpg", "dog", (90, 60, 30)),
]
CATS_VS_DOGS_SKIPPED = 1738


def _zip_of(
    entries: list[tuple[str, str, tuple[int, int, int]]],
    image: Callable[..., bytes],
    size: int,
    junk: list[str] = (),
) -> dict[str, bytes]:  # type: ignore[assignment]
    members = {path: image(size, size, colour) for path, _, colour in entries}
    members.update(dict.fromkeys(junk, b"not an example"))
    return {**members, **JUNK}


def make_rock_paper_scissors() -> None:
    for split, (file, entries) in RPS.items():
        junk = RPS_JUNK if split == "train" else []
        write_zip(out_dir("rock_paper_scissors") / file, _zip_of(entries, png, 300, junk))


#: An RGBA PNG (opaque): the RGB feature refuses it as it is, so it is re-encoded.
HORSES_RGBA = "humans/valhuman01-01.png"


def make_horses_or_humans() -> None:
    for file, entries in HORSES.values():
        members = _zip_of(entries, png, 300, ["horses/readme.txt", "unicorns/u1.png"])
        for path, _, colour in entries:
            if path == HORSES_RGBA:
                members[path] = png(300, 300, (*colour, 255))
        write_zip(out_dir("horses_or_humans") / file, members)


def make_beans() -> None:
    for file, entries in BEANS.values():
        write_zip(out_dir("beans") / file, _zip_of(entries, jpeg, 500, ["train/healthy/Thumbs.db"]))


def cats_vs_dogs_skipped() -> dict[str, bytes]:
    """1738 .jpg files without "JFIF" in their first 512 bytes (one has it at byte 600)."""
    members = {}
    for i in range(CATS_VS_DOGS_SKIPPED):
        data = b"\xff\xd8\xff\xe1Exif" if i else b"\xff\xd8" + b"\0" * 598 + b"JFIF"
        members[f"PetImages/{'Cat' if i % 2 else 'Dog'}/{1000 + i}.jpg"] = data
    return members


def make_cats_vs_dogs() -> None:
    members = {path: jpeg(4 + i, 6, colour) for i, (path, _, colour) in enumerate(CATS_VS_DOGS)}
    members.update(cats_vs_dogs_skipped())
    members.update(
        {"PetImages/Cat/Thumbs.db": b"x", "readme[1].txt": b"x", "CDLA-Permissive-2.0.pdf": b"%PDF"}
    )
    write_zip(out_dir("cats_vs_dogs") / "kagglecatsanddogs_5340.zip", members)


#: eurosat: the files in EuroSAT.zip, in sorted order, with their label and colour.
EUROSAT = [
    ("2750/AnnualCrop/AnnualCrop_1.jpg", "AnnualCrop", (180, 160, 90)),
    ("2750/Forest/Forest_2.jpg", "Forest", (20, 90, 30)),
    ("2750/SeaLake/SeaLake_10.jpg", "SeaLake", (10, 40, 120)),
]


def make_eurosat() -> None:
    members = {path: jpeg(64, 64, colour) for path, _, colour in EUROSAT}
    write_zip(out_dir("eurosat") / "EuroSAT.zip", members)


#: imagenette config -> (archive, its root dir, size) (-v2: the imagenette2 archives); and per
#: split the files read, in the order read (sorted), with their label, plus files left out
#: (lower-case .jpg).
IMAGENETTE = {
    "full-size": ("imagenette.tgz", "imagenette", 12),
    "320px": ("imagenette-320.tgz", "imagenette-320", 8),
    "160px": ("imagenette-160.tgz", "imagenette-160", 4),
    "full-size-v2": ("imagenette2.tgz", "imagenette2", 14),
    "320px-v2": ("imagenette2-320.tgz", "imagenette2-320", 10),
    "160px-v2": ("imagenette2-160.tgz", "imagenette2-160", 6),
}
IMAGENETTE_FILES = {
    "train": [("n01440764", "n01440764_1.JPEG"), ("n01440764", "n01440764_10026.JPEG"),
              ("n03888257", "n03888257_37.JPEG")],
    "validation": [("n03000684", "ILSVRC2012_val_00000293.JPEG")],
}  # fmt: skip


def imagenette_colour(config: str, split: str, i: int) -> tuple[int, int, int]:
    # 0, 60, 120 for the v1 configs, 10, 70, 130 for the v2 ones: every channel in 0..255
    base = list(IMAGENETTE).index(config) * 60 % 170 + (100 if split == "validation" else 0)
    return (base + 20 * i, 255 - base - 10 * i, 30 + i)


def make_imagenette() -> None:
    for config, (file, root, size) in IMAGENETTE.items():
        members = {}
        for split, entries in IMAGENETTE_FILES.items():
            folder = "train" if split == "train" else "val"
            for i, (wnid, name) in enumerate(entries):
                colour = imagenette_colour(config, split, i)
                members[f"{root}/{folder}/{wnid}/{name}"] = jpeg(size, size + i, colour)
        members[f"{root}/train/n02102040/lower_case.jpg"] = jpeg(size, size, (0, 0, 0))
        (out_dir("imagenette") / file).write_bytes(tar_bytes(members, "gz"))


MAKERS.update({
    "rock_paper_scissors": make_rock_paper_scissors,
    "horses_or_humans": make_horses_or_humans,
    "beans": make_beans,
    "cats_vs_dogs": make_cats_vs_dogs,
    "eurosat": make_eurosat,
    "imagenette": make_imagenette,
})  # fmt: skip


def npy_bytes(array: np.ndarray[Any, Any]) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=False)
    return out.getvalue()


#: cifar10_1 config -> (seed, count); the images are cifar-style patterns, labels int32.
CIFAR10_1 = {"v4": (7, 3), "v6": (8, 2)}
#: mnist_corrupted: {config: seed}, every config; split -> count.
MNIST_C_CONFIGS = [
    "identity", "shot_noise", "impulse_noise", "glass_blur", "motion_blur", "shear", "scale",
    "rotate", "brightness", "translate", "stripe", "fog", "spatter", "dotted_line", "zigzag",
    "canny_edges",
]  # fmt: skip
MNIST_C = {config: 11 + i for i, config in enumerate(MNIST_C_CONFIGS)}
MNIST_C_COUNTS = {"train": 3, "test": 2}


def cifar10_1_arrays(config: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    from make_dummy_data import cifar_images

    seed, count = CIFAR10_1[config]
    return cifar_images(count, seed=seed), pattern_labels(count, seed=seed).astype("<i4")


def mnist_c_arrays(config: str, split: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    seed = MNIST_C[config] + (0 if split == "train" else 40)
    count = MNIST_C_COUNTS[split]
    return pattern_images(count, seed=seed)[..., None], pattern_labels(count, seed=seed)


def make_cifar10_1() -> None:
    for config in CIFAR10_1:
        images, labels = cifar10_1_arrays(config)
        out = out_dir("cifar10_1")
        (out / f"cifar10.1_{config}_data.npy").write_bytes(npy_bytes(images))
        (out / f"cifar10.1_{config}_labels.npy").write_bytes(npy_bytes(labels))


def make_mnist_corrupted() -> None:
    members = {}
    for config in MNIST_C:
        for split in MNIST_C_COUNTS:
            images, labels = mnist_c_arrays(config, split)
            members[f"mnist_c/{config}/{split}_images.npy"] = npy_bytes(images)
            members[f"mnist_c/{config}/{split}_labels.npy"] = npy_bytes(labels)
    write_zip(out_dir("mnist_corrupted") / "mnist_c.zip", members)


MAKERS.update({"cifar10_1": make_cifar10_1, "mnist_corrupted": make_mnist_corrupted})


#: dtd: split -> the list file's lines (class/file), in order; each image (5 + i) x 6 pixels.
DTD = {
    "train": ["banded/banded_0002.jpg", "zigzagged/zigzagged_0011.jpg"],
    "validation": ["polka-dotted/polka-dotted_0120.jpg"],
    "test": ["woven/woven_0003.jpg", "banded/banded_0004.jpg"],
}
DTD_LISTS = {"train": "train1.txt", "validation": "val1.txt", "test": "test1.txt"}


def dtd_colour(split: str, i: int) -> tuple[int, int, int]:
    base = list(DTD).index(split) * 70
    return (base + 30 * i, 200 - base, 40 + 20 * i)


def make_dtd() -> None:
    members = {}
    for split, lines in DTD.items():
        for i, line in enumerate(lines):
            members[f"dtd/images/{line}"] = jpeg(5 + i, 6, dtd_colour(split, i))
        members[f"dtd/labels/{DTD_LISTS[split]}"] = ("\n".join(lines) + "\n").encode()
    members["dtd/labels/train2.txt"] = b"banded/banded_0004.jpg\n"  # another fold: unused
    (out_dir("dtd") / "dtd-r1.0.1.tar.gz").write_bytes(tar_bytes(members, "gz"))


#: voc: (archive, split -> ids) and per image id: (height, width, colour, objects), each
#: object (name as written, pose, truncated, difficult, (xmin, ymin, xmax, ymax) pixels).
VOC_SPLITS = {
    "train": ("VOCtrainval_06-Nov-2007.tar", "train.txt", ["000012", "000017"]),
    "validation": ("VOCtrainval_06-Nov-2007.tar", "val.txt", ["000005"]),
    "test": ("VOCtest_06-Nov-2007.tar", "test.txt", ["000001", "000004"]),
}
VOC_IMAGES: dict[str, tuple[int, int, tuple[int, int, int], list[tuple[Any, ...]]]] = {
    "000012": (40, 50, (200, 20, 20), [("Car", "Rear", "0", "0", (5, 10, 45, 30))]),
    "000017": (30, 60, (20, 200, 20), [
        ("person", "Left", "1", "0", (1, 1, 30, 30)),
        ("horse", "Unspecified", "0", "1", (20, 6, 60, 24)),
    ]),
    "000005": (20, 20, (20, 20, 200), [
        ("chair", "Frontal", "1", "1", (2, 4, 10, 16)),
        ("chair", "Rear", "0", "0", (10, 4, 20, 20)),
        ("diningtable", "Unspecified", "0", "0", (0, 10, 20, 20)),
    ]),
    "000001": (50, 40, (200, 200, 20), [("dog", "Left", "0", "0", (10, 25, 30, 50))]),
    "000004": (25, 25, (20, 200, 200), []),
}  # fmt: skip


def voc_xml(image_id: str) -> bytes:
    height, width, _, objects = VOC_IMAGES[image_id]
    parts = [
        f"<annotation><folder>VOC2007</folder><filename>{image_id}.jpg</filename>",
        f"<size><width>{width}</width><height>{height}</height><depth>3</depth></size>",
    ]
    for name, pose, truncated, difficult, (xmin, ymin, xmax, ymax) in objects:
        parts.append(
            f"<object><name>{name}</name><pose>{pose}</pose><truncated>{truncated}</truncated>"
            f"<difficult>{difficult}</difficult><bndbox><xmin>{xmin}</xmin><ymin>{ymin}</ymin>"
            f"<xmax>{xmax}</xmax><ymax>{ymax}</ymax></bndbox></object>"
        )
    return ("".join(parts) + "</annotation>\n").encode()


def make_voc() -> None:
    archives: dict[str, dict[str, bytes]] = {}
    for archive, listing, ids in VOC_SPLITS.values():
        members = archives.setdefault(archive, {})
        root = "VOCdevkit/VOC2007"
        members[f"{root}/ImageSets/Main/{listing}"] = ("\n".join(ids) + "\n").encode()
        for image_id in ids:
            height, width, colour, _ = VOC_IMAGES[image_id]
            members[f"{root}/JPEGImages/{image_id}.jpg"] = jpeg(height, width, colour)
            members[f"{root}/Annotations/{image_id}.xml"] = voc_xml(image_id)
    for archive, members in archives.items():
        (out_dir("voc") / archive).write_bytes(tar_bytes(members))


MAKERS.update({"dtd": make_dtd, "voc": make_voc})


#: deep_weeds: the files of images.zip in sorted order, with their Label id and Species.
DEEP_WEEDS = [
    ("20160928-140314-0.jpg", 0, "Chinee apple"),
    ("20161207-111327-0.jpg", 8, "Negative"),
    ("20170128-100045-2.jpg", 6, "Siam weed"),
    ("20170207-154924-0.jpg", 1, "Lantana"),
    ("20170320-093423-1.jpg", 2, "Parkinsonia"),
    ("20170523-110519-2.jpg", 3, "Parthenium"),
    ("20170606-094318-0.jpg", 4, "Prickly acacia"),
    ("20170712-145430-1.jpg", 5, "Rubber vine"),
    ("20180119-105722-1.jpg", 7, "Snake weed"),
]


def deep_weeds_colour(i: int) -> tuple[int, int, int]:
    return (40 + 25 * i, 120, 230 - 25 * i)


def make_deep_weeds() -> None:
    members = {
        name: jpeg(256, 256, deep_weeds_colour(i)) for i, (name, _, _) in enumerate(DEEP_WEEDS)
    }
    write_zip(out_dir("deep_weeds") / "images.zip", members)
    rows = ["Filename,Label,Species"] + [f"{n},{k},{s}" for n, k, s in reversed(DEEP_WEEDS)]
    (out_dir("deep_weeds") / "labels.csv").write_text("\n".join(rows) + "\n")


MAKERS["deep_weeds"] = make_deep_weeds


#: oxford_flowers102: labels (1..102) of images 1..6, and the split ids (1-based) in order.
FLOWERS102_LABELS = [1, 102, 60, 5, 5, 2]
FLOWERS102_IDS = {"train": [2, 5], "validation": [6], "test": [4, 1, 3]}
FLOWERS102_ARRAYS = {"train": "trnid", "validation": "valid", "test": "tstid"}


def flowers102_colour(image_id: int) -> tuple[int, int, int]:
    return (30 * image_id, 250 - 30 * image_id, 100)


def make_oxford_flowers102() -> None:
    import scipy.io

    out = out_dir("oxford_flowers102")
    members = {
        f"jpg/image_{i:05d}.jpg": jpeg(6, 4 + i, flowers102_colour(i))
        for i in range(1, len(FLOWERS102_LABELS) + 1)
    }
    (out / "102flowers.tgz").write_bytes(tar_bytes(members, "gz"))
    labels = np.array([FLOWERS102_LABELS], np.uint8)  # (1, N) as in the real file
    scipy.io.savemat(out / "imagelabels.mat", {"labels": labels})
    ids = {FLOWERS102_ARRAYS[s]: np.array([v], np.uint16) for s, v in FLOWERS102_IDS.items()}
    scipy.io.savemat(out / "setid.mat", ids)


MAKERS["oxford_flowers102"] = make_oxford_flowers102


#: oxford_iiit_pet: split -> lines (name, breed id 1..37, species 1..2); per name the image
#: size, and the head box in pixels (xmin, ymin, xmax, ymax) or None (no XML file).
PETS = {
    "train": [("Abyssinian_100", 1, 1), ("yorkshire_terrier_7", 37, 2), ("Egyptian_Mau_14", 12, 1)],
    "test": [("beagle_116", 5, 2), ("Sphynx_3", 34, 1)],
}
PETS_IMAGES: dict[str, tuple[int, int, tuple[int, int, int, int] | None]] = {
    "Abyssinian_100": (20, 30, (3, 2, 15, 10)),
    "yorkshire_terrier_7": (10, 10, (0, 0, 10, 10)),
    "Egyptian_Mau_14": (12, 8, None),
    "beagle_116": (9, 11, None),
    "Sphynx_3": (7, 5, None),
}
#: Stored as a PNG named .jpg, as some of the real files are: kept as it is when prepared.
PETS_NOT_JPEG = "Egyptian_Mau_14"


def pets_colour(name: str) -> tuple[int, int, int]:
    i = list(PETS_IMAGES).index(name)
    return (40 * i + 10, 200 - 30 * i, 90)


def pets_trimap(name: str) -> np.ndarray[Any, Any]:
    height, width, _ = PETS_IMAGES[name]
    r, c = np.ogrid[:height, :width]
    return ((r + c) % 3 + 1).astype(np.uint8)


def make_oxford_iiit_pet() -> None:
    from PIL import Image

    images, annotations = {}, {}
    for name, (height, width, box) in PETS_IMAGES.items():
        colour = pets_colour(name)
        data = png(height, width, colour) if name == PETS_NOT_JPEG else jpeg(height, width, colour)
        images[f"images/{name}.jpg"] = data
        out = io.BytesIO()
        Image.fromarray(pets_trimap(name), "L").save(out, format="PNG")
        annotations[f"annotations/trimaps/{name}.png"] = out.getvalue()
        if box is not None:
            xmin, ymin, xmax, ymax = box
            annotations[f"annotations/xmls/{name}.xml"] = (
                f"<annotation><filename>{name}.jpg</filename><size><width>{width}</width>"
                f"<height>{height}</height><depth>3</depth></size><object><name>cat</name>"
                f"<pose>Frontal</pose><truncated>0</truncated><difficult>0</difficult>"
                f"<bndbox><xmin>{xmin}</xmin><ymin>{ymin}</ymin><xmax>{xmax}</xmax>"
                f"<ymax>{ymax}</ymax></bndbox></object></annotation>\n"
            ).encode()
    for split, file in (("train", "trainval.txt"), ("test", "test.txt")):
        lines = [f"{name} {breed} {species} 1" for name, breed, species in PETS[split]]
        annotations[f"annotations/{file}"] = ("\n".join(lines) + "\n").encode()
    out = out_dir("oxford_iiit_pet")
    (out / "images.tar.gz").write_bytes(tar_bytes(images, "gz"))
    (out / "annotations.tar.gz").write_bytes(tar_bytes(annotations, "gz"))


MAKERS["oxford_iiit_pet"] = make_oxford_iiit_pet


#: caltech101: class directory -> (number of images, RGB colour); images are 2x3 JPEGs.
CALTECH = {"BACKGROUND_Google": (32, (90, 90, 90)), "Faces_easy": (31, (230, 180, 150)),
           "accordion": (30, (200, 30, 30))}  # fmt: skip


def caltech_files() -> dict[str, list[str]]:
    """Class directory -> its image paths in 101_ObjectCategories, sorted."""
    return {
        cls: [f"101_ObjectCategories/{cls}/image_{i:04d}.jpg" for i in range(1, count + 1)]
        for cls, (count, _) in CALTECH.items()
    }


def make_caltech101() -> None:
    inner = {}
    for cls, files in caltech_files().items():
        for path in files:
            inner[path] = jpeg(2, 3, CALTECH[cls][1])
    inner["101_ObjectCategories/Faces_easy/notes.txt"] = b"not an image"
    members = {
        "caltech-101/101_ObjectCategories.tar.gz": tar_bytes(inner, "gz"),
        "caltech-101/Annotations.tar": tar_bytes({"Annotations/readme.txt": b"x"}),
        "__MACOSX/caltech-101/._101_ObjectCategories.tar.gz": b"mac",
    }
    write_zip(out_dir("caltech101") / "caltech-101.zip", members)


MAKERS["caltech101"] = make_caltech101


#: stl10: split -> (file stem, count); images are (96, 96, 3) patterns, labels 1..10 bytes.
STL10 = {"train": ("train", 3), "test": ("test", 2), "unlabelled": ("unlabeled", 4)}


def stl10_images(split: str) -> np.ndarray[Any, Any]:
    """(N, 96, 96, 3) images in which every pixel and channel differs."""
    count = STL10[split][1]
    i, r, c, ch = np.ogrid[:count, :96, :96, :3]
    seed = list(STL10).index(split) * 17
    return ((7 * i + 5 * r + 3 * c + 90 * ch + seed) % 256).astype(np.uint8)


def stl10_labels(split: str) -> np.ndarray[Any, Any]:
    """The label bytes, 1..10."""
    return (pattern_labels(STL10[split][1], seed=list(STL10).index(split)) + 1).astype(np.uint8)


def make_stl10() -> None:
    names = ["airplane", "bird", "car", "cat", "deer", "dog", "horse", "monkey", "ship", "truck"]
    members = {"stl10_binary/class_names.txt": ("\n".join(names) + "\n").encode()}
    for split, (stem, _) in STL10.items():
        # Each image as its channel planes, each plane column by column (MATLAB's order).
        members[f"stl10_binary/{stem}_X.bin"] = stl10_images(split).transpose(0, 3, 2, 1).tobytes()
        if split != "unlabelled":
            members[f"stl10_binary/{stem}_y.bin"] = stl10_labels(split).tobytes()
    (out_dir("stl10") / "stl10_binary.tar.gz").write_bytes(tar_bytes(members, "gz"))


MAKERS["stl10"] = make_stl10


#: colorectal_histology: the files of the zip in sorted order, with their label.
_KATHER = "Kather_texture_2016_image_tiles_5000"
COLORECTAL = [
    (f"{_KATHER}/01_TUMOR/1A11_CRC-Prim-HE-07_022.tif_Row_601_Col_151.tif", "tumor"),
    (f"{_KATHER}/02_STROMA/1008_CRC-Prim-HE-04_004.tif_Row_151_Col_451.tif", "stroma"),
    (f"{_KATHER}/03_COMPLEX/1022F_CRC-Prim-HE-10_004.tif_Row_451_Col_301.tif", "complex"),
    (f"{_KATHER}/04_LYMPHO/10005_CRC-Prim-HE-05_017.tif_Row_1_Col_1051.tif", "lympho"),
    (f"{_KATHER}/05_DEBRIS/10099_CRC-Prim-HE-02_015.tif_Row_1651_Col_1.tif", "debris"),
    (f"{_KATHER}/06_MUCOSA/100AB_CRC-Prim-HE-04_037.tif_Row_301_Col_751.tif", "mucosa"),
    (f"{_KATHER}/07_ADIPOSE/10009_CRC-Prim-HE-03_009.tif_Row_301_Col_1.tif", "adipose"),
    (f"{_KATHER}/08_EMPTY/100E9_CRC-Prim-HE-08_005.tif_Row_1_Col_151.tif", "empty"),
]


def colorectal_image(i: int) -> np.ndarray[Any, Any]:
    r, c, ch = np.ogrid[:150, :150, :3]
    return ((r * (i + 1) + 2 * c + 70 * ch) % 256).astype(np.uint8)


def make_colorectal_histology() -> None:
    from PIL import Image

    members = {}
    for i, (path, _) in enumerate(COLORECTAL):
        out = io.BytesIO()
        Image.fromarray(colorectal_image(i)).save(out, format="TIFF", compression="tiff_deflate")
        members[path] = out.getvalue()
    write_zip(out_dir("colorectal_histology") / "Kather_texture_2016_image_tiles_5000.zip", members)


MAKERS["colorectal_histology"] = make_colorectal_histology
