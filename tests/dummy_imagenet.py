"""The ImageNet family's and COCO's dummy files, in the exact upstream layout:
ILSVRC2012_img_train.tar is a tar of per-class tars (with a CMYK JPEG and a PNG named .JPEG
where the real ones are), ILSVRC2012_img_val.tar a flat tar whose archive order is not the
sorted order of its names; COCO's annotation zips and image zips. The values
tests/builders/test_builders_imagenet.py checks come from here."""

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


# COCO 2017: the annotation zips hold annotations/<kind>_<split>2017.json; each image zip
# holds <split>2017/<12-digit id>.jpg. The categories are COCO's 80, with its ids (1..90 with
# ten gaps), in file order.
COCO_GAPS = {12, 26, 29, 30, 45, 66, 68, 69, 71, 83}


def coco_categories() -> list[dict[str, object]]:
    names = (BUILDERS / "coco" / "label_names.txt").read_text().splitlines()
    ids = [i for i in range(1, 91) if i not in COCO_GAPS]
    return [{"supercategory": "thing", "id": i, "name": n} for i, n in zip(ids, names, strict=True)]


#: split -> images (id, height, width, colour or "gray"), in file order (not id order)
COCO_IMAGES = {
    "train": [(139, 6, 8, (200, 40, 40)), (9, 5, 10, "gray"), (25, 8, 4, (20, 200, 40))],
    "validation": [(785, 7, 7, (40, 40, 200)), (632, 4, 6, (90, 90, 90))],
    "test": [(1, 5, 5, (250, 10, 10)), (57, 6, 3, (10, 10, 250))],
}
#: split -> annotations (id, image id, category id, [x, y, w, h], area, iscrowd), file order
COCO_ANNOTATIONS = {
    "train": [
        (1768, 139, 1, [1.5, 0.25, 4.0, 3.5], 10.75, 0),
        (42, 139, 90, [0.0, 0.0, 8.0, 6.0], 47.9, 1),
        (7, 9, 18, [2.0, 1.0, 3.25, 2.5], 6.3, 0),
    ],  # image 25 has none
    "validation": [(900100, 632, 44, [0.5, 0.5, 5.5, 3.5], 19.99, 0)],
}
COCO_FOLDERS = {"train": "train2017", "validation": "val2017", "test": "test2017"}


def coco_file_name(image_id: int) -> str:
    return f"{image_id:012d}.jpg"


def coco_image(height: int, width: int, colour: object) -> bytes:
    if colour == "gray":
        return image_file("gray", (height, width), (128,))
    return jpeg(height, width, colour)  # type: ignore[arg-type]


def coco_json(split: str) -> dict[str, object]:
    images = [
        {"license": 1, "file_name": coco_file_name(i), "height": h, "width": w, "id": i}
        for i, h, w, _ in COCO_IMAGES[split]
    ]
    data: dict[str, object] = {"info": {"year": 2017}, "licenses": [], "images": images,
                               "categories": coco_categories()}  # fmt: skip
    if split != "test":
        data["annotations"] = [
            {"segmentation": [[0, 0, 1, 1]], "area": area, "iscrowd": crowd, "image_id": image,
             "bbox": box, "category_id": category, "id": ann}
            for ann, image, category, box, area, crowd in COCO_ANNOTATIONS[split]
        ]  # fmt: skip
    return data


def make_coco() -> None:
    import json

    from dummy_images import write_zip

    out = out_dir("coco", "2017")
    annotations = {
        f"annotations/instances_{COCO_FOLDERS[s]}.json": json.dumps(coco_json(s)).encode()
        for s in ("train", "validation")
    }
    annotations["annotations/captions_train2017.json"] = b'{"annotations": []}'
    write_zip(out / "annotations_trainval2017.zip", annotations)
    test = {"annotations/image_info_test2017.json": json.dumps(coco_json("test")).encode()}
    write_zip(out / "image_info_test2017.zip", test)
    for split, folder in COCO_FOLDERS.items():
        files = {f"{folder}/{coco_file_name(i)}": coco_image(h, w, c)
                 for i, h, w, c in COCO_IMAGES[split]}  # fmt: skip
        write_zip(out / f"{folder}.zip", files)


MAKERS["coco"] = make_coco


# The robustness sets: archive -> [(path in the archive, class, (height, width), colour)];
# a class is a wnid, or for ImageNetV2 a class index.
V2_TOPS = {
    "matched-frequency": ("imagenetv2-matched-frequency.tar.gz",
                          "imagenetv2-matched-frequency-format-val"),
    "threshold-0.7": ("imagenetv2-threshold0.7.tar.gz", "imagenetv2-threshold0.7-format-val"),
    "topimages": ("imagenetv2-top-images.tar.gz", "imagenetv2-top-images-format-val"),
}  # fmt: skip


def v2_files(config: str) -> list[tuple[str, str, tuple[int, int], tuple[int, int, int]]]:
    top = V2_TOPS[config][1]
    shift = list(V2_TOPS).index(config) * 40
    return [
        (f"{top}/0/7e1c3f.jpeg", "0", (4, 5), (shift, 10, 10)),
        (f"{top}/10/0a9b.jpeg", "10", (5, 4), (10, shift, 10)),
        (f"{top}/999/ffe2.jpeg", "999", (3, 6), (10, 10, shift)),
    ]


ROBUSTNESS = {
    "imagenet_a": ("imagenet-a.tar", [
        ("imagenet-a/n01498041/0.000116_digital clock _ digital clock_0.865662.jpg",
         "n01498041", (4, 4), (100, 0, 0)),
        ("imagenet-a/n12267677/0.000962_acorn _ acorn_0.99.jpg", "n12267677", (6, 5), (0, 90, 0)),
    ]),
    "imagenet_r": ("imagenet-r.tar", [
        ("imagenet-r/n01443537/art_0.jpg", "n01443537", (5, 5), (10, 20, 30)),
        ("imagenet-r/n01443537/cartoon_3.jpg", "n01443537", (3, 7), (200, 20, 30)),
        ("imagenet-r/n12267677/toy_1.jpg", "n12267677", (6, 4), (10, 220, 30)),
    ]),
    "imagenet_sketch": ("ImageNet-Sketch.zip", [
        ("sketch/n01440764/sketch_0.JPEG", "n01440764", (5, 6), (90, 90, 90)),
        ("sketch/n01440764/sketch_12.JPEG", "n01440764", (4, 4), (30, 30, 30)),
        ("sketch/n15075141/sketch_7.JPEG", "n15075141", (6, 3), (240, 240, 240)),
    ]),
}  # fmt: skip


def make_robustness() -> None:
    from dummy_images import write_zip

    for config, (archive, _) in V2_TOPS.items():
        files = {path: jpeg(*size, colour) for path, _, size, colour in v2_files(config)}
        (out_dir("imagenet_v2", config) / archive).write_bytes(tar_bytes(files, "gz"))
    for name, (archive, entries) in ROBUSTNESS.items():
        files = {path: jpeg(*size, colour) for path, _, size, colour in entries}
        if archive.endswith(".zip"):  # only the sketches
            write_zip(out_dir(name) / archive, files)
        else:  # the archives' READMEs are no examples
            files[f"{entries[0][0].split('/')[0]}/README.txt"] = b"not an example"
            (out_dir(name) / archive).write_bytes(tar_bytes(files))


MAKERS["robustness"] = make_robustness


#: imagenet2012_subset: config -> the train files its list keeps
SUBSETS = {
    "1pct": ("1percent.txt", ["n01440764_39.JPEG", "n01739381_1309.JPEG"]),
    "10pct": ("10percent.txt", ["n01440764_10026.JPEG", "n01440764_39.JPEG",
                                "n01739381_77.JPEG", "n02105855_2933.JPEG"]),
}  # fmt: skip
#: imagenet2012_real: real.json, the ReaL labels of val_00000001..4 (class indices)
REAL_LABELS = [[65, 58], [970], [], [809, 230]]


def make_imagenet_derived() -> None:
    import json

    for name in ("imagenet2012_subset", "imagenet2012_real"):
        out = out_dir(name)
        (out / "ILSVRC2012_img_val.tar").write_bytes(tar_bytes(validation_files()))
        (out / "validation_labels.txt").write_text("".join(f"{x}\n" for x in VALIDATION_LABELS))
    out = out_dir("imagenet2012_subset")
    (out / "ILSVRC2012_img_train.tar").write_bytes(train_tar())
    for file, names in SUBSETS.values():
        (out / file).write_text("".join(f"{n}\n" for n in names))
    (out_dir("imagenet2012_real") / "real.json").write_text(json.dumps(REAL_LABELS))


MAKERS["imagenet_derived"] = make_imagenet_derived
