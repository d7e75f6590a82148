"""`catalog croissant NAME`: the dataset's Croissant 1.0 JSON-LD on stdout."""

from __future__ import annotations

import argparse
import json

from catalog.api.exchange import croissant_metadata
from catalog.cli.common import DATASET, EXIT_OK, Arguments
from catalog.present.strings import no_surrogates

__all__ = ["ARGUMENTS", "run"]

ARGUMENTS = Arguments(
    description="Print the dataset's Croissant 1.0 metadata (JSON-LD, "
    "https://mlcommons.org/croissant/): name, description, license, citation, version, "
    "the source files with their sha256, and one record set per split with a field per "
    "feature and its data type (class names as enumerations). The fields read the Parquet "
    "files 'catalog export NAME --format parquet' writes: save this beside them and a "
    "Croissant reader (mlcroissant) loads the examples. Offline; NAME need not be prepared "
    "(its spec's counts are used), or is the path of a prepared dataset directory.",
    example="catalog croissant mnist > out/croissant.json  # beside: catalog export mnist "
    "--format parquet -o out",
    arguments=DATASET,
)


def run(args: argparse.Namespace) -> int:
    metadata = croissant_metadata(args.name, data_dir=args.data_dir)
    print(no_surrogates(json.dumps(metadata, indent=2, ensure_ascii=False)))
    return EXIT_OK
