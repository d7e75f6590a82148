"""`catalog info NAME[/CONFIG][:VERSION]`: everything known about a dataset, offline, without
preparing it; for a dataset with configs, one config (the default one unless named) and the
list of all of them.

A registered dataset (or config) that is not prepared is shown from the registry's index, as
the resolver's quick answer gives it (`catalog.api.declared.resolve_declared`), the same text
without loading its spec: no YAML parse of its builder.yaml, no features, no NumPy. Everything
else (prepared, ``--json``, another image size, a builder folder's path, a dataset prepared
from files) loads it (`_full`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from catalog.api.declared import resolve_declared
from catalog.cli.common import DATASET, EXIT_OK, JSON, Arguments, image_max_side
from catalog.info.page import Location, render
from catalog.present.strings import no_surrogates

if TYPE_CHECKING:
    from catalog.info.dataset_info import DatasetInfo

__all__ = ["ARGUMENTS", "info_json", "run"]

ARGUMENTS = Arguments(
    description="Show what is known about a dataset: description, homepage, license, "
    "features, splits, download size, citation, and whether it is prepared (where, how "
    "big). Reads the builder spec and the data dir only: no network, no preparation.",
    example="catalog info cmaterdb/telugu --json",
    arguments=(
        *DATASET,
        image_max_side("show"),
        JSON,
    ),
)


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
    """`catalog info NAME` of a registered dataset (or config) not prepared, from the
    registry's index (`catalog.api.declared`, the resolver's quick answer); None for anything
    else, which takes the full path (`_full`)."""
    declared = resolve_declared(name, data_dir)
    if declared is None:
        return None
    return no_surrogates(render(declared.page.page, Location(declared.target, prepared=False)))


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
