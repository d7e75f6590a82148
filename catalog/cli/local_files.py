"""`catalog prepare PATH`'s options for local files.

- `GROUP`: the "local files" group of `catalog prepare`'s parser, declared: ``--name``,
  ``--label``, ``--fill``, ``--write-spec`` and `ARGUMENTS`, which are ``--delimiter``,
  ``--encoding``, ``--missing TEXT`` and ``--dtype COLUMN=TYPE`` (repeatable),
  ``--skip-rows N``, ``--no-header``, ``--quoting``, ``--channels``; `infer_arguments` turns
  those into `catalog.api.files.files_builder`'s keyword arguments.
- `joined_paths`: several PATHs (what an unquoted glob expands to) are one dataset when
  ``--name`` is given, else one usage error saying to quote the glob or give ``--name``.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from catalog.cli.common import Argument, Group

__all__ = [
    "ARGUMENTS",
    "FLAGS",
    "GROUP",
    "LocalFilesUsageError",
    "infer_arguments",
    "joined_paths",
]

_DELIMITER_WORDS = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}


class LocalFilesUsageError(ValueError):
    """An option for local files given wrongly (a usage error, exit 2)."""


#: The options, declared (`catalog prepare` shows them in its "local files" group).
ARGUMENTS = (
    Argument(
        "--delimiter",
        metavar="CHAR",
        help="the field separator of CSV/TSV files (one character, or tab, comma, semicolon, "
        "pipe); default: found from the file among , ; tab |",
    ),
    Argument(
        "--encoding",
        metavar="ENCODING",
        help="the text encoding of CSV/TSV files (default: UTF-8, or as the file's BOM says)",
    ),
    Argument(
        "--missing",
        action="append",
        metavar="TEXT",
        help="a text that is a missing value in CSV/TSV fields, as the empty field is (e.g. NA, "
        "as R writes them); repeat for more",
    ),
    Argument(
        "--skip-rows",
        type=int,
        default=0,
        metavar="N",
        help="lines skipped at the start of CSV/TSV files, before the header (pandas' "
        "skiprows=N), e.g. a count line",
    ),
    Argument(
        "--no-header",
        action="store_true",
        help="CSV/TSV files have no header row: the first row is data and the columns are "
        "named 0, 1, ... (pandas' header=None)",
    ),
    Argument(
        "--quoting",
        choices=("minimal", "none"),
        help="how CSV/TSV fields use double quotes: minimal (the default: a field may be "
        "quoted, a quote in it written twice) or none (quotes are text, as in most TSV files; "
        "pandas' quoting=csv.QUOTE_NONE)",
    ),
    Argument(
        "--dtype",
        action="append",
        metavar="COLUMN=TYPE",
        help="a table column's type instead of the inferred one (int64, float32, bool, text, "
        "...); every value is checked against it; repeat for more columns",
    ),
    Argument(
        "--channels",
        type=int,
        choices=(1, 3, 4),
        help="an image folder's channels (1 gray, 3 RGB, 4 RGBA); every image is converted to "
        "them; default: what most images have",
    ),
)

#: `catalog prepare`'s options for a PATH of local files (--name and --fill for a Croissant
#: file too), shown apart in its --help.
GROUP = Group(
    "local files",
    "A PATH instead of a NAME is prepared with no builder.yaml: a folder of images or\n"
    "WAV/FLAC files (<root>[/<split>]/<class>/<file>), CSV/TSV, JSON Lines or Parquet\n"
    "files (a file, a folder, a quoted glob), WebDataset .tar shards. A registered name\n"
    "wins: write ./mnist for a folder called mnist.",
    (
        Argument(
            "--name",
            help="the dataset's name (default: made from the path or the Croissant file's name); "
            "data_source(NAME) reads it",
        ),
        Argument(
            "--label",
            metavar="COLUMN",
            help="make a text column a ClassLabel of its sorted values",
        ),
        Argument(
            "--fill",
            action="append",
            metavar="COLUMN=VALUE",
            help="the value standing in for a column's (or a Croissant field's) missing values "
            "(else a missing value is an error); repeat for more columns",
        ),
        *ARGUMENTS,
        Argument(
            "--write-spec",
            metavar="DIR",
            help="also write the inferred builder.yaml + checksums.tsv into DIR (the data's folder "
            "or one above it), to edit and keep as a builder folder",
        ),
    ),
)

#: The argparse destinations of the options here (each applies to local files only), in the
#: order `catalog prepare` names the first one given where it does not apply.
FLAGS = (
    "delimiter", "encoding", "missing", "dtype", "channels", "skip_rows", "no_header", "quoting"
)  # fmt: skip


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
        "quoting": args.quoting or "minimal",
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
