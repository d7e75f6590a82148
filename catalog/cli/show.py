"""`catalog show NAME`: a PNG grid of examples, each captioned "index: class name"."""

from __future__ import annotations

import argparse
from pathlib import Path

from catalog.builder import builder
from catalog.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    add_command,
    add_dataset_args,
    dataset_name,
    error,
    positive_int,
)
from catalog.data_source import DataSource
from catalog.errors import NotPreparedError
from catalog.local import local_info, open_local
from catalog.show import MAX_EXAMPLES, MAX_SIDE, show_examples

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        commands,
        "show",
        help="draw a grid of examples into a PNG",
        description="Draw examples of a prepared dataset into a PNG grid, each captioned with "
        "its index in the split and its class name. Without --seed the first N examples are "
        "shown; with --seed K, N examples drawn without replacement by "
        "numpy.random.default_rng(K), in index order. Small images are scaled up by a whole "
        f"factor (nearest neighbour) to at most {MAX_SIDE} px, larger ones down; images of varying "
        "size are centred on gray. Grayscale, RGB and RGBA images work.",
        example="catalog show fashion_mnist --split 'test[:1000]' -n 16 --seed 0 -o grid.png",
    )
    add_dataset_args(parser, many=False)
    parser.add_argument(
        "--split",
        help="split or split spec, e.g. 'test' or 'train[:10%%]' (default: train, else the "
        "first split)",
    )
    parser.add_argument(
        "-n",
        "--num-examples",
        type=positive_int,
        default=16,
        metavar="N",
        help=f"how many examples (default: 16, at most {MAX_EXAMPLES})",
    )
    parser.add_argument("--seed", type=int, help="draw the examples at random with this seed")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        help="the PNG to write (default: NAME.png, or NAME-CONFIG.png, in the current dir)",
    )
    parser.add_argument("--columns", type=positive_int, help="cells per row (default: a square)")
    parser.add_argument(
        "--image-key",
        help="the Image feature to draw (default: the supervised input, else the first Image)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.num_examples > MAX_EXAMPLES:
        error(f"-n {args.num_examples}: at most {MAX_EXAMPLES} examples fit in one picture")
        return EXIT_USAGE
    local = local_info(args.name)  # a dataset directory (TFDS's or catalog's) given by path
    split = args.split
    if local is not None:
        name, label = local.name, local.full_name
        split = split or ("train" if "train" in local.splits else next(iter(local.splits)))
        ds = open_local(args.name, local, split=split)
        assert isinstance(ds, DataSource)
    else:
        b = builder(args.name, data_dir=args.data_dir)
        name = f"{b.name}-{b.config}" if b.config else b.name
        label = dataset_name(b)
        if split is None:
            split = "train" if "train" in b.spec.splits else next(iter(b.spec.splits))
        try:
            ds = b.as_data_source(split)
        except NotPreparedError:
            error(
                f"{args.name} is not prepared in {b.data_dir}; prepare it first: "
                f"catalog prepare {args.name}"
                + (f" --data-dir {args.data_dir}" if args.data_dir else "")
            )
            return EXIT_USAGE
    try:
        grid = show_examples(
            ds,
            num_examples=args.num_examples,
            seed=args.seed,
            image_key=args.image_key,
            columns=args.columns,
        )
    except ValueError as exc:  # no Image feature to draw, an empty split
        error(f"{args.name}: {exc}")
        return EXIT_USAGE
    output = args.output or Path(f"{name}.png")
    try:
        grid.save(output, format="PNG", optimize=True)
    except OSError as exc:
        error(f"cannot write {output}: {exc.strerror or exc}")
        return EXIT_FAILED
    count = min(args.num_examples, len(ds))
    size = f"{grid.width}x{grid.height} px"
    print(f"wrote {output}: {count} examples of {label} {split} ({size})")
    return EXIT_OK
