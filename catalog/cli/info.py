"""`catalog info NAME[/CONFIG][:VERSION]`: everything known about a dataset, offline, without
preparing it; for a dataset with configs, one config (the default one unless named) and the
list of all of them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from catalog.api.resolve import resolve_dataset
from catalog.cli.common import EXIT_OK, add_command, add_dataset_args, add_image_max_side
from catalog.info.dataset_info import DatasetInfo
from catalog.info.text import Location, format_info
from catalog.prepare.reuse import declared_info
from catalog.present.strings import no_surrogates
from catalog.spec.model import BuilderSpec

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


def info_json(info: DatasetInfo, location: Location, spec: BuilderSpec) -> dict[str, Any]:
    """The JSON document `catalog info --json` prints: dataset_info.json's keys and more.

    Added to `DatasetInfo.to_json`: ``configs`` (every config's name, empty for a dataset
    without configs), ``default_config`` (null without configs), ``download_size`` (bytes),
    ``prepared``, ``data_path`` and ``prepared_size`` (bytes on disk, null when not prepared).
    """
    return {
        **info.to_json(),
        "configs": list(spec.configs),
        "default_config": spec.default_config,
        "download_size": info.download_size,
        "prepared": location.prepared,
        "data_path": str(location.path),
        "prepared_size": location.num_bytes if location.prepared else None,
    }


def run(args: argparse.Namespace) -> int:
    handle = resolve_dataset(args.name, data_dir=args.data_dir, image_max_side=args.image_max_side)
    b = handle.builder
    opened = handle.open()
    if opened is None and b is None:
        raise handle.not_prepared_error(args.name, args.data_dir)
    info = opened.info if opened is not None else declared_info(b.spec)  # type: ignore[union-attr]
    usage = 0 if opened is None else handle.store.usage(opened)
    location = Location(handle.target, opened is not None, usage)
    configs = b.spec.configs if b is not None else {}
    default = b.spec.default_config if b is not None else None
    if args.json:
        document = {
            **info.to_json(),
            "configs": list(configs),
            "default_config": default,
            "download_size": info.download_size,
            "prepared": location.prepared,
            "data_path": str(location.path),
            "prepared_size": location.num_bytes if location.prepared else None,
        }
        print(no_surrogates(json.dumps(document, indent=2, ensure_ascii=False)))
    else:
        text = format_info(info, location, configs=configs, default_config=default)
        sys.stdout.write(no_surrogates(text))
    return EXIT_OK
