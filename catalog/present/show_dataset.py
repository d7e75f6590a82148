"""`show_dataset`: what fits a dataset, as ``catalog show NAME`` draws or prints it: a grid of
its images or audio waveforms (`catalog.present.show`), else the first lines of its texts or
a table of its rows (`catalog.present.show_text`). The command is a thin layer over it: it
asks `about` first (to name the output file and check its format before anything is read),
then `show_handle`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.api.resolve import DatasetHandle, resolve_dataset
from catalog.present.show import Kind, show_examples, show_kind
from catalog.read.data_source import DataSource
from catalog.storage.data_dir import DataDir

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = ["About", "Shown", "about", "show_dataset", "show_handle"]


@dataclass(frozen=True)
class About:
    """What `show_handle` will show of a dataset, known before reading it: its `name` (for a
    file name: ``name`` or ``name-config``), `label` (``name[/config]``, for output
    lines), `kind` (``image``, ``audio``, ``text``, ``table``) and the `split` shown when none
    is asked for (``train``, else the first)."""

    name: str
    label: str
    kind: Kind
    split: str


@dataclass
class Shown:
    """What `show_dataset` made: for ``image`` and ``audio`` datasets a `picture` (a Pillow
    image: ``.save("grid.png")``), for ``text`` and ``table`` ones the `text`; `count`
    examples of split `split` of the dataset `about` names."""

    about: About
    split: str
    count: int
    picture: Image | None = None
    text: str | None = None


def about(handle: DatasetHandle, image_key: str | None = None) -> About:
    """What a dataset resolved already is shown as (its spec's features for a dataset a
    builder describes, prepared or not; else its prepared info: NotPreparedError)."""
    b = handle.builder
    if b is not None:
        name = f"{b.name}-{b.config}" if b.config else b.name
        label, features, tags = b.full_name, b.spec.features, b.spec.tags
        splits = list(b.spec.splits)
    else:
        info = handle.info  # not prepared: NotPreparedError
        name, features, tags = info.name, info.features, info.tags
        label, splits = info.full_name, list(info.splits)
    split = "train" if "train" in splits else splits[0]
    return About(name, label, show_kind(features, tags, image_key), split)


def show_handle(
    handle: DatasetHandle,
    *,
    split: str | None = None,
    num_examples: int = 16,
    seed: int | None = None,
    image_key: str | None = None,
    columns: int | None = None,
    lines: int = 3,
) -> Shown:
    """`show_dataset` of a dataset resolved already (`catalog.api.resolve.resolve_dataset`)."""
    from catalog.present.show_text import table, text_excerpts  # only for text and tables

    what = about(handle, image_key)
    split = split or what.split
    ds = handle.as_data_source(split)
    assert isinstance(ds, DataSource)  # one split spec: one source
    count = min(num_examples, len(ds))
    if what.kind == "image" or what.kind == "audio":
        picture = show_examples(
            ds, num_examples=num_examples, seed=seed, image_key=image_key, columns=columns
        )
        return Shown(what, split, count, picture=picture)
    if len(ds) == 0:
        raise ValueError(f"split {ds.split!r} has no examples")
    if what.kind == "table":
        text = table(ds, num_examples=num_examples, seed=seed)
    else:
        text = text_excerpts(ds, num_examples=num_examples, seed=seed, lines=lines)
    return Shown(what, split, count, text=text)


def show_dataset(
    name: str | os.PathLike[str],
    *,
    split: str | None = None,
    num_examples: int = 16,
    seed: int | None = None,
    image_key: str | None = None,
    columns: int | None = None,
    lines: int = 3,
    data_dir: DataDir | None = None,
    image_max_side: int | None = None,
) -> Shown:
    """What fits the prepared dataset `name`, as ``catalog show NAME`` makes it: a grid of
    `num_examples` images (or audio waveforms) each captioned "index: class name", or for a
    text or tabular dataset the first `lines` lines of each example's texts or a table of its
    rows. Without `seed` the first examples are shown; with one, examples drawn without
    replacement by ``numpy.random.default_rng(seed)``, in index order.

    Args:
        name: what `catalog.builder` takes, or the path or URL of a prepared dataset.
        split: a split or split spec (``"test[:1000]"``); default ``train``, else the first.
        num_examples: how many examples (at most `catalog.present.show.MAX_EXAMPLES`).
        seed: draw the examples at random with this seed.
        image_key: the Image feature to draw (default: the supervised input, else the first).
        columns: cells per row of the grid (default: a square).
        lines: text datasets: the first lines of each text.
        data_dir: the data dir (a path or a bucket URL); default as for `catalog.builder`.
        image_max_side: the prepared copy of that image size.

    Returns:
        A `Shown`: ``.picture`` (a Pillow image) or ``.text``.

    Raises:
        NotPreparedError: the dataset is not prepared.
        DatasetNotFoundError: no dataset of that name.
        ValueError: nothing to draw (no Image feature of that key, an empty split), or
            `num_examples` out of range.

    Examples:
        >>> shown = catalog.show_dataset("fashion_mnist", split="test")  # doctest: +SKIP
        >>> shown.picture.save("grid.png")                                # doctest: +SKIP
    """
    handle = resolve_dataset(name, data_dir=data_dir, image_max_side=image_max_side)
    return show_handle(
        handle, split=split, num_examples=num_examples, seed=seed, image_key=image_key,
        columns=columns, lines=lines,
    )  # fmt: skip
