"""VTAB-1k: the 19 tasks of the Visual Task Adaptation Benchmark as catalog split specs.

google-research/task_adaptation defines each task as a TFDS dataset, the feature (or a
function of the features) it predicts, and split specs over the dataset's own splits. VTAB-1k
trains on ``train800val200`` (800 training and 200 validation examples; ``train800`` and
``val200`` to choose hyperparameters) and reports accuracy on ``test``. The specs depend on
the source's split sizes, by one of four rules:

==============  ==============================================================================
rule            specs (``n``: the examples of ``train``; ``t``: the training part of it)
==============  ==============================================================================
``official``    the source has a validation split: ``train[:800]``, ``validation[:200]``,
                ``test``
``holdout``     validation is the end of train, ``t = percent * n // 100``: ``train[:800]``,
                ``train[t:t+200]``; test is the ``test`` split (CLEVR: ``validation``)
``three_way``   only a train split: ``t = p_train * n // 100``, ``v = p_val * n // 100``;
                ``train[:800]``, ``train[t:t+200]``, test ``train[t+v:]``
``test_halves`` validation is the first half of test (smallNORB): ``train[:800]``,
                ``test[:200]``, test ``test[50%:]``
==============  ==============================================================================

`splits` gives a task's seven specs (``train``, ``val``, ``trainval``, ``test``,
``train800``, ``val200``, ``train800val200``) from the source's split sizes, exactly the
strings task_adaptation builds; `task_splits` takes the sizes from catalog's registered
builder. Each spec reads as any split spec does::

    from catalog.api import vtab
    specs = vtab.task_splits("resisc45")  # {"train800": "train[:800]", ...}
    ds = catalog.data_source("resisc45", split=specs["train800val200"])

The strings are task_adaptation's; the examples they select follow catalog's order, which is
the source files' order, not TFDS's (TFDS orders a split by its examples' hashed keys), so
``train[:800]`` is not the same 800 examples as on a TFDS-prepared copy.

Where a task's label is not a feature of the source (CLEVR's object count, KITTI's distance
to the closest vehicle, a coarser dSprites position), `Task.label` says how task_adaptation
computes it from the example, and `label(task, example)` computes it so from an example as
`DataSource` gives it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from catalog.api.resolve import builder
from catalog.errors import DatasetNotFoundError

__all__ = ["SPLIT_NAMES", "TASKS", "Task", "label", "splits", "task_splits"]

Rule = Literal["official", "holdout", "three_way", "test_halves"]

#: The split specs every task has, in task_adaptation's names.
SPLIT_NAMES = ("train", "val", "trainval", "test", "train800", "val200", "train800val200")


@dataclass(frozen=True)
class Task:
    """One VTAB-1k task: its source dataset (catalog's ``name[/config]``), the rule its
    splits follow with the rule's percentages, what it predicts and how many classes."""

    name: str
    dataset: str
    rule: Rule
    label: str
    num_classes: int
    #: holdout: the percent of train kept for training; three_way: (train, validation).
    percent: tuple[int, ...] = ()
    #: The split test examples come from, where the rule reads a whole split.
    test_split: str = "test"
    group: Literal["natural", "specialized", "structured"] = "natural"


def _t(*args: object, **kwargs: object) -> Task:
    return Task(*args, **kwargs)  # type: ignore[arg-type]


_CLEVR_DIST = (
    "the smallest objects/pixel_coords[:, 2] binned at 8.0, 8.5, 9.0, 9.5, 10.0 "
    "(class i: the i-th bin)"
)
_KITTI_DIST = (
    "the smallest objects/location[:, 2] among vehicles (objects/type < 3: Car, Van, Truck) "
    "binned at 8.0, 20.0, 999.0 (a frame without vehicles: 3)"
)

#: The 19 tasks, in the order of task_adaptation's scripts/run_all_tasks.sh grouped as in the
#: paper: natural, specialized, structured.
TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        _t("caltech101", "caltech101", "holdout", "label", 102, (90,)),
        _t("cifar100", "cifar100", "holdout", "label", 100, (90,)),
        _t("dtd", "dtd", "official", "label", 47),
        _t("oxford_flowers102", "oxford_flowers102", "official", "label", 102),
        _t("oxford_iiit_pet", "oxford_iiit_pet", "holdout", "label", 37, (80,)),
        _t("sun397", "sun397/tfds", "official", "label", 397),
        _t("svhn", "svhn_cropped", "holdout", "label", 10, (90,)),
        _t("patch_camelyon", "patch_camelyon", "official", "label", 2, group="specialized"),
        _t("eurosat", "eurosat/rgb", "three_way", "label", 10, (60, 20), group="specialized"),
        _t("resisc45", "resisc45", "three_way", "label", 45, (60, 20), group="specialized"),
        _t("diabetic_retinopathy", "diabetic_retinopathy_detection/btgraham-300", "official",
           "label", 5, group="specialized"),
        _t("clevr/count_all", "clevr", "holdout", "len(objects/size) - 3", 8, (90,),
           test_split="validation", group="structured"),
        _t("clevr/closest_object_distance", "clevr", "holdout", _CLEVR_DIST, 6, (90,),
           test_split="validation", group="structured"),
        _t("dmlab", "dmlab", "official", "label", 6, group="structured"),
        _t("dsprites/label_x_position", "dsprites", "three_way", "label_x_position // 2", 16,
           (80, 10), group="structured"),
        _t("dsprites/label_orientation", "dsprites", "three_way",
           "floor(label_orientation / 2.5)", 16, (80, 10), group="structured"),
        _t("kitti/closest_vehicle_distance", "kitti", "official", _KITTI_DIST, 4,
           group="structured"),
        _t("smallnorb/label_azimuth", "smallnorb", "test_halves", "label_azimuth", 18,
           group="structured"),
        _t("smallnorb/label_elevation", "smallnorb", "test_halves", "label_elevation", 9,
           group="structured"),
    )
}  # fmt: skip


def splits(task: str | Task, sizes: Mapping[str, int]) -> dict[str, str]:
    """The task's seven split specs given its source's split sizes (``{"train": n, ...}``),
    the strings task_adaptation builds for them."""
    t = task if isinstance(task, Task) else _task(task)
    n = sizes["train"]
    if t.rule == "official":
        return _specs("train", "validation", "train+validation", t.test_split,
                      "validation[:200]")  # fmt: skip
    if t.rule == "test_halves":
        return _specs("train", "test[:50%]", "train+test[:50%]", "test[50%:]", "test[:200]")
    if t.rule == "holdout":
        (percent,) = t.percent
        cut = percent * n // 100
        return _specs(f"train[:{cut}]", f"train[{cut}:]", "train", t.test_split,
                      f"train[{cut}:{cut + 200}]")  # fmt: skip
    train_percent, val_percent = t.percent
    cut, val = train_percent * n // 100, val_percent * n // 100
    return _specs(f"train[:{cut}]", f"train[{cut}:{cut + val}]", f"train[:{cut + val}]",
                  f"train[{cut + val}:]", f"train[{cut}:{cut + 200}]")  # fmt: skip


def label(task: str | Task, example: Mapping[str, Any]) -> int:
    """The class a task's example has, from the source's example as `DataSource` gives it
    (NumPy), computed as task_adaptation's preprocessing does: the label feature itself, or
    CLEVR's object count - 3 and its nearest object's depth bin, KITTI's nearest vehicle's
    depth bin (3 without vehicles), dSprites' position or orientation coarsened to 16 bins."""
    t = task if isinstance(task, Task) else _task(task)
    name = t.name
    if name == "clevr/count_all":
        return len(example["objects"]["size"]) - 3
    if name == "clevr/closest_object_distance":
        depth = float(np.min(example["objects"]["pixel_coords"][:, 2]))
        return _bin(depth, (0.0, 8.0, 8.5, 9.0, 9.5, 10.0, 100.0))
    if name == "kitti/closest_vehicle_distance":
        objects = example["objects"]
        vehicles = np.asarray(objects["type"]) < 3  # Car, Van, Truck
        depths = np.asarray(objects["location"], np.float32).reshape(-1, 3)[vehicles, 2]
        return _bin(float(np.min(depths, initial=1000.0)), (-100.0, 8.0, 20.0, 999.0))
    if name.startswith("dsprites/"):  # the attribute's classes over 16 (32 / 16, 40 / 16)
        feature = name.split("/")[1]
        factor = np.float32({"label_x_position": 32, "label_orientation": 40}[feature] / 16)
        return int(np.floor(np.float32(example[feature]) / factor))
    return int(example[t.label])


def _bin(value: float, thresholds: tuple[float, ...]) -> int:
    """The last index whose threshold is below `value` (task_adaptation's
    ``reduce_max(where(thresholds - value < 0))``)."""
    return max(i for i, threshold in enumerate(thresholds) if threshold - value < 0)


def _specs(train: str, val: str, trainval: str, test: str, val200: str) -> dict[str, str]:
    specs = (train, val, trainval, test, "train[:800]", val200, f"train[:800]+{val200}")
    return dict(zip(SPLIT_NAMES, specs, strict=True))


def task_splits(task: str) -> dict[str, str]:
    """`splits` of a task, the sizes taken from catalog's registered builder of its source
    (``catalog info NAME`` shows them; they are TFDS's)."""

    t = _task(task)
    spec = builder(t.dataset).spec
    return splits(t, {name: s.num_examples for name, s in spec.splits.items()})


def _task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        known = ", ".join(TASKS)
        raise DatasetNotFoundError(f"no VTAB-1k task {name!r}; the tasks are: {known}") from None
