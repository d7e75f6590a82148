"""`catalog info NAME[/CONFIG][:VERSION]`: everything known about a dataset, offline, without
preparing it; for a dataset with configs, one config (the default one unless named) and the
list of all of them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from catalog.api.builder import builder
from catalog.api.local import dataset_dir, local_info
from catalog.cli.common import EXIT_OK, add_command, add_dataset_args, add_image_max_side
from catalog.info.dataset_info import DatasetInfo
from catalog.info.text import Location, format_info
from catalog.present.strings import no_surrogates
from catalog.spec.model import BuilderSpec
from catalog.storage import paths
from catalog.storage.diskspace import disk_usage
from catalog.storage.remote import RemoteDir

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
    # A dataset directory (TFDS's or catalog's) given by path, or prepared from files by name.
    found = dataset_dir(args.name, paths.data_location(args.data_dir))
    local = local_info(found) if found is not None else None
    if local is not None:
        assert found is not None
        path = found
        location = Location(path, True, disk_usage(path))
        if args.json:
            document = {
                **local.to_json(),
                "configs": [],
                "default_config": None,
                "download_size": local.download_size,
                "prepared": True,
                "data_path": str(path),
                "prepared_size": location.num_bytes,
            }
            print(no_surrogates(json.dumps(document, indent=2, ensure_ascii=False)))
        else:
            sys.stdout.write(no_surrogates(format_info(local, location)))
        return EXIT_OK
    b = builder(args.name, data_dir=args.data_dir, image_max_side=args.image_max_side)
    prepared = b.is_prepared
    info = b.info
    usage = 0
    if prepared:  # a remote data dir: what its shards take, as dataset_info.json records
        if isinstance(b.data_path, RemoteDir):
            usage = sum(s.num_bytes for s in info.splits.values())
        else:
            usage = disk_usage(b.data_path)
    location = Location(b.data_path, prepared, usage)
    if args.json:
        print(
            no_surrogates(
                json.dumps(info_json(info, location, b.spec), indent=2, ensure_ascii=False)
            )
        )
    else:
        configs = b.spec.configs
        default = b.spec.default_config
        sys.stdout.write(
            no_surrogates(format_info(info, location, configs=configs, default_config=default))
        )
    return EXIT_OK
