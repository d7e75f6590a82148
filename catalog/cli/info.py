"""`catalog info NAME[/CONFIG][:VERSION]`: everything known about a dataset, offline, without
preparing it; for a dataset with configs, one config (the default one unless named) and the
list of all of them.

A registered dataset (or config) that is not prepared is shown from the registry's index
(`catalog.spec.index.page`), the same text without loading its spec: no YAML parse of its
builder.yaml, no features, no NumPy. Everything else (prepared, ``--json``, another image size,
a builder folder's path, a dataset prepared from files) loads it (`_full`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.cli.common import EXIT_OK, add_command, add_dataset_args, add_image_max_side
from catalog.errors import DatasetNotFoundError
from catalog.info.page import Location, render
from catalog.present.strings import no_surrogates
from catalog.spec import index
from catalog.spec.registry import Request, resolve, version_matches
from catalog.storage.environment import DATA_DIR_ENV
from catalog.storage.remote import is_url

if TYPE_CHECKING:
    from catalog.info.dataset_info import DatasetInfo

__all__ = ["info_json", "register"]


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        commands,
        "info",
        description="Show what is known about a dataset: description, homepage, license, "
        "features, splits, download size, citation, and whether it is prepared (where, how "
        "big). Reads the builder spec and the data dir only: no network, no preparation.",
        example="catalog info cmaterdb/telugu --json",
    )
    add_dataset_args(parser, many=False)
    add_image_max_side(parser, "show")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(run=run)


def info_json(
    info: DatasetInfo,
    location: Location,
    configs: Mapping[str, str] | None = None,
    default_config: str | None = None,
) -> dict[str, Any]:
    """The JSON document `catalog info --json` prints: dataset_info.json's keys and more.

    Added to `DatasetInfo.to_json`: ``configs`` (every config's name, empty for a dataset
    without configs), ``default_config`` (null without configs), ``download_size`` (bytes),
    ``prepared``, ``data_path`` and ``prepared_size`` (bytes on disk, null when not prepared).
    """
    return {
        **info.to_json(),
        "configs": list(configs or {}),
        "default_config": default_config,
        "download_size": info.download_size,
        "prepared": location.prepared,
        "data_path": str(location.path),
        "prepared_size": location.num_bytes if location.prepared else None,
    }


def run(args: argparse.Namespace) -> int:
    text = (
        None
        if args.json or args.image_max_side is not None
        else declared_text(args.name, args.data_dir)
    )
    if text is None:
        text = _full(args)
    sys.stdout.write(text)
    return EXIT_OK


def declared_text(name: str, data_dir: str | None = None) -> str | None:
    """`catalog info NAME` of a registered dataset (or config) not prepared in `data_dir`
    (default $CATALOG_DATA_DIR, else the user data dir), from the registry's index; None for
    anything else (a path, a URL, a name not registered, a version it does not have, a data
    dir in a bucket, or anything at the target: those take the full path, which also says
    what is wrong)."""
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
    if os.path.lexists(target):  # prepared, or being prepared: the full path tells which
        return None
    return no_surrogates(render(declared.page, Location(target, prepared=False)))


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


def _local_data_dir(data_dir: str | None) -> Path | None:
    """The data dir as the local store takes it, or None for one that is not a plain local
    directory (a URL, a file, empty): the full path opens (or refuses) those."""
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


def _full(args: argparse.Namespace) -> str:
    """`catalog info` of any dataset, from its loaded spec or its prepared copy."""
    from catalog.api.resolve import resolve_dataset  # the builders, the readers: NumPy
    from catalog.info.text import format_info
    from catalog.spec.declared import declared_info

    handle = resolve_dataset(args.name, data_dir=args.data_dir, image_max_side=args.image_max_side)
    b = handle.builder or handle.declared()  # tfds:NAME not prepared: what TFDS declares
    opened = handle.open()
    if opened is None and b is None:
        raise handle.not_prepared_error(args.name, args.data_dir)
    info = opened.info if opened is not None else declared_info(b.spec)  # type: ignore[union-attr]
    usage = 0 if opened is None else handle.store.usage(opened)
    location = Location(handle.target, opened is not None, usage)
    configs = b.spec.configs if b is not None else {}
    default = b.spec.default_config if b is not None else None
    if args.json:
        document = info_json(info, location, configs, default)
        return no_surrogates(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"
    text = format_info(info, location, configs=configs, default_config=default)
    return no_surrogates(text)
