"""The image datasets (emnist ... voc) prepared from their dummy files over loopback HTTP,
checked value by value against what tests/dummy_images.py wrote."""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.errors import FeatureError, SourceFormatError
from catalog.features import ClassLabel
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.read.data_source import DataSource
from catalog.testing.harness import run_builder

from conftest import BUILDERS, assert_builder_facts
from dummy_images import (
    BEANS,
    CATS_VS_DOGS,
    CIFAR10_1,
    COLORECTAL,
    DEEP_WEEDS,
    DTD,
    EMNIST,
    EUROSAT,
    FLOWERS102_IDS,
    FLOWERS102_LABELS,
    HORSES,
    HORSES_RGBA,
    IMAGENETTE,
    IMAGENETTE_FILES,
    MNIST_C,
    MNIST_C_COUNTS,
    PETS,
    PETS_IMAGES,
    PETS_NOT_JPEG,
    RPS,
    STL10,
    VOC_IMAGES,
    VOC_SPLITS,
    caltech_files,
    cifar10_1_arrays,
    colorectal_image,
    deep_weeds_colour,
    dtd_colour,
    emnist_arrays,
    imagenette_colour,
    mnist_c_arrays,
    pets_colour,
    pets_trimap,
    stl10_images,
    stl10_labels,
)


@pytest.mark.parametrize("config", list(EMNIST))
def test_emnist_configs_read_idx_members_of_one_zip(config: str, tmp_path: Path) -> None:
    _, classes, counts = EMNIST[config]
    ds = run_builder(BUILDERS / "emnist", tmp_path, config=config, num_examples=counts)
    assert ds["train"].features["label"].num_classes == classes
    for split, count in counts.items():
        images, labels = emnist_arrays(config, split)
        for i in range(count):
            np.testing.assert_array_equal(ds[split][i]["image"], images[i][..., None])
            assert ds[split][i]["label"] == int(labels[i])


def raw(tmp_path: Path, split: str, feature: str = "image") -> DataSource:
    """The prepared split with `feature` left as its stored bytes."""
    folder = next((tmp_path / "data").rglob(INFO_FILE)).parent
    return DataSource(folder, DatasetInfo.read(folder), split, decoders={feature: False})


Entries = list[tuple[str, str, tuple[int, int, int]]]


def check_files(
    folder: str,
    tmp_path: Path,
    splits: dict[str, tuple[str, Entries]],
    *,
    png: bool,
    config: str | None = None,
    read: Callable[[Path, str], bytes] | None = None,
    reencoded: tuple[str, ...] = (),
) -> dict[str, DataSource]:
    """Prepare `folder`; every split holds exactly the listed files, in order, with their
    label and the file's original bytes (a PNG: every pixel its colour; a JPEG: within 3)."""
    counts = {split: len(entries) for split, (_, entries) in splits.items()}
    ds = run_builder(BUILDERS / folder, tmp_path, config=config, num_examples=counts)
    names = ds[next(iter(counts))].features["label"].names
    for split, (archive, entries) in splits.items():
        stored = raw(tmp_path, split)
        for i, (path, label, colour) in enumerate(entries):
            example = ds[split][i]
            assert names[example["label"]] == label, (split, i, path)
            image = example["image"].astype(int)
            assert np.abs(image - colour).max() <= (0 if png else 3), (split, i, path)
            archive_path = BUILDERS / folder / "dummy_data" / archive
            original = read(archive_path, path) if read else _zip_member(archive_path, path)
            if path in reencoded:  # refused as it is: decoded and stored anew
                assert stored[i]["image"] != original, (split, i, path)
            else:
                assert stored[i]["image"] == original, (split, i, path)  # byte for byte
    return ds


def _zip_member(archive: Path, member: str) -> bytes:
    with zipfile.ZipFile(archive) as zf:
        return zf.read(member)


def test_rock_paper_scissors_keeps_matching_pngs_only(tmp_path: Path) -> None:
    check_files("rock_paper_scissors", tmp_path, RPS, png=True)


def test_horses_or_humans_reencodes_an_rgba_png_only(tmp_path: Path) -> None:
    check_files("horses_or_humans", tmp_path, HORSES, png=True, reencoded=(HORSES_RGBA,))
    archive = BUILDERS / "horses_or_humans" / "dummy_data" / "validation-horse-or-human.zip"
    assert _zip_member(archive, HORSES_RGBA)[25] == 6  # the PNG's colour type: RGBA


def test_beans_labels_by_parent_folder_and_skips_non_jpgs(tmp_path: Path) -> None:
    check_files("beans", tmp_path, BEANS, png=False)


def test_cats_vs_dogs_skips_files_without_jfif_in_their_first_512_bytes(tmp_path: Path) -> None:
    ds = check_files(
        "cats_vs_dogs", tmp_path,
        {"train": ("kagglecatsanddogs_5340.zip", CATS_VS_DOGS)}, png=False,
    )  # fmt: skip
    assert [ds["train"][i]["image/filename"] for i in range(3)] == [p for p, _, _ in CATS_VS_DOGS]
    assert ds["train"][0]["image"].shape == (4, 6, 3)


def test_cats_vs_dogs_fails_when_the_skip_count_differs(tmp_path: Path) -> None:
    folder = shutil.copytree(BUILDERS / "cats_vs_dogs", tmp_path / "cats_vs_dogs")
    spec = folder / "builder.yaml"
    spec.write_text(spec.read_text().replace("expected_skipped: 1738", "expected_skipped: 1737"))
    with pytest.raises(SourceFormatError, match="1738 files lack 'JFIF' in their first 512 bytes, "
                       "but the split's options.expected_skipped says 1737"):  # fmt: skip
        run_builder(folder, tmp_path, num_examples={"train": 3})


def test_eurosat_labels_by_file_name(tmp_path: Path) -> None:
    ds = check_files("eurosat", tmp_path, {"train": ("EuroSAT.zip", EUROSAT)}, png=False)
    assert [ds["train"][i]["filename"] for i in range(3)] == [
        "AnnualCrop_1.jpg", "Forest_2.jpg", "SeaLake_10.jpg",
    ]  # fmt: skip


def _tar_member(archive: Path, member: str) -> bytes:
    with tarfile.open(archive) as tar:
        data = tar.extractfile(member)
        assert data is not None
        return data.read()


@pytest.mark.parametrize("config", list(IMAGENETTE))
def test_imagenette_configs_read_upper_case_jpegs(config: str, tmp_path: Path) -> None:
    archive, root, size = IMAGENETTE[config]
    splits = {
        split: (archive, [
            (f"{root}/{'train' if split == 'train' else 'val'}/{wnid}/{name}", wnid,
             imagenette_colour(config, split, i))
            for i, (wnid, name) in enumerate(entries)
        ])
        for split, entries in IMAGENETTE_FILES.items()
    }  # fmt: skip
    ds = check_files("imagenette", tmp_path, splits, png=False, config=config, read=_tar_member)
    assert ds["train"][1]["image"].shape == (size, size + 1, 3)


@pytest.mark.parametrize("config", list(CIFAR10_1))
def test_cifar10_1_reads_two_npy_files(config: str, tmp_path: Path) -> None:
    images, labels = cifar10_1_arrays(config)
    ds = run_builder(BUILDERS / "cifar10_1", tmp_path, config=config,
                     num_examples={"test": len(labels)})  # fmt: skip
    for i, label in enumerate(labels):
        np.testing.assert_array_equal(ds["test"][i]["image"], images[i])
        assert ds["test"][i]["label"] == label


@pytest.mark.parametrize("config", list(MNIST_C))
def test_mnist_corrupted_configs_share_one_zip(config: str, tmp_path: Path) -> None:
    ds = run_builder(BUILDERS / "mnist_corrupted", tmp_path, config=config,
                     num_examples=MNIST_C_COUNTS)  # fmt: skip
    for split, count in MNIST_C_COUNTS.items():
        images, labels = mnist_c_arrays(config, split)
        for i in range(count):
            np.testing.assert_array_equal(ds[split][i]["image"], images[i])
            assert ds[split][i]["label"] == labels[i]


def test_dtd_reads_fold_1_list_files(tmp_path: Path) -> None:
    counts = {split: len(lines) for split, lines in DTD.items()}
    ds = run_builder(BUILDERS / "dtd", tmp_path, num_examples=counts)
    names = ds["train"].features["label"].names
    archive = BUILDERS / "dtd" / "dummy_data" / "dtd-r1.0.1.tar.gz"
    for split, lines in DTD.items():
        stored = raw(tmp_path, split)
        for i, line in enumerate(lines):
            example = ds[split][i]
            assert example["file_name"] == line
            assert names[example["label"]] == line.split("/")[0]
            assert example["image"].shape == (5 + i, 6, 3)
            assert np.abs(example["image"].astype(int) - dtd_colour(split, i)).max() <= 3
            assert stored[i]["image"] == _tar_member(archive, f"dtd/images/{line}")


def test_voc_objects_boxes_and_label_sets(tmp_path: Path) -> None:
    counts = {split: len(ids) for split, (_, _, ids) in VOC_SPLITS.items()}
    ds = run_builder(BUILDERS / "voc", tmp_path, num_examples=counts)
    objects = ds["train"].features["objects"].feature
    names, poses = objects["label"].names, objects["pose"].names
    for split, (_, _, ids) in VOC_SPLITS.items():
        for i, image_id in enumerate(ids):
            height, width, _, objs = VOC_IMAGES[image_id]
            example = ds[split][i]
            assert example["image/filename"] == f"{image_id}.jpg"
            assert example["image"].shape == (height, width, 3)
            got = example["objects"]
            assert [names[k] for k in got["label"]] == [o[0].lower() for o in objs]
            assert [poses[k] for k in got["pose"]] == [o[1].lower() for o in objs]
            assert got["is_truncated"].tolist() == [o[2] == "1" for o in objs]
            assert got["is_difficult"].tolist() == [o[3] == "1" for o in objs]
            boxes = [(y0 / height, x0 / width, y1 / height, x1 / width)
                     for *_, (x0, y0, x1, y1) in objs]  # fmt: skip
            assert got["bbox"].shape == (len(objs), 4) and got["bbox"].dtype == np.float32
            np.testing.assert_allclose(got["bbox"], np.array(boxes, np.float32).reshape(-1, 4))
            labels = sorted({names.index(o[0].lower()) for o in objs})
            easy = sorted({names.index(o[0].lower()) for o in objs if o[3] != "1"})
            assert example["labels"].tolist() == labels
            assert example["labels_no_difficult"].tolist() == easy
    # One literal box, so the test does not only repeat the reader's arithmetic.
    np.testing.assert_allclose(ds["train"][0]["objects"]["bbox"][0], [0.25, 0.1, 0.75, 0.9])
    assert ds["validation"][0]["labels"].tolist() == [8, 10]  # chair, diningtable
    assert ds["validation"][0]["labels_no_difficult"].tolist() == [8, 10]
    assert ds["train"][1]["labels_no_difficult"].tolist() == [14]  # the horse is difficult


def test_deep_weeds_labels_from_the_csv(tmp_path: Path) -> None:
    entries = [(name, species, deep_weeds_colour(i))
               for i, (name, _, species) in enumerate(DEEP_WEEDS)]  # fmt: skip
    check_files("deep_weeds", tmp_path, {"train": ("images.zip", entries)}, png=False)


def test_deep_weeds_refuses_a_file_the_csv_does_not_list(tmp_path: Path) -> None:
    folder = shutil.copytree(BUILDERS / "deep_weeds", tmp_path / "deep_weeds")
    csv_file = folder / "dummy_data" / "labels.csv"
    csv_file.write_text("\n".join(csv_file.read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(SourceFormatError, match="20160928-140314-0.jpg: not listed in"):
        run_builder(folder, tmp_path, num_examples={"train": len(DEEP_WEEDS)})


def test_oxford_flowers102_ids_and_labels_from_mat_files(tmp_path: Path) -> None:
    counts = {split: len(ids) for split, ids in FLOWERS102_IDS.items()}
    ds = run_builder(BUILDERS / "oxford_flowers102", tmp_path, num_examples=counts)
    names = ds["train"].features["label"].names
    archive = BUILDERS / "oxford_flowers102" / "dummy_data" / "102flowers.tgz"
    for split, ids in FLOWERS102_IDS.items():
        stored = raw(tmp_path, split)
        for i, image_id in enumerate(ids):
            example = ds[split][i]
            assert example["label"] == FLOWERS102_LABELS[image_id - 1] - 1
            assert example["file_name"] == f"image_{image_id:05d}.jpg"
            assert example["image"].shape == (6, 4 + image_id, 3)
            original = _tar_member(archive, f"jpg/image_{image_id:05d}.jpg")
            assert stored[i]["image"] == original
    assert names[ds["test"][2]["label"]] == "pink-yellow dahlia?"  # image 3, label 60
    assert names[ds["train"][0]["label"]] == "blackberry lily"  # image 2, label 102


def test_oxford_iiit_pet_lists_masks_and_head_boxes(tmp_path: Path) -> None:
    counts = {split: len(lines) for split, lines in PETS.items()}
    ds = run_builder(BUILDERS / "oxford_iiit_pet", tmp_path, num_examples=counts)
    names = ds["train"].features["label"].names
    archive = BUILDERS / "oxford_iiit_pet" / "dummy_data" / "images.tar.gz"
    for split, lines in PETS.items():
        stored = raw(tmp_path, split)
        for i, (name, breed, species) in enumerate(lines):
            height, width, box = PETS_IMAGES[name]
            example = ds[split][i]
            assert example["label"] == breed - 1 and example["species"] == species - 1
            assert example["file_name"] == f"{name}.jpg"
            assert example["image"].shape == (height, width, 3)
            assert np.abs(example["image"].astype(int) - pets_colour(name)).max() <= 3
            np.testing.assert_array_equal(example["segmentation_mask"][..., 0], pets_trimap(name))
            want = (0, 0, 0, 0) if box is None else (
                box[1] / height, box[0] / width, box[3] / height, box[2] / width)  # fmt: skip
            np.testing.assert_allclose(example["head_bbox"], np.array(want, np.float32))
            original = _tar_member(archive, f"images/{name}.jpg")
            # Byte for byte, the PNG named .jpg too: a jpeg feature keeps a PNG file as it is.
            assert (original[:4] == b"\x89PNG") == (name == PETS_NOT_JPEG)
            assert stored[i]["image"] == original
    assert names[ds["train"][1]["label"]] == "yorkshire_terrier"
    np.testing.assert_allclose(ds["train"][0]["head_bbox"], [0.1, 0.1, 0.5, 0.5])


def test_caltech101_samples_30_per_class_from_a_tar_inside_the_zip(tmp_path: Path) -> None:
    files = caltech_files()
    # The rule, restated: RandomState(1234), classes and files sorted, 30 chosen per class.
    rng = np.random.RandomState(1234)
    chosen = {cls: set(rng.choice(files[cls], 30, replace=False)) for cls in sorted(files)}
    train = [p for cls in sorted(files) for p in files[cls] if p in chosen[cls]]
    test = [p for cls in sorted(files) for p in files[cls] if p not in chosen[cls]]
    assert len(train) == 90 and len(test) == 3
    ds = run_builder(BUILDERS / "caltech101", tmp_path, num_examples={"train": 90, "test": 3})
    names = ds["train"].features["label"].names
    for split, expected in (("train", train), ("test", test)):
        got = [(names[e["label"]], e["image/file_name"]) for e in ds[split]]
        want = [(p.split("/")[1].lower(), p.split("/")[2]) for p in expected]
        assert got == want
    assert {names[e["label"]] for e in ds["test"]} == {"background_google", "faces_easy"}
    # Both archives were read in place: nothing was extracted from either.
    extracted = [p.name for p in (tmp_path / "downloads").rglob("*")]
    assert "caltech-101.zip" in " ".join(extracted)
    assert not any(n in ("101_ObjectCategories.tar.gz", "image_0001.jpg") for n in extracted)


def test_stl10_column_major_planes_and_an_unlabelled_split(tmp_path: Path) -> None:
    counts = {split: count for split, (_, count) in STL10.items()}
    ds = run_builder(BUILDERS / "stl10", tmp_path, num_examples=counts)
    for split, count in counts.items():
        images = stl10_images(split)
        for i in range(count):
            example = ds[split][i]
            np.testing.assert_array_equal(example["image"], images[i])
            want = -1 if split == "unlabelled" else int(stl10_labels(split)[i]) - 1
            assert example["label"] == want
    assert [e["label"] for e in ds["unlabelled"]] == [-1, -1, -1, -1]  # the batched path too
    # One literal pixel: image 1 of train, row 2, column 3, green: 7 + 10 + 9 + 90.
    assert ds["train"][1]["image"][2, 3, 1] == 116


def test_colorectal_histology_decodes_tiffs_into_pngs(tmp_path: Path) -> None:
    counts = {"train": len(COLORECTAL)}
    ds = run_builder(BUILDERS / "colorectal_histology", tmp_path, num_examples=counts)
    names = ds["train"].features["label"].names
    stored = raw(tmp_path, "train")
    for i, (path, label) in enumerate(COLORECTAL):
        example = ds["train"][i]
        np.testing.assert_array_equal(example["image"], colorectal_image(i))
        assert names[example["label"]] == label
        assert example["filename"] == path.split("/")[-1]
        assert stored[i]["image"][:4] == b"\x89PNG"


def test_class_label_unlabelled_round_trips_minus_one() -> None:
    assert ClassLabel(num_classes=255, allow_unlabeled=True).fixed_size == 1  # -1 stored as 0
    label = ClassLabel(num_classes=256, allow_unlabeled=True)  # 256 classes and -1: two bytes
    assert label.fixed_size == 2 and label.to_json()["allow_unlabeled"] is True
    for value in (-1, 0, 255):
        data = bytearray(label.encode(value))
        assert label.decode(data, 0, len(data)) == value
    block = np.frombuffer(label.encode(-1) + label.encode(3), np.uint8).reshape(2, 2)
    assert label.decode_block(block) == [-1, 3]
    with pytest.raises(FeatureError, match="label -2 is out of range"):
        label.encode(-2)
    assert label.int2str(-1) == "-1" and label.int2str(255) == "255"
    with pytest.raises(FeatureError, match="label -1 is out of range"):
        ClassLabel(num_classes=3).encode(-1)


EMNIST_COUNTS = {"byclass": (697932, 116323), "bymerge": (697932, 116323),
                 "balanced": (112800, 18800), "letters": (88800, 14800),
                 "digits": (240000, 40000), "mnist": (60000, 10000)}  # fmt: skip
#: What the facts say, per dataset/config: version, split counts, features (type, shape or
#: number of classes).
IMAGE_FACTS: dict[str, tuple[str, dict[str, int], dict[str, tuple[str, object]]]] = {
    **{f"emnist/{c}": ("3.1.0", {"train": tr, "test": te},
                       {"image": ("Image", (28, 28, 1)), "label": ("ClassLabel", EMNIST[c][1])})
       for c, (tr, te) in EMNIST_COUNTS.items()},
    "rock_paper_scissors": ("3.0.0", {"train": 2520, "test": 372},
                            {"image": ("Image", (300, 300, 3)), "label": ("ClassLabel", 3)}),
    "beans": ("0.1.0", {"train": 1034, "validation": 133, "test": 128},
              {"image": ("Image", (500, 500, 3)), "label": ("ClassLabel", 3)}),
    "horses_or_humans": ("3.0.0", {"train": 1027, "test": 256},
                         {"image": ("Image", (300, 300, 3)), "label": ("ClassLabel", 2)}),
    "cats_vs_dogs": ("4.0.1", {"train": 23262},
                     {"image": ("Image", (None, None, 3)), "image/filename": ("Text", ()),
                      "label": ("ClassLabel", 2)}),
    "oxford_flowers102": ("2.1.1", {"train": 1020, "validation": 1020, "test": 6149},
                          {"image": ("Image", (None, None, 3)), "label": ("ClassLabel", 102),
                           "file_name": ("Text", ())}),
    "oxford_iiit_pet": ("4.0.0", {"train": 3680, "test": 3669},
                        {"image": ("Image", (None, None, 3)), "label": ("ClassLabel", 37),
                         "species": ("ClassLabel", 2), "file_name": ("Text", ()),
                         "segmentation_mask": ("Image", (None, None, 1)),
                         "head_bbox": ("BBox", (4,))}),
    "eurosat/rgb": ("2.0.0", {"train": 27000},
                    {"image": ("Image", (64, 64, 3)), "label": ("ClassLabel", 10),
                     "filename": ("Text", ())}),
    **{f"imagenette/{c}": ("1.0.0", {"train": 9469, "validation": 3925} if c.endswith("-v2")
                           else {"train": 12894, "validation": 500},
                           {"image": ("Image", (None, None, 3)), "label": ("ClassLabel", 10)})
       for c in IMAGENETTE},
    "dtd": ("3.0.1", {"train": 1880, "validation": 1880, "test": 1880},
            {"file_name": ("Text", ()), "image": ("Image", (None, None, 3)),
             "label": ("ClassLabel", 47)}),
    "stl10": ("1.0.0", {"train": 5000, "test": 8000, "unlabelled": 100000},
              {"image": ("Image", (96, 96, 3)), "label": ("ClassLabel", 10)}),
    "cifar10_1/v4": ("1.1.0", {"test": 2021},
                     {"image": ("Image", (32, 32, 3)), "label": ("ClassLabel", 10)}),
    "cifar10_1/v6": ("1.1.0", {"test": 2000},
                     {"image": ("Image", (32, 32, 3)), "label": ("ClassLabel", 10)}),
    **{f"mnist_corrupted/{c}": ("1.0.0", {"train": 60000, "test": 10000},
                                {"image": ("Image", (28, 28, 1)), "label": ("ClassLabel", 10)})
       for c in MNIST_C},
    "deep_weeds": ("3.0.0", {"train": 17509},
                   {"image": ("Image", (256, 256, 3)), "label": ("ClassLabel", 9)}),
    "colorectal_histology": ("2.0.0", {"train": 5000},
                             {"image": ("Image", (150, 150, 3)), "label": ("ClassLabel", 8),
                              "filename": ("Text", ())}),
    "caltech101": ("3.0.2", {"train": 3060, "test": 6084},
                   {"image": ("Image", (None, None, 3)), "label": ("ClassLabel", 102),
                    "image/file_name": ("Text", ())}),
    "voc/2007": ("5.0.0", {"train": 2501, "validation": 2510, "test": 4952},
                 {"image": ("Image", (None, None, 3)), "image/filename": ("Text", ()),
                  "objects": ("Sequence", None), "labels": ("Sequence", None),
                  "labels_no_difficult": ("Sequence", None)}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(IMAGE_FACTS))
def test_image_builders_match_the_facts(name: str) -> None:
    b = assert_builder_facts(name, IMAGE_FACTS[name])
    assert b.spec.tags[0] == "image" and len(b.spec.tags) >= 2


def test_every_image_dataset_and_config_is_in_the_facts_table() -> None:
    registered = {
        f"{name}/{config}" if config else name
        for name in IMAGE_DATASETS
        for config in (catalog.builder(name).spec.configs or [None])
    }
    assert registered == set(IMAGE_FACTS)


#: The datasets this file tests (tests/builders/test_builders.py checks every registered one
#: is tested).
IMAGE_DATASETS = sorted({name.split("/")[0] for name in IMAGE_FACTS})


def test_a_damaged_zip_member_is_named(tmp_path: Path) -> None:
    folder = shutil.copytree(BUILDERS / "horses_or_humans", tmp_path / "horses_or_humans")
    archive = folder / "dummy_data" / "horse-or-human.zip"
    data = bytearray(archive.read_bytes())
    member = b"horses/horse01-0.png"
    start = data.index(member) + len(member) + 40  # inside the member's deflated bytes
    data[start : start + 20] = bytes(20)
    archive.write_bytes(bytes(data))
    with pytest.raises(SourceFormatError, match="member horses/horse01-0.png is damaged"):
        run_builder(folder, tmp_path, num_examples={"train": 3, "test": 2})


def test_voc_an_unknown_class_names_the_annotation(tmp_path: Path) -> None:
    folder = shutil.copytree(BUILDERS / "voc", tmp_path / "voc")
    names = folder / "label_names.txt"
    names.write_text(names.read_text().replace("horse\n", "pony\n"))
    counts = {split: len(ids) for split, (_, _, ids) in VOC_SPLITS.items()}
    with pytest.raises(SourceFormatError, match=r"000017.xml: .*unknown class name .horse."):
        run_builder(folder, tmp_path, num_examples=counts)


def test_emnist_reads_the_gz_members_inside_the_zip_without_extracting_it(
    tmp_path: Path,
) -> None:
    run_builder(BUILDERS / "emnist", tmp_path, config="mnist", num_examples=EMNIST["mnist"][2])
    downloads = tmp_path / "downloads"
    assert not list(downloads.rglob("*.gz"))  # nothing extracted from gzip.zip
    assert not (downloads / "extracted").exists() or not any((downloads / "extracted").iterdir())


def test_a_missing_member_of_a_streamed_zip_is_named(tmp_path: Path) -> None:
    folder = shutil.copytree(BUILDERS / "emnist", tmp_path / "emnist")
    spec = folder / "builder.yaml"
    spec.write_text(spec.read_text().replace("emnist-mnist-test-labels", "emnist-mnist-tst-labels"))
    message = r"labels: 'gzip/emnist-mnist-tst-labels-idx1-ubyte.gz' in gzip.zip is not a file"
    with pytest.raises(SourceFormatError, match=message):
        run_builder(folder, tmp_path, config="mnist", num_examples=EMNIST["mnist"][2])


def test_stl10_class_names_must_match_class_names_txt(tmp_path: Path) -> None:
    folder = shutil.copytree(BUILDERS / "stl10", tmp_path / "stl10")
    spec = folder / "builder.yaml"
    spec.write_text(spec.read_text().replace("ship, truck]", "boat, truck]"))
    counts = {split: count for split, (_, count) in STL10.items()}
    with pytest.raises(SourceFormatError, match="first difference at index 8: 'ship' in the file"):
        run_builder(folder, tmp_path, num_examples=counts)
