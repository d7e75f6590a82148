"""The resolver's quick answer (`catalog.api.resolve`): a registered ``name[/config][:version]``
that is not prepared in a local data dir, answered from the registry's index
(`catalog.spec.index`) without loading its spec, importing NumPy or making a store: what
``catalog info NAME`` shows of a dataset before it is downloaded, at start-up speed. Anything
else (a path, a URL, a name not registered, a version it does not have, a data dir in a
bucket, or anything at the target) is `resolve_dataset`'s (None here)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from catalog.errors import DatasetNotFoundError
from catalog.spec import index
from catalog.spec.registry import Request, resolve, version_matches
from catalog.storage.environment import DATA_DIR_ENV
from catalog.storage.remote import is_url

__all__ = ["Declared", "resolve_declared"]


@dataclass(frozen=True)
class Declared:
    """A registered dataset not prepared: its `page` in the index (`catalog.spec.index`) and
    the `target` it would be prepared at."""

    page: index.Declared
    target: Path


def resolve_declared(name: str, data_dir: str | os.PathLike[str] | None = None) -> Declared | None:
    """`name` as a registered dataset (or config) not prepared in `data_dir` (default
    $CATALOG_DATA_DIR, else the user data dir), from the registry's index; None for anything
    else (the full resolver answers those, and says what is wrong)."""
    request = _registered(name)
    if request is None:
        return None
    declared = index.page(request.folder, request.config)
    if declared is None:
        return None
    if request.version is not None and not version_matches(request.version, declared.version):
        return None
    root = _local_data_dir(data_dir)
    if root is None:
        return None
    parts = (p for p in declared.full_name.split("/") if p)
    target = root.joinpath(*parts, declared.version_dir)
    if os.path.lexists(target):  # prepared, or being prepared: the full resolver tells which
        return None
    return Declared(declared, target)


def _registered(name: str) -> Request | None:
    """`catalog.spec.registry.resolve` of a registered ``name[/config]`` by the index's copy
    of the registry (no YAML parse); a version asked for, by `resolve` itself. None for a
    path, a URL or a name not registered."""
    if is_url(name) or os.path.exists(name):  # noqa: PTH110 (a path or URL: not a name)
        return None
    if ":" in name:
        try:
            return resolve(name)
        except DatasetNotFoundError:
            return None
    head, _, config = name.rpartition("/")
    if head and os.path.exists(head):  # noqa: PTH110 (a builder folder's path, and a config)
        return None
    known = index.registered()
    if "/" not in name and name in known:
        return Request(Path(known[name]))
    if head and "/" not in head and head in known and config:
        return Request(Path(known[head]), config)
    return None


def _local_data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The data dir as the local store takes it, or None for one that is not a plain local
    directory (a URL, a file, empty): the full resolver opens (or refuses) those."""
    given = data_dir if data_dir is not None else os.environ.get(DATA_DIR_ENV) or None
    if given is None:
        import platformdirs

        return Path(platformdirs.user_data_dir("catalog", appauthor=False))
    text = os.fspath(given)
    if is_url(text) or not text.strip():
        return None
    root = Path(text).expanduser()
    existing = next((p for p in (root, *root.parents) if p.exists()), None)
    return root if existing is not None and existing.is_dir() else None
