"""`catalog verify NAME...`: re-hash every shard against dataset_info.json, count its records."""

from __future__ import annotations

import argparse
import json
from typing import Any

from catalog._util.units import format_size
from catalog.api.manage import Verification, verify_handle
from catalog.api.resolve import Resolver
from catalog.cli.common import (
    DATASETS,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    JSON,
    Argument,
    Arguments,
    error,
    image_max_side,
)

__all__ = ["ARGUMENTS", "run"]

ARGUMENTS = Arguments(
    description="Check prepared datasets: every shard dataset_info.json lists must be "
    "there, of the recorded size and sha256, and hold the recorded number of records "
    "(opened with array_record's reader), and the unverified manual files it was prepared "
    "from that are still in the manual dir must hold the bytes recorded then. Prints one "
    "line per problem, naming the shard, "
    "and one summary line per dataset. Exit status: 0 intact, 1 a problem found, 2 usage "
    'error (also: not prepared). --json prints {"ok": bool, "datasets": [{"name", '
    '"config", "version", "path", "ok", "shards", "num_examples", "num_bytes", "seconds", '
    '"problems": [{"kind": "info"|"missing"|"size"|"sha256"|"records"|"source", '
    '"file", '
    '"message"}], "stale_work_dirs": [{"path", "num_bytes"}]}]}. Work dirs left by a '
    "killed prepare are listed (they are not a problem of the prepared copy: the next "
    "prepare resumes or removes them).",
    example="catalog verify fashion_mnist mnist",
    arguments=(
        *DATASETS,
        image_max_side("verify"),
        Argument(
            "--manual-dir", help="where manual files are placed (default <download dir>/manual)"
        ),
        JSON,
    ),
)


def _verify_one(checked: Verification, args: argparse.Namespace, name: str) -> dict[str, Any]:
    label = f"{checked.name}/{checked.config}" if checked.config else checked.name
    label = f"{label} {checked.version}"
    shards = checked.shards
    entry: dict[str, Any] = {
        "name": checked.name,
        "config": checked.config,
        "version": checked.version,
        "path": checked.path,
        "ok": checked.ok,
        "shards": shards,
        "num_examples": checked.num_examples,
        "num_bytes": checked.num_bytes,
        "seconds": round(checked.seconds, 3),
        "problems": [vars(p) for p in checked.problems],
        "stale_work_dirs": [{"path": w.path, "num_bytes": w.size} for w in checked.stale_work_dirs],
    }
    if args.json:
        return entry
    for stale in entry["stale_work_dirs"]:
        print(
            f"{label}: work dir of a killed prepare: {stale['path']} "
            f"({format_size(stale['num_bytes'])}); the next prepare resumes or removes it"
        )
    for problem in checked.problems:
        print(f"{label}: {problem}")
    if checked.problems:
        again = f"catalog prepare {name} --overwrite" + (
            f" --data-dir {args.data_dir}" if args.data_dir else ""
        )
        count = f"{len(checked.problems)} problem{'s' if len(checked.problems) != 1 else ''}"
        where = f"{shards} shard{'s' if shards != 1 else ''}"
        print(f"{label}: {count} in {where}; prepare it again: {again}")
    else:
        print(
            f"{label}: ok: {shards} shard{'s' if shards != 1 else ''}, "
            f"{checked.num_examples} examples, {format_size(checked.num_bytes)} "
            f"verified in {checked.seconds:.1f} s -> {checked.path}"
        )
    return entry


def run(args: argparse.Namespace) -> int:
    handles = []
    resolver = Resolver(args.data_dir, args.image_max_side)
    for name in args.names:  # every dataset must be known and prepared before any is hashed
        handle = resolver.resolve(name)
        if handle.open() is None:
            error(str(handle.not_prepared_error(name, args.data_dir)))
            return EXIT_USAGE
        handles.append(handle)
    entries = [
        _verify_one(verify_handle(handle, args.manual_dir, args.data_dir), args, handle.text)
        for handle in handles
    ]
    ok = all(e["ok"] for e in entries)
    if args.json:
        print(json.dumps({"ok": ok, "datasets": entries}, indent=2))
    return EXIT_OK if ok else EXIT_FAILED
