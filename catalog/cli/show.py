"""`catalog show NAME`: what fits the dataset: a PNG grid of images or audio waveforms, each
captioned "index: class name"; for text and tabular datasets, the first lines of each
example's text or a table of rows, printed (or written to -o)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from catalog.api.resolve import resolve_dataset
from catalog.cli.common import (
    DATASET,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    Argument,
    Arguments,
    error,
    image_max_side,
    positive_int,
)
from catalog.errors import NotPreparedError
from catalog.present.show import MAX_EXAMPLES, MAX_SIDE
from catalog.present.show_dataset import about, show_handle
from catalog.present.strings import no_surrogates

__all__ = ["ARGUMENTS", "run"]

ARGUMENTS = Arguments(
    description="Draw examples of a prepared dataset into a PNG grid, each captioned with "
    "its index in the split and its class name. Without --seed the first N examples are "
    "shown; with --seed K, N examples drawn without replacement by "
    "numpy.random.default_rng(K), in index order. Small images are scaled up by a whole "
    f"factor (nearest neighbour) to at most {MAX_SIDE} px, larger ones down; images of varying "
    "size are centred on gray. Grayscale, RGB and RGBA images work. A dataset without "
    "images but with audio is drawn as waveform thumbnails. Text datasets print the first "
    "--lines lines of each example's text, tabular ones a table of rows (to -o if given).",
    example="catalog show fashion_mnist --split 'test[:1000]' -n 16 --seed 0 -o grid.png",
    arguments=(
        *DATASET,
        image_max_side("show examples of"),
        Argument(
            "--split",
            help="split or split spec, e.g. 'test' or 'train[:10%%]' (default: train, else the "
            "first split)",
        ),
        Argument(
            "-n",
            "--num-examples",
            type=positive_int,
            default=16,
            metavar="N",
            help=f"how many examples (default: 16, at most {MAX_EXAMPLES})",
        ),
        Argument("--seed", type=int, help="draw the examples at random with this seed"),
        Argument(
            "-o",
            "--output",
            type=Path,
            help="the picture to write: .png, or .jpg/.jpeg for a JPEG (default: NAME.png, or "
            "NAME-CONFIG.png, in the current dir); for text and tabular datasets, a text file "
            "(default: print)",
        ),
        Argument("--columns", type=positive_int, help="cells per row (default: a square)"),
        Argument(
            "--lines",
            type=positive_int,
            default=3,
            metavar="N",
            help="text datasets: the first N lines of each text (default: 3)",
        ),
        Argument(
            "--image-key",
            help="the Image feature to draw (default: the supervised input, else the first Image)",
        ),
    ),
)


#: The picture formats `-o` can write, by file suffix.
IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG"}
#: What a default output file name keeps of a dataset's name; anything else becomes "_".
_UNSAFE = re.compile(r"[^\w.-]|[\ud800-\udfff]")


def file_stem(name: str) -> str:
    """The default output file's stem for a dataset named `name`: the name itself for every
    registered one; for a dataset directory, whose info names it freely, one file in the
    current dir (no "/" or "..", no surrogate, at most 100 characters).

    >>> file_stem("cmaterdb-telugu"), file_stem("../../etc/x"), file_stem("a\\ud800")
    ('cmaterdb-telugu', '_.._etc_x', 'a_')
    """
    stem = _UNSAFE.sub("_", name[:100]).lstrip(".")
    return stem or "examples"


def run(args: argparse.Namespace) -> int:
    if args.num_examples > MAX_EXAMPLES:
        error(f"-n {args.num_examples}: at most {MAX_EXAMPLES} examples fit in one picture")
        return EXIT_USAGE
    handle = resolve_dataset(args.name, data_dir=args.data_dir, image_max_side=args.image_max_side)
    what = about(handle, args.image_key)  # a dataset directory not prepared: NotPreparedError
    output = args.output or Path(f"{file_stem(what.name)}.png")
    as_text = what.kind in ("text", "table")
    image_format = IMAGE_FORMATS.get(output.suffix.lower())
    if image_format is None and not as_text:
        known = ", ".join(IMAGE_FORMATS)
        error(f"-o {output}: cannot tell the image format from {output.suffix!r}; use {known}")
        return EXIT_USAGE
    try:
        shown = show_handle(
            handle, split=args.split, num_examples=args.num_examples, seed=args.seed,
            image_key=args.image_key, columns=args.columns, lines=args.lines,
        )  # fmt: skip
    except NotPreparedError:
        error(str(handle.not_prepared_error(args.name, args.data_dir)))
        return EXIT_USAGE
    except ValueError as exc:  # no Image feature to draw, an empty split
        error(f"{args.name}: {exc}")
        return EXIT_USAGE
    if shown.text is not None:
        return _write_text(args, shown.text, shown.count)
    assert shown.picture is not None  # an image or audio dataset
    grid = shown.picture
    try:
        if image_format == "PNG":
            grid.save(output, format="PNG", optimize=True)
        else:
            grid.convert("RGB").save(output, format="JPEG", quality=92)
    except OSError as exc:
        error(f"cannot write {output}: {exc.strerror or exc}")
        return EXIT_FAILED
    size = f"{grid.width}x{grid.height} px"
    done = f"{shown.count} examples of {what.label} {shown.split} ({size})"
    print(no_surrogates(f"wrote {output}: {done}"))
    return EXIT_OK


def _write_text(args: argparse.Namespace, text: str, count: int) -> int:
    """Text and tabular datasets: their text or a table, printed or written to -o."""
    if args.output is None:
        print(text, end="")
        return EXIT_OK
    try:
        args.output.write_text(text, "utf-8")
    except OSError as exc:
        error(f"cannot write {args.output}: {exc.strerror or exc}")
        return EXIT_FAILED
    print(no_surrogates(f"wrote {args.output}: {count} examples of {args.name}"))
    return EXIT_OK
