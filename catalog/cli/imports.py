"""`catalog import PATH`: a TFDS-prepared directory (or a builder folder reading TFRecord
files) into a catalog dataset in the data dir."""

from __future__ import annotations

import argparse
import json

from catalog._util.units import format_size
from catalog.cli.common import EXIT_OK, EXIT_USAGE, JSON, Argument, Arguments, error
from catalog.errors import DatasetNotFoundError
from catalog.storage import paths

__all__ = ["ARGUMENTS", "run"]

ARGUMENTS = Arguments(
    description="Convert a directory TensorFlow Datasets prepared (dataset_info.json, "
    "features.json, tfrecord or array_record shards) into a catalog dataset in the data "
    "dir: ArrayRecord shards of catalog records, for fast random access. The TFDS directory "
    "is only read; it may be in a bucket or on a web server (s3://, gs://, https://: TFDS "
    "serves some datasets only prepared, e.g. gs://tfds-data/datasets/NAME/VERSION), "
    "fetched into the download dir first. A builder folder (builder.yaml whose splits use "
    "the tfrecord format) is prepared like 'catalog prepare PATH'. Open the result with "
    "catalog.data_source(PATH printed) or by its name (with the same --data-dir): every "
    "command finds it there.",
    example="catalog import ~/tensorflow_datasets/mnist/3.0.1 --data-dir ~/datasets",
    arguments=(
        Argument(
            "path", metavar="PATH", help="a TFDS-prepared directory (path or URL) or builder folder"
        ),
        Argument("--data-dir", help=f"where to put the dataset (${paths.DATA_DIR_ENV})"),
        Argument("--name", help="the dataset's name in the data dir (default: TFDS's)"),
        Argument("--overwrite", action="store_true", help="replace an existing copy"),
        JSON,
    ),
)


def run(args: argparse.Namespace) -> int:
    from catalog.api.exchange import import_dataset  # the readers and the writer: NumPy

    try:
        info, target = import_dataset(
            args.path, data_dir=args.data_dir, name=args.name, overwrite=args.overwrite
        )
    except DatasetNotFoundError as exc:  # neither a TFDS directory nor a builder folder
        error(str(exc))
        return EXIT_USAGE
    counts = {name: s.num_examples for name, s in info.splits.items()}
    size = sum(s.num_bytes for s in info.splits.values())
    if args.json:
        print(json.dumps({"name": info.full_name, "version": info.version, "path": str(target),
                          "splits": counts, "num_bytes": size}))  # fmt: skip
    else:
        splits = ", ".join(f"{name} {count:,}" for name, count in counts.items())
        what = f"{info.full_name} {info.version}"
        print(f"imported {what} into {target} ({splits}; {format_size(size)})")
    return EXIT_OK
