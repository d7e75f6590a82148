"""`catalog list`: every registered dataset with its version and splits, from the specs."""

from __future__ import annotations

import argparse

from catalog.cli.common import EXIT_OK, add_command
from catalog.registry import builder_dir, list_datasets
from catalog.spec import load_spec

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        commands,
        "list",
        help="list the datasets in the catalog",
        description="List every registered dataset with its version and splits.",
        example="catalog list",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    for name in list_datasets():
        spec = load_spec(builder_dir(name))
        splits = ", ".join(f"{s.name} {s.num_examples}" for s in spec.splits.values())
        print(f"{name:<20} {spec.version:<8} {splits}")
    return EXIT_OK
