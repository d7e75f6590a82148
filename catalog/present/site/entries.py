"""What the site shows of each dataset: one `Entry` per dataset, or per config of one.

An entry is read from the builder spec and the data dir alone, like ``catalog info``: the info
is the prepared copy's once prepared (its splits, sizes and shards), else the spec's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from catalog.api.builder import DatasetBuilder
from catalog.api.resolve import Resolver
from catalog.errors import CatalogError, DatasetNotFoundError
from catalog.features import ClassLabel, Feature, Sequence
from catalog.info.dataset_info import DatasetInfo
from catalog.prepare.reuse import declared_info
from catalog.spec.load import load_spec
from catalog.spec.model import SPEC_FILE
from catalog.spec.registry import list_datasets, resolve

__all__ = ["Entry", "class_labels", "entries", "slug"]


def slug(full_name: str) -> str:
    """The file name stem of a dataset's page and picture: ``mnist``, ``cmaterdb-telugu``.

    Names and configs are ``[a-z][a-z0-9_]*``, so the hyphen cannot clash with a name.
    """
    return full_name.replace("/", "-")


@dataclass(frozen=True)
class Entry:
    """One dataset (or config) as the site shows it."""

    builder: DatasetBuilder
    info: DatasetInfo
    #: Whether a prepared copy is in the data dir, and its bytes on disk.
    prepared: bool
    prepared_bytes: int
    #: Whether the prepared copy holds every example the spec declares (False for a copy
    #: prepared with --max-examples-per-split; True when not prepared).
    complete: bool
    #: Why the prepared copy's info could not be read ("" when it could).
    problem: str = ""
    #: What names this dataset on a command line when its name does not: the builder
    #: folder's absolute path (and ``/config``), for a dataset asked for by its folder.
    folder_request: str = ""

    @property
    def full_name(self) -> str:
        return self.builder.full_name

    @property
    def request(self) -> str:
        """What ``catalog prepare`` and ``catalog.data_source`` take to reach this dataset
        (config) from any directory: its name, or its folder's path."""
        return self.folder_request or self.full_name

    @property
    def slug(self) -> str:
        return slug(self.full_name)

    @property
    def page(self) -> str:
        """The page's path relative to the site's root."""
        return f"datasets/{self.slug}.html"

    @property
    def expected(self) -> dict[str, int]:
        """Example counts per split, as the spec declares them."""
        return {name: s.num_examples for name, s in self.builder.spec.splits.items()}


def _entry(b: DatasetBuilder, folder_request: str) -> Entry:
    try:
        opened = b.open()
    except CatalogError as exc:  # an unreadable dataset_info.json: show what the spec says
        return Entry(b, declared_info(b.spec), False, 0, True, str(exc), folder_request)
    if opened is None:
        return Entry(b, declared_info(b.spec), False, 0, True, "", folder_request)
    info = opened.info
    counts = {name: s.num_examples for name, s in info.splits.items()}
    expected = {name: s.num_examples for name, s in b.spec.splits.items()}
    usage = b.store.usage(opened)
    return Entry(b, info, True, usage, counts == expected, "", folder_request)


def _by_folder(name: str) -> bool:
    """Whether `name` asks for a builder folder by its path (with or without ``/config``
    and ``:version``), not for a registered dataset: `resolve` tries the folder first."""
    base = name.rpartition(":")[0] if ":" in name else name
    return any(
        part and (Path(part).expanduser() / SPEC_FILE).is_file()
        for part in (name, base, base.rpartition("/")[0])
    )


def _folder_request(b: DatasetBuilder) -> str:
    """The builder folder's absolute path (symlinks kept as given), with ``/config`` for a
    config."""
    assert b.spec.path is not None
    folder = Path(b.spec.path).expanduser().absolute().as_posix()
    return f"{folder}/{b.spec.config}" if b.spec.config is not None else folder


def entries(
    names: Iterable[str] = (), *, data_dir: str | os.PathLike[str] | None = None
) -> list[Entry]:
    """Every dataset named (all registered ones when none is), each config of one with configs.

    A name may be ``name``, ``name/config`` (that config alone), ``name:version`` or a builder
    folder. Entries come sorted by full name, each once. Raises CatalogError for an unknown
    name or a broken builder.
    """
    found: dict[str, Entry] = {}
    resolver = Resolver(data_dir)  # the data dir's store made once, for every entry
    for name in list(names) or list_datasets():
        first = resolver.resolve(name).builder  # checks the name and the version
        if first is None:
            raise DatasetNotFoundError(f"{name} is a prepared dataset no builder describes")
        spec = first.spec
        if not spec.configs or spec.path is None or resolve(name).config is not None:
            configs = [spec.config]
        else:
            configs = list(spec.configs)
        by_folder = _by_folder(str(name))
        for config in configs:
            one = first
            if config != spec.config:
                assert spec.path is not None
                one = DatasetBuilder(load_spec(spec.path, config), data_dir=first.store)
            if one.full_name not in found:
                found[one.full_name] = _entry(one, _folder_request(one) if by_folder else "")
    return [found[key] for key in sorted(found)]


def class_labels(
    features: Iterable[tuple[str, Feature]], prefix: str = ""
) -> Iterator[tuple[str, ClassLabel]]:
    """(feature path, ClassLabel) for every ClassLabel in the tree, depth first."""
    for name, feature in features:
        path = f"{prefix}{name}"
        element = feature
        while isinstance(element, Sequence):
            element = element.feature
        if isinstance(element, ClassLabel):
            yield path, element
        yield from class_labels(element.children().items(), f"{path}/")
