"""`catalog prepare PATH`'s options for local files.

- `add_arguments`: ``--delimiter``, ``--encoding``, ``--missing TEXT`` and ``--dtype
  COLUMN=TYPE`` (repeatable), ``--skip-rows N``, ``--no-header``, ``--channels``;
  `infer_arguments` turns them into `catalog.api.files.files_builder`'s keyword arguments.
- `joined_paths`: several PATHs (what an unquoted glob expands to) are one dataset when
  ``--name`` is given, else one usage error saying to quote the glob or give ``--name``.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

__all__ = [
    "FLAGS",
    "LocalFilesUsageError",
    "add_arguments",
    "infer_arguments",
    "joined_paths",
]

#: The argparse destinations of the options here (each applies to local files only).
FLAGS = ("delimiter", "encoding", "missing", "dtype", "channels", "skip_rows", "no_header")
_DELIMITER_WORDS = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}


class LocalFilesUsageError(ValueError):
    """An option for local files given wrongly (a usage error, exit 2)."""


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="the field separator of CSV/TSV files (one character, or tab, comma, semicolon, "
        "pipe); default: found from the file among , ; tab |",
    )
    group.add_argument(
        "--encoding",
        metavar="ENCODING",
        help="the text encoding of CSV/TSV files (default: UTF-8, or as the file's BOM says)",
    )
    group.add_argument(
        "--missing",
        action="append",
        metavar="TEXT",
        help="a text that is a missing value in CSV/TSV fields, as the empty field is (e.g. NA, "
        "as R writes them); repeat for more",
    )
    group.add_argument(
        "--skip-rows",
        type=int,
        default=0,
        metavar="N",
        help="lines skipped at the start of CSV/TSV files, before the header (pandas' "
        "skiprows=N), e.g. a count line",
    )
    group.add_argument(
        "--no-header",
        action="store_true",
        help="CSV/TSV files have no header row: the first row is data and the columns are "
        "named 0, 1, ... (pandas' header=None)",
    )
    group.add_argument(
        "--dtype",
        action="append",
        metavar="COLUMN=TYPE",
        help="a table column's type instead of the inferred one (int64, float32, bool, text, "
        "...); every value is checked against it; repeat for more columns",
    )
    group.add_argument(
        "--channels",
        type=int,
        choices=(1, 3, 4),
        help="an image folder's channels (1 gray, 3 RGB, 4 RGBA); every image is converted to "
        "them; default: what most images have",
    )


def infer_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """`files_builder` keyword arguments from the options; LocalFilesUsageError if malformed."""
    dtypes = {}
    for item in args.dtype or ():
        column, sep, dtype = item.partition("=")
        if not sep or not column or not dtype:
            raise LocalFilesUsageError(f"--dtype {item!r}: expected COLUMN=TYPE (e.g. zip=text)")
        dtypes[column] = dtype
    delimiter = args.delimiter
    if delimiter is not None:
        delimiter = _DELIMITER_WORDS.get(delimiter.lower(), delimiter)
        if len(delimiter) != 1:
            raise LocalFilesUsageError(
                f"--delimiter {args.delimiter!r}: expected one character (or tab, comma, "
                "semicolon, pipe)"
            )
    if args.skip_rows < 0:
        raise LocalFilesUsageError(f"--skip-rows {args.skip_rows}: expected a number >= 0")
    return {
        "skip_rows": args.skip_rows,
        "no_header": args.no_header,
        "dtypes": dtypes,
        "delimiter": delimiter,
        "encoding": args.encoding,
        "missing": tuple(args.missing or ()),
        "channels": args.channels,
    }


def joined_paths(names: list[str], is_files: list[bool], name: str | None) -> list[str]:
    """The arguments with several PATHs of local files joined into one glob when `name` (the
    ``--name`` flag) is given; LocalFilesUsageError naming the paths when it is not."""
    paths = [n for n, f in zip(names, is_files, strict=True) if f]
    if len(paths) < 2:
        return names
    shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
    from catalog.errors import SpecError
    from catalog.spec.infer import glob_of

    if name is None:
        try:  # the glob a shell would have made these paths of
            quoted = shlex.quote(glob_of(paths))
        except SpecError:  # not files of one folder
            quoted = "'DIR/*.csv'"
        raise LocalFilesUsageError(
            f"{len(paths)} paths of local files ({shown}): to prepare them as one dataset, "
            f"quote the glob so the shell leaves it to catalog (catalog prepare {quoted}) "
            "or give --name NAME; to prepare them apart, run catalog prepare once per path"
        )
    if len(paths) != len(names):
        raise LocalFilesUsageError(
            f"--name is for one dataset: the paths ({shown}) are prepared as one; name the "
            "registered datasets in another catalog prepare"
        )
    return [glob_of(paths)]
