"""VTAB-1k's split specs: the strings google-research/task_adaptation builds, recorded here as
facts (task_adaptation/data/*.py at d7630d3, evaluated with TFDS 4.9's split sizes), against
`catalog.api.vtab`, and the sizes against catalog's registered builders."""

from __future__ import annotations

import numpy as np
import pytest

import catalog
from catalog.api import vtab
from catalog.info.splits import resolve

#: task -> (the source's TFDS split sizes, {split name: task_adaptation's spec}).
OFFICIAL = {"train": "train", "val": "validation", "trainval": "train+validation",
            "test": "test", "train800": "train[:800]", "val200": "validation[:200]",
            "train800val200": "train[:800]+validation[:200]"}  # fmt: skip
FACTS: dict[str, tuple[dict[str, int], dict[str, str]]] = {
    "caltech101": ({"train": 3060, "test": 6084}, {
        "train": "train[:2754]", "val": "train[2754:]", "trainval": "train", "test": "test",
        "train800": "train[:800]", "val200": "train[2754:2954]",
        "train800val200": "train[:800]+train[2754:2954]"}),
    "cifar100": ({"train": 50000, "test": 10000}, {
        "train": "train[:45000]", "val": "train[45000:]", "trainval": "train", "test": "test",
        "train800": "train[:800]", "val200": "train[45000:45200]",
        "train800val200": "train[:800]+train[45000:45200]"}),
    "dtd": ({"train": 1880, "validation": 1880, "test": 1880}, OFFICIAL),
    "oxford_flowers102": ({"train": 1020, "validation": 1020, "test": 6149}, OFFICIAL),
    "oxford_iiit_pet": ({"train": 3680, "test": 3669}, {
        "train": "train[:2944]", "val": "train[2944:]", "trainval": "train", "test": "test",
        "train800": "train[:800]", "val200": "train[2944:3144]",
        "train800val200": "train[:800]+train[2944:3144]"}),
    "sun397": ({"train": 76127, "validation": 10875, "test": 21750}, OFFICIAL),
    "svhn": ({"train": 73257, "test": 26032, "extra": 531131}, {
        "train": "train[:65931]", "val": "train[65931:]", "trainval": "train", "test": "test",
        "train800": "train[:800]", "val200": "train[65931:66131]",
        "train800val200": "train[:800]+train[65931:66131]"}),
    "patch_camelyon": ({"train": 262144, "validation": 32768, "test": 32768}, OFFICIAL),
    "eurosat": ({"train": 27000}, {
        "train": "train[:16200]", "val": "train[16200:21600]", "trainval": "train[:21600]",
        "test": "train[21600:]", "train800": "train[:800]", "val200": "train[16200:16400]",
        "train800val200": "train[:800]+train[16200:16400]"}),
    "resisc45": ({"train": 31500}, {
        "train": "train[:18900]", "val": "train[18900:25200]", "trainval": "train[:25200]",
        "test": "train[25200:]", "train800": "train[:800]", "val200": "train[18900:19100]",
        "train800val200": "train[:800]+train[18900:19100]"}),
    "diabetic_retinopathy": (
        {"train": 35126, "validation": 10906, "test": 42670, "sample": 10}, OFFICIAL),
    **{f"clevr/{task}": ({"train": 70000, "validation": 15000, "test": 15000}, {
        "train": "train[:63000]", "val": "train[63000:]", "trainval": "train",
        "test": "validation", "train800": "train[:800]", "val200": "train[63000:63200]",
        "train800val200": "train[:800]+train[63000:63200]"})
       for task in ("count_all", "closest_object_distance")},
    "dmlab": ({"train": 65550, "validation": 22628, "test": 22735}, OFFICIAL),
    **{f"dsprites/{attribute}": ({"train": 737280}, {
        "train": "train[:589824]", "val": "train[589824:663552]",
        "trainval": "train[:663552]", "test": "train[663552:]", "train800": "train[:800]",
        "val200": "train[589824:590024]", "train800val200": "train[:800]+train[589824:590024]"})
       for attribute in ("label_x_position", "label_orientation")},
    "kitti/closest_vehicle_distance": (
        {"train": 6347, "validation": 423, "test": 711}, OFFICIAL),
    **{f"smallnorb/{attribute}": ({"train": 24300, "test": 24300}, {
        "train": "train", "val": "test[:50%]", "trainval": "train+test[:50%]",
        "test": "test[50%:]", "train800": "train[:800]", "val200": "test[:200]",
        "train800val200": "train[:800]+test[:200]"})
       for attribute in ("label_azimuth", "label_elevation")},
}  # fmt: skip


def test_the_table_holds_the_19_tasks_of_vtab_1k() -> None:
    assert set(vtab.TASKS) == set(FACTS) and len(FACTS) == 19
    groups = [t.group for t in vtab.TASKS.values()]
    assert (groups.count("natural"), groups.count("specialized")) == (7, 4)


@pytest.mark.parametrize("task", sorted(FACTS))
def test_specs_are_task_adaptations_strings(task: str) -> None:
    sizes, expected = FACTS[task]
    specs = vtab.splits(task, sizes)
    assert specs == expected
    counts = {name: sum(len(r) for _, r in resolve(spec, sizes)) for name, spec in specs.items()}
    assert (counts["train800"], counts["val200"], counts["train800val200"]) == (800, 200, 1000)
    pieces = {name: resolve(spec, sizes) for name, spec in specs.items()}
    assert not _overlap(pieces["train800"], pieces["val200"])
    assert not _overlap(pieces["trainval"], pieces["test"])
    for split, r in pieces["train800val200"]:  # within trainval
        assert any(s == split and t.start <= r.start and r.stop <= t.stop
                   for s, t in pieces["trainval"])  # fmt: skip


def _overlap(a: list[tuple[str, range]], b: list[tuple[str, range]]) -> bool:
    return any(s == t and max(r.start, q.start) < min(r.stop, q.stop) for s, r in a for t, q in b)


def test_every_source_is_registered() -> None:
    sources = {t.dataset.split("/")[0] for t in vtab.TASKS.values()}
    assert sources <= set(catalog.list_datasets())
    for t in vtab.TASKS.values():  # the config too (diabetic_retinopathy's btgraham-300)
        assert catalog.builder(t.dataset).spec.full_name == t.dataset


@pytest.mark.parametrize("task", sorted(FACTS))
def test_registered_sources_have_tfds_split_sizes(task: str) -> None:
    sizes, expected = FACTS[task]
    t = vtab.TASKS[task]
    spec = catalog.builder(t.dataset).spec
    assert {s: x.num_examples for s, x in spec.splits.items()} == sizes
    assert vtab.task_splits(task) == expected
    if t.label in spec.features:
        assert spec.features[t.label].num_classes == t.num_classes  # type: ignore[attr-defined]


def test_an_unknown_task_names_the_tasks() -> None:
    with pytest.raises(catalog.DatasetNotFoundError, match="no VTAB-1k task 'cifar10'.*caltech101"):
        vtab.splits("cifar10", {"train": 50000})


#: (task, the source example's features it reads, the label task_adaptation gives it).
LABELS = [
    ("clevr/count_all", {"objects": {"size": np.array([0, 1, 1, 0, 1])}}, 2),
    ("clevr/closest_object_distance",
     {"objects": {"pixel_coords": np.array([[1, 2, 12.0], [3, 4, 9.2]], np.float32)}}, 3),
    ("clevr/closest_object_distance",
     {"objects": {"pixel_coords": np.array([[1, 2, 7.9]], np.float32)}}, 0),
    ("kitti/closest_vehicle_distance",  # a pedestrian at 5 m, a car at 25 m, a truck at 15 m
     {"objects": {"type": np.array([3, 0, 2]),
                  "location": np.array([[0, 0, 5.0], [0, 0, 25.0], [0, 0, 15.0]], np.float32)}}, 1),
    ("kitti/closest_vehicle_distance",  # no vehicle: 1000 m, the last class
     {"objects": {"type": np.array([3]), "location": np.array([[0, 0, 4.0]], np.float32)}}, 3),
    ("dsprites/label_x_position", {"label_x_position": 31}, 15),
    ("dsprites/label_orientation", {"label_orientation": 39}, 15),
    ("dsprites/label_orientation", {"label_orientation": 5}, 2),
    ("smallnorb/label_azimuth", {"label_azimuth": 17, "label_elevation": 3}, 17),
    ("smallnorb/label_elevation", {"label_azimuth": 17, "label_elevation": 3}, 3),
    ("dmlab", {"label": 4}, 4),
]  # fmt: skip


@pytest.mark.parametrize(("task", "example", "expected"), LABELS)
def test_labels_as_task_adaptation_computes_them(
    task: str, example: dict[str, object], expected: int
) -> None:
    assert vtab.label(task, example) == expected
    assert 0 <= expected < vtab.TASKS[task].num_classes
