"""`catalog list`: every registered dataset with its version, splits and download size.

A dataset with configs gets one line per config (``cmaterdb/telugu``), the default one marked.
``--tag`` keeps datasets with every tag given, and a search word keeps those whose name,
description or tags contain it (case-insensitive). Reads the builder specs only (through the
registry's index, `catalog.spec.index`: a spec is loaded again only when its files changed):
no network, no data dir. ``--prepared`` lists what is prepared in a data dir instead (local,
or a bucket: the datasets whose pointer object is there, `catalog.storage.bucket_publish`).
``--tfds`` lists every dataset TensorFlow Datasets registers (``tfds:NAME``) with its status
(`catalog.interop.tfds.builder_index`, cached in the user's cache dir).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from catalog._util.units import format_size
from catalog.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Argument, Arguments, error
from catalog.errors import CatalogError
from catalog.spec.index import (
    CONFIG_DESCRIPTION,
    DEFAULT,
    DOWNLOAD_SIZE,
    FULL_NAME,
    MANUAL_DOWNLOADS,
    MANUAL_SIZE,
    SPLITS,
    VERSION,
    Summary,
    summaries,
)
from catalog.storage.environment import DATA_DIR_ENV

__all__ = ["ARGUMENTS", "run"]

ARGUMENTS = Arguments(
    description="List every registered dataset (each config of one with configs) with its "
    "version, splits (example counts) and download size, from the builder specs alone: no "
    "network, nothing prepared.",
    example="catalog list --tag image-classification mnist",
    arguments=(
        Argument(
            "search",
            nargs="?",
            default=None,
            help="keep datasets whose name, description or tags contain this word",
        ),
        Argument(
            "--tag",
            action="append",
            default=[],
            metavar="TAG",
            help="keep datasets with this tag (image, image-classification, object-detection, "
            "text, audio, tabular, ...); repeat to require several",
        ),
        Argument(
            "--prepared",
            action="store_true",
            help="list the datasets prepared in the data dir instead (a local dir or a bucket: "
            "s3://bucket/prefix, gs://...), with their sizes",
        ),
        Argument("--data-dir", help=f"with --prepared: where prepared data is (${DATA_DIR_ENV})"),
        Argument(
            "--tfds",
            action="store_true",
            help="list every dataset TensorFlow Datasets registers (use as tfds:NAME) with whether "
            "catalog prepares it without TensorFlow: prepares (tested) / untested / needs pip "
            "install X / not yet: why (needs catalog[tfds]; the first listing takes a while, then "
            "it is cached)",
        ),
        Argument("--json", action="store_true", help="print one JSON list"),
    ),
)


def _row(row: list[Any]) -> tuple[str, ...]:
    return (
        row[FULL_NAME],
        row[VERSION],
        ", ".join(f"{split} {count}" for split, count in row[SPLITS]),
        _download(row[DOWNLOAD_SIZE], row[MANUAL_SIZE], row[MANUAL_DOWNLOADS]),
        "(default config)" if row[DEFAULT] else "",
    )


def _download(size: int, manual: int, placed: int) -> str:
    """The size of a dataset's files, and whether catalog downloads them or the user does, by
    hand (a login, an agreement: `catalog.spec.model.DownloadSpec.by_hand`; `catalog info`
    tells how many bytes of which), and how many files with no published checksum the user
    places by hand (`catalog.spec.model.DownloadSpec.manual`, of unknown size)."""
    if not size and placed:
        return f"{placed} file{'s' if placed != 1 else ''} placed by hand"
    text = f"{format_size(size)}, manual download" if manual else f"{format_size(size)} to download"
    return text + (f" + {placed} by hand" if placed else "")


def matches(summary: Summary, row: list[Any], tags: list[str], search: str | None) -> bool:
    """Whether a dataset (or config) `row` of `summary` has every tag in `tags` and, with
    `search`, contains it in its name, config, description or tags (case-insensitive)."""
    if not set(tags) <= set(summary["entry"]["tags"]):
        return False
    if not search:
        return True
    parts = [row[FULL_NAME], summary["description"], row[CONFIG_DESCRIPTION]]
    return search.lower() in " ".join([*parts, *summary["entry"]["tags"]]).lower()


def _run_prepared(args: argparse.Namespace) -> int:
    from catalog.api.data_dir import resolve_data_dir
    from catalog.api.manage import list_prepared  # a plain listing must not pay for NumPy

    store = resolve_data_dir(args.data_dir)  # a file, an unknown scheme: one error
    entries = [vars(d) for d in list_prepared(store)]
    if args.json:
        print(json.dumps(entries, indent=2))
        return EXIT_OK
    if not entries:
        print(f"nothing is prepared in {store.root}", file=sys.stderr)
    for e in entries:
        counts = ", ".join(f"{n} {c}" for n, c in e["splits"].items())
        print(f"{e['name']}  {e['version']}  {counts}  {format_size(e['num_bytes'])}  {e['path']}")
    return EXIT_OK


def _run_tfds(args: argparse.Namespace) -> int:
    """``--tfds``: TFDS's datasets and their status (`catalog.interop.tfds.builder_index`)."""
    from catalog.interop.tfds.builder_index import tfds_index

    entries = [
        e
        for e in tfds_index()
        if not args.search or args.search.lower() in f"{e.name} {e.status}".lower()
    ]
    if args.json:
        print(json.dumps([vars(e) for e in entries], indent=2))
        return EXIT_OK
    rows = [
        (f"tfds:{e.name}", e.version, f"{e.configs} configs" if e.configs else "", e.status)
        for e in entries
    ]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    if args.tfds and (args.prepared or args.tag or args.data_dir is not None):
        error("--tfds lists TFDS's datasets: it takes a search word and --json only")
        return EXIT_USAGE
    if args.tfds:
        return _run_tfds(args)
    if args.prepared:
        return _run_prepared(args)
    if args.data_dir is not None:
        error("--data-dir goes with --prepared (the catalog's list reads no data dir)")
        return EXIT_USAGE
    entries, rows, failed = [], [], False
    known_tags: set[str] = set()
    for name, summary in summaries():
        if isinstance(summary, CatalogError):  # one broken builder must not hide the others
            error(f"{name}: {summary}")
            failed = True
            continue
        known_tags.update(summary["entry"]["tags"])
        kept = [row for row in summary["rows"] if matches(summary, row, args.tag, args.search)]
        if not kept:
            continue
        entries.append(summary["entry"])
        rows += [_row(row) for row in kept]
    unknown = sorted(set(args.tag) - known_tags)
    if unknown:  # a typo, not an empty answer: say so, with the tags there are
        tags = ", ".join(repr(t) for t in unknown)
        error(
            f"no dataset has the tag{'s' if len(unknown) > 1 else ''} {tags}; the tags are "
            f"{', '.join(sorted(known_tags))}"
        )
        return EXIT_USAGE
    if args.json:
        print(json.dumps(entries, indent=2))
        return EXIT_FAILED if failed else EXIT_OK
    if not rows and not failed:
        what = [f"tag {t!r}" for t in args.tag] + ([f"{args.search!r}"] if args.search else [])
        print(f"no dataset matches {' and '.join(what)}", file=sys.stderr)
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(5)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return EXIT_FAILED if failed else EXIT_OK
