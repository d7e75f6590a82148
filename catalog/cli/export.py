"""`catalog export NAME --format tfrecord|tfds|parquet -o DIR`: a dataset for TensorFlow users,
or as Parquet files for pandas, Polars, DuckDB and Hugging Face datasets."""

from __future__ import annotations

import argparse

from catalog.api.exchange import export_handle
from catalog.api.resolve import resolve_dataset
from catalog.cli.common import DATASET, EXIT_OK, EXIT_USAGE, Argument, Arguments, error

__all__ = ["ARGUMENTS", "run"]

ARGUMENTS = Arguments(
    description="Write a prepared dataset for TensorFlow users. --format tfrecord: one "
    "TFRecord file of tf.train.Examples per split (<name>-<split>.tfrecord-00000-of-00001; "
    "keys are feature paths, images PNG/JPEG). --format tfds: a complete TFDS directory "
    "<DIR>/<name>/<version>/ that tfds.builder_from_directory loads. --format parquet: "
    "one Parquet file per split (<DIR>/<name>-<split>.parquet) in Hugging Face datasets' "
    "layout (images as {bytes, path}, class names in the schema metadata; pip install "
    "'catalog[parquet]'). NAME is a prepared "
    "dataset or the path of a dataset directory (catalog's or TFDS's).",
    example="catalog export fashion_mnist --format tfds -o ~/tensorflow_datasets",
    arguments=(
        *DATASET,
        Argument("--format", choices=("tfrecord", "tfds", "parquet"), required=True),
        Argument("-o", "--output", required=True, metavar="DIR", help="where to write"),
        Argument("--overwrite", action="store_true", help="replace an existing export"),
    ),
)


def run(args: argparse.Namespace) -> int:
    handle = resolve_dataset(args.name, data_dir=args.data_dir)
    opened = handle.open()  # the generation, resolved once (held while it is read)
    if opened is None:
        error(str(handle.not_prepared_error(args.name, args.data_dir)))
        return EXIT_USAGE
    info = opened.info
    written = export_handle(handle, args.output, format=args.format, overwrite=args.overwrite)
    counts = ", ".join(f"{n} {s.num_examples:,}" for n, s in info.splits.items())
    print(f"exported {info.full_name} {info.version} as {args.format} to {written} ({counts})")
    return EXIT_OK
