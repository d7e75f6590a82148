"""`catalog site -o DIR [NAME...]`: a static web site of every dataset (see
catalog.present.site)."""

from __future__ import annotations

import argparse
from pathlib import Path

from catalog.cli.common import EXIT_FAILED, EXIT_OK, Argument, Arguments, error
from catalog.errors import CatalogError
from catalog.storage import paths

__all__ = ["ARGUMENTS", "run"]

ARGUMENTS = Arguments(
    description="Write a static web site of the catalog into DIR: an index of every dataset "
    "and config (tags, version, splits, sizes, download size, prepared here or not) with a "
    "search box and a tag filter, and a page per dataset and config (description, features, "
    "class names, splits, citation, how to use it, and a grid of examples for a prepared "
    "dataset with images). Plain HTML and CSS with a little JavaScript, relative links "
    "only: serve DIR from anywhere or open DIR/index.html from disk, offline.\n\n"
    "DIR must be new, empty or a site written before, which is replaced as a whole. The "
    "same datasets and data dir give the same bytes.",
    example="catalog site -o site --data-dir ~/datasets && xdg-open site/index.html",
    arguments=(
        Argument(
            "-o", "--output", type=Path, required=True, metavar="DIR", help="the folder to write"
        ),
        Argument(
            "names",
            nargs="*",
            metavar="NAME",
            help="datasets to include (NAME, NAME/CONFIG or a builder folder; default: every "
            "registered dataset)",
        ),
        Argument(
            "--data-dir",
            help=f"where prepared data is, for the example grids (${paths.DATA_DIR_ENV})",
        ),
        Argument(
            "--docs",
            metavar="URL",
            help="link the index back to catalog's documentation at URL (or a path relative to "
            "DIR)",
        ),
    ),
)


def run(args: argparse.Namespace) -> int:
    from catalog.present.site import build_site  # the page renderers: only this command needs them
    from catalog.present.strings import no_surrogates

    try:
        report = build_site(args.output, args.names, data_dir=args.data_dir, docs=args.docs)
    except CatalogError:  # an unknown dataset, an output folder of something else
        raise
    except OSError as exc:  # the output's parent cannot be written, the disk is full
        error(f"cannot write {args.output}: {exc.strerror or exc}")
        return EXIT_FAILED
    for name, problem in sorted(report.problems.items()):
        error(f"{name}: {problem}")
    count = len(report.entries)
    # A path given in bytes that are not UTF-8 holds surrogates: printable only replaced.
    print(
        no_surrogates(
            f"wrote {args.output}: {count} dataset page{'s' * (count != 1)}, "
            f"{report.grids} example grid{'s' * (report.grids != 1)}; "
            f"open {args.output / 'index.html'}"
        )
    )
    return EXIT_FAILED if report.problems else EXIT_OK
