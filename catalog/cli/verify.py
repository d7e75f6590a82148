"""`catalog verify NAME...`: re-hash every shard against dataset_info.json, count its records."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from catalog._util.units import format_size
from catalog.api.builder import DatasetBuilder, builder
from catalog.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    add_command,
    add_dataset_args,
    add_image_max_side,
    dataset_label,
    error,
)
from catalog.info.dataset_info import DatasetInfo
from catalog.read.verify import verify
from catalog.storage.diskspace import disk_usage
from catalog.storage.locking import work_dirs
from catalog.storage.remote import RemoteDir

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        commands,
        "verify",
        description="Check prepared datasets: every shard dataset_info.json lists must be "
        "there, of the recorded size and sha256, and hold the recorded number of records "
        "(opened with array_record's reader). Prints one line per problem, naming the shard, "
        "and one summary line per dataset. Exit status: 0 intact, 1 a problem found, 2 usage "
        'error (also: not prepared). --json prints {"ok": bool, "datasets": [{"name", '
        '"config", "version", "path", "ok", "shards", "num_examples", "num_bytes", "seconds", '
        '"problems": [{"kind": "info"|"missing"|"size"|"sha256"|"records", "file", '
        '"message"}], "stale_work_dirs": [{"path", "num_bytes"}]}]}. Work dirs left by a '
        "killed prepare are listed (they are not a problem of the prepared copy: the next "
        "prepare resumes or removes them).",
        example="catalog verify fashion_mnist mnist",
    )
    add_dataset_args(parser, many=True)
    add_image_max_side(parser, "verify")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(run=run)


def _verify_one(b: DatasetBuilder, args: argparse.Namespace, name: str) -> dict[str, Any]:
    label = dataset_label(b)
    start = time.perf_counter()
    problems = verify(b.data_path)
    seconds = time.perf_counter() - start
    try:
        splits = list(
            (
                b.info if isinstance(b.data_path, RemoteDir) else DatasetInfo.read(b.data_path)
            ).splits.values()
        )
    except Exception:  # unreadable: verify() said so already
        splits = []
    shards = sum(len(s.shards) for s in splits)
    num_examples = sum(s.num_examples for s in splits)
    num_bytes = sum(s.num_bytes for s in splits)
    entry: dict[str, Any] = {
        "name": b.name,
        "config": b.config,
        "version": b.version,
        "path": str(b.data_path),
        "ok": not problems,
        "shards": shards,
        "num_examples": num_examples,
        "num_bytes": num_bytes,
        "seconds": round(seconds, 3),
        "problems": [vars(p) for p in problems],
        "stale_work_dirs": [
            {"path": str(p), "num_bytes": disk_usage(p)}
            for p in ([] if isinstance(b.data_path, RemoteDir) else work_dirs(b.data_path))
        ],
    }
    if args.json:
        return entry
    for stale in entry["stale_work_dirs"]:
        print(
            f"{label}: work dir of a killed prepare: {stale['path']} "
            f"({format_size(stale['num_bytes'])}); the next prepare resumes or removes it"
        )
    for problem in problems:
        print(f"{label}: {problem}")
    if problems:
        again = f"catalog prepare {name} --overwrite" + (
            f" --data-dir {args.data_dir}" if args.data_dir else ""
        )
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        where = f"{shards} shard{'s' if shards != 1 else ''}"
        print(f"{label}: {count} in {where}; prepare it again: {again}")
    else:
        print(
            f"{label}: ok: {shards} shard{'s' if shards != 1 else ''}, "
            f"{num_examples} examples, {format_size(num_bytes)} "
            f"verified in {seconds:.1f} s -> {b.data_path}"
        )
    return entry


def run(args: argparse.Namespace) -> int:
    builders = [
        builder(n, data_dir=args.data_dir, image_max_side=args.image_max_side) for n in args.names
    ]
    for name, b in zip(args.names, builders, strict=True):
        if not b.is_prepared:
            error(str(b.not_prepared_error(name, args.data_dir)))
            return EXIT_USAGE
    entries = [_verify_one(b, args, name) for name, b in zip(args.names, builders, strict=True)]
    ok = all(e["ok"] for e in entries)
    if args.json:
        print(json.dumps({"ok": ok, "datasets": entries}, indent=2))
    return EXIT_OK if ok else EXIT_FAILED
