"""`catalog list`: every registered dataset with its version, splits and download size.

Reads the builder specs only: no network, no data dir.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from catalog.cli.common import EXIT_FAILED, EXIT_OK, add_command, error
from catalog.errors import CatalogError
from catalog.registry import builder_dir, list_datasets
from catalog.spec import BuilderSpec, load_spec
from catalog.units import format_size

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        commands,
        "list",
        help="list the datasets in the catalog",
        description="List every registered dataset with its version, splits (example counts) "
        "and download size, from the builder specs alone: no network, nothing prepared.",
        example="catalog list --json",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON list")
    parser.set_defaults(run=run)


def _entry(spec: BuilderSpec) -> dict[str, Any]:
    """One dataset in `catalog list --json`."""
    return {
        "name": spec.name,
        "version": spec.version,
        "configs": [],
        "splits": {name: s.num_examples for name, s in spec.splits.items()},
        "download_size": sum(d.size or 0 for d in spec.downloads.values()),
        "num_downloads": len(spec.downloads),
    }


def run(args: argparse.Namespace) -> int:
    entries, failed = [], False
    for name in list_datasets():
        try:
            entries.append(_entry(load_spec(builder_dir(name))))
        except CatalogError as exc:  # one broken builder must not hide the others
            error(f"{name}: {exc}")
            failed = True
    if args.json:
        print(json.dumps(entries, indent=2))
        return EXIT_FAILED if failed else EXIT_OK
    rows = [
        (
            e["name"],
            e["version"],
            ", ".join(f"{split} {count}" for split, count in e["splits"].items()),
            f"{format_size(e['download_size'])} to download",
        )
        for e in entries
    ]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return EXIT_FAILED if failed else EXIT_OK
