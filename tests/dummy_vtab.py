"""Dummy files of VTAB's sources and the fine-grained datasets (food101 ... celeb_a), in each
source's exact layout and file names.

`python tests/make_dummy_data.py NAME` writes them (NAME as in `MAKERS`); the constants here
are what tests/builders/test_builders_vtab.py checks the prepared examples against.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np

from dummy_images import jpeg, out_dir, tar_bytes, write_zip

#: food101: split -> the lines of its list (<class>/<id>), in order.
FOOD101 = {
    "train": ["apple_pie/1005649", "apple_pie/134", "waffles/99"],
    "validation": ["baby_back_ribs/2020", "waffles/3001"],
}
FOOD101_LISTS = {"train": "train", "validation": "test"}


def food101_colour(split: str, i: int) -> tuple[int, int, int]:
    return (40 + 60 * i, 200 - 90 * list(FOOD101).index(split), 30 + 20 * i)


def make_food101() -> None:
    import json

    members: dict[str, bytes] = {}
    for split, lines in FOOD101.items():
        for i, line in enumerate(lines):
            members[f"food-101/images/{line}.jpg"] = jpeg(6 + i, 5, food101_colour(split, i))
        listing = FOOD101_LISTS[split]
        members[f"food-101/meta/{listing}.txt"] = ("\n".join(lines) + "\n").encode()
        by_class: dict[str, list[str]] = {}
        for line in lines:  # the same lists as JSON, class by class (the archive has both)
            by_class.setdefault(line.split("/")[0], []).append(line)
        members[f"food-101/meta/{listing}.json"] = json.dumps(by_class).encode()
    members["food-101/meta/classes.txt"] = b"apple_pie\nbaby_back_ribs\nwaffles\n"
    members["food-101/README.txt"] = b"Food-101\n"
    (out_dir("food101") / "food-101.tar.gz").write_bytes(tar_bytes(members, "gz"))


MAKERS: dict[str, Callable[[], None]] = {"food101": make_food101}


#: sun397: split -> [(listed path, image format stored under that .jpg name, (height, width))];
#: the images hold `sun397_pixels`. The archive also holds a file of no list and the two
#: files the reference catalog leaves out (one of them listed for train).
SUN397 = {
    "train": [("/a/abbey/sun_aaaulhwrhqgejnyt.jpg", "JPEG", (300, 500)),
              ("/c/car_interior/backseat/sun_aagvtgpqzcahfdgf.jpg", "PNG", (40, 30))],
    "validation": [("/y/yard/sun_admgmqsmmqkthilp.jpg", "BMP", (20, 24))],
    "test": [("/w/waiting_room/sun_aaeplwsfslcbtojr.jpg", "GIF", (16, 18))],
}  # fmt: skip
SUN397_LISTS = {"train": "tr", "validation": "va", "test": "te"}
SUN397_LEFT_OUT = {
    "/c/church/outdoor/sun_bhenjvsvrtumjuri.jpg": None,
    "/t/track/outdoor/sun_aophkoiosslinihb.jpg": "train",
    "/a/abbey/sun_aaalbzqrimafwbix.jpg": None,
}


def sun397_partition(k: int) -> dict[str, list[str]]:
    """sun397's official partition `k` (1..10) as the dummy Partitions.zip lists it: the
    listed images alternate between train and test with `k`, and partition 1 also lists
    for train the file the reference catalog leaves out."""
    paths = [path for entries in SUN397.values() for path, _, _ in entries]
    split = {"train": [p for i, p in enumerate(paths) if (i + k) % 2 == 0],
             "test": [p for i, p in enumerate(paths) if (i + k) % 2 == 1]}  # fmt: skip
    if k == 1:
        split["train"].append("/t/track/outdoor/sun_aophkoiosslinihb.jpg")
    return split


def sun397_pixels(height: int, width: int, grey: bool = False) -> np.ndarray[Any, Any]:
    """A smooth gradient (so that shrinking and JPEG keep it close)."""
    r, c, ch = np.ogrid[:height, :width, :3]
    pixels = (30 + r * 120 // height + c * 50 // width + 10 * ch).astype(np.uint8)
    return pixels[:, :, :1].repeat(3, axis=2) if grey else pixels


def _image_file(pixels: np.ndarray[Any, Any], fmt: str) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    image = Image.fromarray(pixels)
    if fmt == "PNG":
        image = image.convert("L")  # a greyscale PNG under a .jpg name
    image.save(out, format=fmt, **({"quality": 95} if fmt == "JPEG" else {}))
    return out.getvalue()


def make_sun397() -> None:
    members: dict[str, bytes] = {"SUN397/ClassName.txt": b"/a/abbey\n", "SUN397/README.txt": b"x"}
    lists: dict[str, list[str]] = {name: [] for name in SUN397_LISTS.values()}
    for split, entries in SUN397.items():
        for path, fmt, (height, width) in entries:
            pixels = sun397_pixels(height, width, grey=fmt == "PNG")
            members[f"SUN397{path}"] = _image_file(pixels, fmt)
            lists[SUN397_LISTS[split]].append(path)
    for path, listed_in in SUN397_LEFT_OUT.items():
        members[f"SUN397{path}"] = _image_file(sun397_pixels(8, 8), "JPEG")
        if listed_in:
            lists[SUN397_LISTS[listed_in]].append(path)
    out = out_dir("sun397")
    (out / "SUN397.tar.gz").write_bytes(tar_bytes(members, "gz"))
    files = {f"sun397_tfds_{n}.txt": "".join(f"{line}\n" for line in lines).encode()
             for n, lines in lists.items()}  # fmt: skip
    (out / "sun397_tfds_splits.tar.gz").write_bytes(tar_bytes(files, "gz"))
    partitions = {}  # Partitions.zip: Training_NN.txt and Testing_NN.txt at its top
    for k in range(1, 11):
        for split, name in (("train", "Training"), ("test", "Testing")):
            lines = sun397_partition(k)[split]
            partitions[f"{name}_{k:02d}.txt"] = "".join(f"{x}\n" for x in lines).encode()
    write_zip(out / "Partitions.zip", partitions)


MAKERS["sun397"] = make_sun397


#: patch_camelyon: split -> (the files' split name, example count); pixels `camelyon_patch`.
CAMELYON = {"test": ("test", 3), "train": ("train", 4), "validation": ("valid", 2)}


def camelyon_patch(split: str, i: int) -> np.ndarray[Any, Any]:
    r, c, ch = np.ogrid[:96, :96, :3]
    return ((r * (i + 1) + 3 * c + 50 * ch + 7 * len(split)) % 256).astype(np.uint8)


def camelyon_label(split: str, i: int) -> int:
    return (i + len(split)) % 2


def _h5_bytes(arrays: dict[str, np.ndarray[Any, Any]]) -> bytes:
    """An HDF5 file holding `arrays` (name -> array; a name may hold a group path)."""
    import h5py

    out = io.BytesIO()
    with h5py.File(out, "w", track_order=True) as f:
        for name, array in arrays.items():
            f.create_dataset(name, data=array, track_times=False)
    return out.getvalue()


def make_patch_camelyon() -> None:
    import gzip

    out = out_dir("patch_camelyon")
    for split, (stem, count) in CAMELYON.items():
        x = np.stack([camelyon_patch(split, i) for i in range(count)])
        y = np.array([camelyon_label(split, i) for i in range(count)], np.uint8)
        for part, arrays in (("x", {"x": x}), ("y", {"y": y.reshape(count, 1, 1, 1)})):
            name = f"camelyonpatch_level_2_split_{stem}_{part}.h5"
            (out / f"{name}.gz").write_bytes(gzip.compress(_h5_bytes(arrays), mtime=0))


MAKERS["patch_camelyon"] = make_patch_camelyon

#: dsprites: the number of images, and the latent factors' sizes (colour, shape, scale,
#: orientation, x, y) as in the real file's name (co1sh3sc6or40x32y32).
DSPRITES_COUNT = 5
DSPRITES_SIZES = (1, 3, 6, 40, 32, 32)


def dsprites_arrays() -> dict[str, np.ndarray[Any, Any]]:
    """imgs (N, 64, 64) of 0/1, latents/classes (N, 6) int64, latents/values (N, 6) float64,
    as in dsprites_ndarray_co1sh3sc6or40x32y32_64x64.hdf5."""
    rng = np.random.default_rng(7)
    classes = np.stack([rng.integers(0, n, DSPRITES_COUNT) for n in DSPRITES_SIZES], axis=1)
    scales = np.linspace(0.5, 1, 6)
    values = np.stack([np.ones(DSPRITES_COUNT), classes[:, 1] + 1.0, scales[classes[:, 2]],
                       classes[:, 3] * 2 * np.pi / 39, classes[:, 4] / 31, classes[:, 5] / 31],
                      axis=1)  # fmt: skip
    imgs = (rng.random((DSPRITES_COUNT, 64, 64)) < 0.2).astype(np.uint8)
    return {"imgs": imgs, "latents/classes": classes.astype(np.int64), "latents/values": values}


def make_dsprites() -> None:
    name = "dsprites_ndarray_co1sh3sc6or40x32y32_64x64.hdf5"
    (out_dir("dsprites") / name).write_bytes(_h5_bytes(dsprites_arrays()))


MAKERS["dsprites"] = make_dsprites


#: smallnorb: split -> (file stem, example count); values from `smallnorb_arrays`.
SMALLNORB = {"train": ("smallnorb-5x46789x9x18x6x2x96x96-training", 4),
             "test": ("smallnorb-5x01235x9x18x6x2x96x96-testing", 3)}  # fmt: skip
NORB_MAGIC = {np.dtype(np.uint8): 0x1E3D4C55, np.dtype("<i4"): 0x1E3D4C54}


def norb_matrix(array: np.ndarray[Any, Any]) -> bytes:
    """`array` as a NORB binary matrix file: magic, ndim, at least 3 dims, the elements."""
    dims = list(array.shape) + [1] * (3 - array.ndim)
    header = np.array([NORB_MAGIC[array.dtype], array.ndim, *dims], "<i4")
    return header.tobytes() + np.ascontiguousarray(array).tobytes()


def smallnorb_arrays(split: str) -> dict[str, np.ndarray[Any, Any]]:
    """dat (N, 2, 96, 96) uint8, cat (N,) int32, info (N, 4) int32: instance, elevation,
    azimuth (even, 0..34), lighting."""
    count = SMALLNORB[split][1]
    rng = np.random.default_rng(len(split))
    rows = rng.integers(0, 256, (count, 2, 1, 96), dtype=np.uint8)  # each image's rows alike
    dat = (rows + np.arange(96, dtype=np.uint8)[:, None]).astype(np.uint8)
    info = np.stack([rng.integers(0, 10, count), rng.integers(0, 9, count),
                     2 * rng.integers(0, 18, count), rng.integers(0, 6, count)],
                    axis=1)  # fmt: skip
    info[0, 2] = 34  # the largest azimuth
    cat = np.arange(count, dtype="<i4") % 5
    return {"dat": dat, "cat": cat, "info": info.astype("<i4")}


def make_smallnorb() -> None:
    import gzip

    out = out_dir("smallnorb")
    for split, (stem, _) in SMALLNORB.items():
        for kind, array in smallnorb_arrays(split).items():
            data = gzip.compress(norb_matrix(array), mtime=0)
            (out / f"{stem}-{kind}.mat.gz").write_bytes(data)


MAKERS["smallnorb"] = make_smallnorb


#: cars196: split -> [(file name, class (from 1), (x1, y1, x2, y2) pixels, (height, width))]
CARS196 = {
    "train": [("00001.jpg", 14, (3, 5, 20, 12), (16, 24)),
              ("00002.jpg", 196, (0, 0, 30, 20), (20, 30))],
    "test": [("00001.jpg", 1, (2, 1, 10, 9), (12, 11))],
}  # fmt: skip


def cars196_colour(split: str, i: int) -> tuple[int, int, int]:
    return (50 + 80 * i, 120 if split == "train" else 30, 200 - 40 * i)


def _annotations_mat(entries: list[tuple[str, int, tuple[int, ...], Any]]) -> bytes:
    """A struct array ``annotations`` (1, N) of bbox_x1, bbox_y1, bbox_x2, bbox_y2, class,
    fname, as the Stanford Cars devkit saves it."""
    import scipy.io

    fields = ["bbox_x1", "bbox_y1", "bbox_x2", "bbox_y2", "class", "fname"]
    records = np.zeros((1, len(entries)), dtype=[(f, "O") for f in fields])
    for i, (name, label, box, _) in enumerate(entries):
        for field, value in zip(fields[:4], box, strict=True):
            records[0, i][field] = np.array([[value]], np.uint16)
        records[0, i]["class"] = np.array([[label]], np.uint8)
        records[0, i]["fname"] = np.array([name])
    out = io.BytesIO()
    scipy.io.savemat(out, {"annotations": records})
    return out.getvalue()


def make_cars196() -> None:
    out = out_dir("cars196")
    for split, entries in CARS196.items():
        members = {f"cars_{split}/{name}": jpeg(h, w, cars196_colour(split, i))
                   for i, (name, _, _, (h, w)) in enumerate(entries)}  # fmt: skip
        (out / f"cars_{split}.tgz").write_bytes(tar_bytes(members, "gz"))
    devkit = {"devkit/cars_train_annos.mat": _annotations_mat(CARS196["train"]),
              "devkit/README.txt": b"devkit\n",
              "devkit/cars_test_annos.mat": _annotations_mat(CARS196["test"])}  # fmt: skip
    (out / "car_devkit.tgz").write_bytes(tar_bytes(devkit, "gz"))
    (out / "cars_test_annos_withlabels.mat").write_bytes(_annotations_mat(CARS196["test"]))


MAKERS["cars196"] = make_cars196


#: dmlab: split -> its TFRecord files, each a list of (filename, label) examples.
DMLAB = {
    "train": {"dmlab-train.tfrecord-00000-of-00002": [("train_0.png", 0), ("train_1.png", 5)],
              "dmlab-train.tfrecord-00001-of-00002": [("train_2.png", 3)]},
    "validation": {"dmlab-validation.tfrecord-00000-of-00001": [("validation_0.png", 2)]},
    "test": {"dmlab-test.tfrecord-00000-of-00001": [("test_0.png", 1), ("test_1.png", 4)]},
}  # fmt: skip


def dmlab_colour(label: int) -> tuple[int, int, int]:
    return (30 + 40 * label, 200 - 30 * label, 90)


def make_dmlab() -> None:
    import tempfile
    from pathlib import Path

    from catalog.interop.tfrecord.example import encode_example
    from catalog.interop.tfrecord.io import write_records

    members: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for files in DMLAB.values():
            for name, entries in files.items():
                records = [
                    encode_example({"image": [jpeg(360, 480, dmlab_colour(label))],
                                    "filename": [filename.encode()], "label": [label]})
                    for filename, label in entries
                ]  # fmt: skip
                write_records(Path(tmp) / name, records)
                members[name] = (Path(tmp) / name).read_bytes()
    (out_dir("dmlab") / "dmlab.tar.gz").write_bytes(tar_bytes(members, "gz"))


MAKERS["dmlab"] = make_dmlab


#: celeb_a: file name -> partition (0 train, 1 validation, 2 test); listed out of order, as
#: the tables are in file-name order but a split reads its files sorted. Rows from `celeba_row`.
CELEBA = {"000003.jpg": 0, "000001.jpg": 0, "000002.jpg": 2, "000004.jpg": 1, "000005.jpg": 0}
CELEBA_LANDMARKS = [f"{part}_{axis}" for part in ("lefteye", "righteye", "nose", "leftmouth",
                    "rightmouth") for axis in "xy"]  # fmt: skip
_ATTRIBUTES = (
    "5_o_Clock_Shadow Arched_Eyebrows Attractive Bags_Under_Eyes Bald Bangs Big_Lips Big_Nose "
    "Black_Hair Blond_Hair Blurry Brown_Hair Bushy_Eyebrows Chubby Double_Chin Eyeglasses "
    "Goatee Gray_Hair Heavy_Makeup High_Cheekbones Male Mouth_Slightly_Open Mustache "
    "Narrow_Eyes No_Beard Oval_Face Pale_Skin Pointy_Nose Receding_Hairline Rosy_Cheeks "
    "Sideburns Smiling Straight_Hair Wavy_Hair Wearing_Earrings Wearing_Hat Wearing_Lipstick "
    "Wearing_Necklace Wearing_Necktie Young"
)
CELEBA_ATTRIBUTES = _ATTRIBUTES.split()


def celeba_row(name: str) -> tuple[list[int], list[int], int]:
    """(attributes as -1/1, landmarks in pixels, identity) of an image."""
    n = int(name[:6])
    attributes = [1 if (n * 7 + i) % 3 == 0 else -1 for i in range(40)]
    landmarks = [60 + 3 * n + i for i in range(10)]
    return attributes, landmarks, 1000 + n


def celeba_colour(name: str) -> tuple[int, int, int]:
    n = int(name[:6])
    return (40 * n, 200 - 30 * n, 100)


def make_celeb_a() -> None:
    out = out_dir("celeb_a")
    names = sorted(CELEBA)
    images = {f"img_align_celeba/{name}": jpeg(218, 178, celeba_colour(name)) for name in names}
    from dummy_images import write_zip

    write_zip(out / "img_align_celeba.zip", images)
    rows = {name: celeba_row(name) for name in names}
    (out / "list_eval_partition.txt").write_text(
        "".join(f"{name} {CELEBA[name]}\n" for name in names)
    )
    attributes = "".join(f"{n} " + " ".join(f"{v:2d}" for v in rows[n][0]) + "\n" for n in names)
    (out / "list_attr_celeba.txt").write_text(
        f"{len(names)}\n{' '.join(CELEBA_ATTRIBUTES)} \n{attributes}"
    )
    landmarks = "".join(f"{n} " + "   ".join(map(str, rows[n][1])) + "\n" for n in names)
    (out / "list_landmarks_align_celeba.txt").write_text(
        f"{len(names)}\n{' '.join(CELEBA_LANDMARKS)}\n{landmarks}"
    )
    (out / "identity_CelebA.txt").write_text("".join(f"{n} {rows[n][2]}\n" for n in names))


MAKERS["celeb_a"] = make_celeb_a


#: clevr: split -> [(image name, its objects)], each object (color, material, shape, size,
#: rotation, 3d_coords, pixel_coords); the test split has no scenes file. Questions from
#: `clevr_questions`.
CLEVR = {
    "train": [("CLEVR_train_000000.png", [("red", "metal", "cube", "large", 12.5,
                                           [-1.1234567, 2.5, 0.7], [100.0, 120.5, 11.25])]),
              ("CLEVR_train_000001.png", [])],
    "validation": [("CLEVR_val_000000.png", [
        ("cyan", "rubber", "cylinder", "small", 300.25, [0.1, 0.2, 0.35], [1.5, 2.0, 9.75]),
        ("gray", "metal", "sphere", "large", 0.0, [3.0, -2.0, 0.7], [310.0, 20.0, 8.5])])],
    "test": [("CLEVR_test_000000.png", None), ("CLEVR_test_000001.png", None)],
}  # fmt: skip
CLEVR_STEMS = {"train": "train", "validation": "val", "test": "test"}
CLEVR_KEYS = ("color", "material", "shape", "size", "rotation", "3d_coords", "pixel_coords")


def clevr_questions(split: str, name: str) -> list[tuple[str, str]]:
    n = int(name[-8:-4])
    return [(f"How many things are in {name}?", "" if split == "test" else str(n + 1))] * (n + 1)


def clevr_rgba(i: int) -> np.ndarray[Any, Any]:
    r, c, ch = np.ogrid[:12, :16, :4]
    return np.where(ch == 3, 255 - 5 * r, (r * 9 + c * 7 + 60 * ch + 30 * i) % 256).astype(np.uint8)


def make_clevr() -> None:
    import json

    from PIL import Image

    from dummy_images import write_zip

    members: dict[str, bytes] = {"CLEVR_v1.0/README.txt": b"CLEVR\n", "CLEVR_v1.0/COPYING.txt": b""}
    for split, entries in CLEVR.items():
        stem = CLEVR_STEMS[split]
        questions, scenes = [], []
        for i, (name, objects) in enumerate(entries):
            out = io.BytesIO()
            Image.fromarray(clevr_rgba(i), "RGBA").save(out, format="PNG")
            members[f"CLEVR_v1.0/images/{stem}/{name}"] = out.getvalue()
            for question, answer in clevr_questions(split, name):
                q = {"image_filename": name, "question": question, "split": stem}
                questions.append(q if split == "test" else {**q, "answer": answer})
            if objects is not None:
                scenes.append({"image_index": i, "image_filename": name, "objects": [
                    {**dict(zip(CLEVR_KEYS, o, strict=True)), "color_extra": 1} for o in objects
                ]})  # fmt: skip
        folder = "CLEVR_v1.0/questions"
        members[f"{folder}/CLEVR_{stem}_questions.json"] = json.dumps(
            {"questions": questions}
        ).encode()
        if split != "test":
            data = json.dumps({"info": {}, "scenes": scenes}).encode()
            members[f"CLEVR_v1.0/scenes/CLEVR_{stem}_scenes.json"] = data
    write_zip(out_dir("clevr") / "CLEVR_v1.0.zip", members)


MAKERS["clevr"] = make_clevr


#: kitti: the drives (videos) of the 8 training images, in train_rand's order: image i is the
#: train_rand[i]-th line of train_mapping.txt. Objects per image from `kitti_objects`.
KITTI_RAND = [3, 1, 8, 5, 2, 7, 4, 6]
KITTI_MAPPING = [
    "2011_09_26 2011_09_26_drive_0001_sync 0000000000",
    "2011_09_26 2011_09_26_drive_0001_sync 0000000001",
    "2011_09_26 2011_09_26_drive_0002_sync 0000000000",
    "2011_09_26 2011_09_26_drive_0005_sync 0000000000",
    "2011_09_28 2011_09_28_drive_0016_sync 0000000000",
    "2011_09_28 2011_09_28_drive_0016_sync 0000000003",
    "2011_09_29 2011_09_29_drive_0004_sync 0000000000",
    "2011_09_29 2011_09_29_drive_0004_sync 0000000007",
]
#: What TFDS 4.9.10's kitti _build_splits gives for these two files (run in the side venv).
KITTI_SPLITS = {"train": [2, 3, 5, 6, 7], "validation": [1, 4], "test": [0]}
KITTI_SIZE = (20, 30)  # height, width of every image


def kitti_objects(image_id: int) -> list[str]:
    """The label file's lines: one car, a pedestrian for odd ids, and a DontCare."""
    lines = [
        f"Car 0.{image_id} {image_id % 4} -1.5{image_id} 3.00 2.00 21.50 15.25 1.5 1.6 "
        f"3.9 -2.{image_id} 1.7 13.4 -1.57"
    ]
    if image_id % 2:
        lines.append("Pedestrian 0.00 1 0.21 10.00 0.00 29.00 20.00 1.8 0.5 0.9 4.5 1.6 8.2 0.7")
    lines.append("DontCare -1 -1 -10 1.00 2.00 3.00 4.00 -1 -1 -1 -1000 -1000 -1000 -10")
    return lines


def kitti_pixels(image_id: int) -> np.ndarray[Any, Any]:
    r, c, ch = np.ogrid[: KITTI_SIZE[0], : KITTI_SIZE[1], :3]
    return ((r * 11 + c * 3 + ch * 70 + image_id * 20) % 256).astype(np.uint8)


def make_kitti() -> None:
    from PIL import Image

    from dummy_images import write_zip

    out = out_dir("kitti")
    images, labels = {}, {}
    for image_id in range(len(KITTI_RAND)):
        png = io.BytesIO()
        Image.fromarray(kitti_pixels(image_id)).save(png, format="PNG")
        images[f"training/image_2/{image_id:06d}.png"] = png.getvalue()
        labels[f"training/label_2/{image_id:06d}.txt"] = "\n".join(kitti_objects(image_id)).encode()
    images["testing/image_2/000000.png"] = images["training/image_2/000000.png"]
    write_zip(out / "data_object_image_2.zip", images)
    write_zip(out / "data_object_label_2.zip", labels)
    devkit = {"mapping/train_rand.txt": ",".join(map(str, KITTI_RAND)).encode() + b"\n",
              "mapping/train_mapping.txt": ("\n".join(KITTI_MAPPING) + "\n").encode(),
              "readme.txt": b"devkit\n"}  # fmt: skip
    write_zip(out / "devkit_object.zip", devkit)


MAKERS["kitti"] = make_kitti


#: caltech_birds2011: image id -> (path under images/, 1 train / 0 test, (x, y, w, h) box,
#: (height, width)); images.txt lists them in this order.
CUB = {
    "1": ("001.Black_footed_Albatross/Black_Footed_Albatross_0001_796111.jpg", 1,
          (2.0, 3.0, 10.0, 8.0), (16, 20)),
    "2": ("001.Black_footed_Albatross/Black_Footed_Albatross_0002_55.jpg", 0,
          (0.0, 0.0, 12.0, 10.0), (10, 12)),
    "3": ("200.Common_Yellowthroat/Common_Yellowthroat_0003_190521.jpg", 1,
          (5.5, 1.0, 20.0, 4.0), (12, 18)),  # x + w > width: the box is clipped at 1
}  # fmt: skip


def cub_mask(image_id: str) -> np.ndarray[Any, Any]:
    height, width = CUB[image_id][3]
    r, c = np.ogrid[:height, :width]
    return ((r * 17 + c * 29 + int(image_id) * 51) % 256).astype(np.uint8)


def cub_colour(image_id: str) -> tuple[int, int, int]:
    return (60 * int(image_id), 180, 240 - 50 * int(image_id))


def make_caltech_birds2011() -> None:
    from PIL import Image

    out = out_dir("caltech_birds2011")
    root = "CUB_200_2011"
    members = {f"{root}/README": b"CUB-200-2011\n", f"{root}/classes.txt": b"1 001.Black\n"}
    masks = {}
    for image_id, (path, _, _, (height, width)) in CUB.items():
        members[f"{root}/images/{path}"] = jpeg(height, width, cub_colour(image_id))
        png = io.BytesIO()
        Image.fromarray(cub_mask(image_id), "L").save(png, format="PNG")
        masks[f"segmentations/{path[:-4]}.png"] = png.getvalue()
    members[f"{root}/images.txt"] = "".join(f"{i} {v[0]}\n" for i, v in CUB.items()).encode()
    members[f"{root}/train_test_split.txt"] = "".join(
        f"{i} {v[1]}\n" for i, v in CUB.items()
    ).encode()
    members[f"{root}/bounding_boxes.txt"] = "".join(
        f"{i} " + " ".join(map(str, v[2])) + "\n" for i, v in CUB.items()
    ).encode()
    (out / "CUB_200_2011.tgz").write_bytes(tar_bytes(members, "gz"))
    (out / "segmentations.tgz").write_bytes(tar_bytes(masks, "gz"))


MAKERS["caltech_birds2011"] = make_caltech_birds2011
