"""What every `catalog` command shares: exit codes, error output, the parser, the environment."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from catalog import errors
from catalog.cli.commands import Command
from catalog.storage import environment as env

if TYPE_CHECKING:  # the API (and NumPy behind it) is imported by the commands that run
    from catalog.api.builder import DatasetBuilder

__all__ = [
    "DATASET",
    "DATASETS",
    "DATA_DIR",
    "DOWNLOAD_DIR",
    "ENVIRONMENT",
    "EXIT_CODES",
    "EXIT_DATA",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "JSON",
    "JSON_ERRORS",
    "Argument",
    "Arguments",
    "CommandModule",
    "Group",
    "Parser",
    "build_command",
    "dataset_label",
    "dataset_name",
    "error",
    "error_document",
    "error_text",
    "exit_code",
    "image_max_side",
    "os_error_message",
    "positive_int",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_DATA = 0, 1, 2, 3

#: The exit code of a command that stopped on one of catalog's errors, by the error's class
#: (`catalog.errors`; the nearest class in its MRO decides): what the user asked for cannot be
#: done as asked (2), or the data is bad (3). The one place this is decided; `catalog --help`
#: shows `EXIT_HELP`, which says the same.
EXIT_CODES: dict[type[errors.CatalogError], int] = {
    # usage: fix the command, its arguments or the environment
    errors.DatasetNotFoundError: EXIT_USAGE,  # no dataset of that name, no such directory
    errors.SplitError: EXIT_USAGE,  # no such split, a malformed split spec
    errors.SpecError: EXIT_USAGE,  # the user's builder.yaml / registry, a target that exists
    errors.NotPreparedError: EXIT_USAGE,  # prepare it first
    errors.StorageError: EXIT_USAGE,  # an unusable data or download dir
    errors.MissingDependencyError: EXIT_USAGE,  # pip install the extra
    # data: the files, downloads, shards or records are not what they must be
    errors.SourceFormatError: EXIT_DATA,
    errors.FeatureError: EXIT_DATA,
    errors.ShardError: EXIT_DATA,
    errors.ChecksumError: EXIT_DATA,
    errors.DownloadError: EXIT_DATA,
    errors.PipelineError: EXIT_DATA,
    # neither: it failed with nothing wrong in the command or the data (a prepare's worker
    # process was killed: the same prepare again resumes)
    errors.CatalogError: EXIT_FAILED,
}

#: The exit codes, as `catalog --help` ends with them (the README says the same).
EXIT_HELP = """exit codes:
  0  everything asked for was done
  1  some datasets failed (the others were done), verify found a problem, or a
     prepare's worker process was killed (run it again: it resumes)
  2  usage: bad arguments, an unknown dataset or split, a dataset to prepare first,
     a malformed builder.yaml, an unusable data dir, a missing optional library
  3  data: a source file, download, shard or record is missing, unreadable, corrupt
     or does not match its description (checksums, features)
"""

#: Every environment variable catalog reads, shown in `catalog --help` and each command's help
#: (the README's "Environment variables" says the same).
ENVIRONMENT = f"""\
environment:
  {env.DATA_DIR_ENV}      data dir (default: the platform's user data dir)
  {env.DOWNLOAD_DIR_ENV}  download cache (default: <data dir>/downloads; for a data dir in
                        a bucket, the user cache dir's catalog/downloads)
  {env.MIRRORS_ENV}       mirrors tried first: base URLs or directories, space-separated
  {env.OFFLINE_ENV}       1: never use the network (the cache, mirror dirs, the manual dir)
  {env.MIN_RATE_ENV}  slowest average download rate before a file fails (default 32KiB)
  CATALOG_MAX_IMAGE_PIXELS   most pixels an image may claim (default Pillow's, 89478485)
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY  proxies for downloads
"""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, told the terminal's width the way `shutil.get_terminal_size`
    finds it ($COLUMNS, then the terminal, else 80), without importing shutil (and the
    compression modules it loads) into every `--help`."""

    def __init__(self, prog: str, width: int | None = None, **kwargs: Any) -> None:
        if width is None:
            try:
                columns = int(os.environ.get("COLUMNS", "0")) or os.get_terminal_size().columns
            except (ValueError, OSError):
                columns = 80
            width = columns - 2
        super().__init__(prog, width=width, **kwargs)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr and exit 2.

    Subcommand parsers are of the same class (argparse makes them of the parent's type).
    """

    def error(self, message: str) -> NoReturn:
        error(f"{message} (see '{self.prog} --help')")
        raise SystemExit(EXIT_USAGE)


class Argument:
    """One command-line argument, declared: what `argparse.ArgumentParser.add_argument` is
    given (its flags or name, and its keywords), added to a parser by `build_command`."""

    __slots__ = ("flags", "options")

    def __init__(self, *flags: str, **options: Any) -> None:
        self.flags = flags
        self.options = options

    def add_to(self, parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
        parser.add_argument(*self.flags, **self.options)


class Group:
    """Arguments that `--help` shows apart, under a title and a description."""

    __slots__ = ("arguments", "description", "title")

    def __init__(self, title: str, description: str, arguments: Sequence[Argument]) -> None:
        self.title = title
        self.description = description
        self.arguments = tuple(arguments)

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group(self.title, self.description)
        for argument in self.arguments:
            argument.add_to(group)


class Arguments:
    """A command's parser, declared: its description (paragraphs separated by blank lines,
    each wrapped to 88 columns), the example its --help ends with (before the environment
    variables), and its arguments and argument groups in the order --help lists them.

    Each command module defines one, ``ARGUMENTS``, beside its ``run(args) -> exit code``;
    its name, one-line help and aliases are its entry in `catalog.cli.commands`, and
    `build_command` makes the parser of the one that runs from the three."""

    __slots__ = ("arguments", "description", "example")

    def __init__(
        self, *, description: str, example: str, arguments: Sequence[Argument | Group]
    ) -> None:
        self.description = description
        self.example = example
        self.arguments = tuple(arguments)


class CommandModule(Protocol):
    """What `build_command` reads of a command's module."""

    ARGUMENTS: Arguments

    def run(self, args: argparse.Namespace) -> int: ...


def build_command(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    command: Command,
    module: CommandModule,
) -> argparse.ArgumentParser:
    """Add `command`'s parser to `commands`, as its module declares it (`Arguments`): its
    --help ends with the example and the environment variables; parsing it sets ``run``."""
    import textwrap  # here: `catalog --version` and `--help` need no wrapping

    declared = module.ARGUMENTS
    paragraphs = [
        textwrap.fill(" ".join(p.split()), 88) for p in declared.description.split("\n\n")
    ]
    parser: argparse.ArgumentParser = commands.add_parser(
        command.name,
        aliases=list(command.aliases),
        help=command.help,
        description="\n\n".join(paragraphs),
        epilog=f"example:\n  {declared.example}\n\n{ENVIRONMENT}",
        formatter_class=HelpFormatter,
    )
    for argument in declared.arguments:
        argument.add_to(parser)
    parser.set_defaults(run=module.run)
    return parser


def positive_int(text: str) -> int:
    """An argparse type: an int >= 1 (anything else is a usage error naming the value)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def dataset_name(b: DatasetBuilder) -> str:
    """``name[/config]``: how error messages name a dataset."""
    return b.full_name


def dataset_label(b: DatasetBuilder) -> str:
    """``name[/config] version``: how output lines name a dataset."""
    return f"{dataset_name(b)} {b.version}"


#: OSErrors about a file a dataset is read from, and what to do about each: such a file that
#: cannot be read is bad data (3), like one that is corrupt. (Any other OSError, a full disk
#: say, is 1: nothing is wrong with the command or the data.)
_FILE_ERRNOS = {
    errno.EACCES: "give catalog's user permission to read it",
    errno.EPERM: "give catalog's user permission to read it",
    errno.EISDIR: "a directory is where a file belongs: put the file there",
    errno.ENOTDIR: "a file is where a directory belongs",
    errno.ENOENT: "put the file there (or check the path)",
    errno.ELOOP: "a symlink loop: point the link at the file",
    errno.ENXIO: "not a regular file: put the file there",
    errno.EIO: "the device could not be read: copy the file to a working disk",
}

#: What to do when the disk the data goes to refuses the write.
_DISK_ERRNOS = {
    errno.ENOSPC: "free some space or choose another --data-dir",
    errno.EDQUOT: "free some space or choose another --data-dir",
    errno.EROFS: "choose a writable --data-dir",
}


def exit_code(exc: BaseException) -> int:
    """The exit code for a command stopped by `exc` (see `EXIT_CODES`); for an OSError no
    catalog error describes, EXIT_DATA when it says a file cannot be read (a manual file
    without read permission, a directory where a tar belongs), else EXIT_FAILED."""
    for cls in type(exc).__mro__:
        code = EXIT_CODES.get(cls)
        if code is not None:
            return code
    if isinstance(exc, OSError) and exc.filename is not None and exc.errno in _FILE_ERRNOS:
        return EXIT_DATA
    return EXIT_FAILED


def os_error_message(exc: OSError) -> str:
    """One line for an OSError no catalog error describes: the path, what the system said
    and what to do (``[Errno 21] Is a directory: 'x'`` becomes ``x: is a directory; a
    directory is where a file belongs: put the file there``)."""
    if exc.strerror is None:
        return str(exc) or type(exc).__name__
    where = os.fsdecode(exc.filename) if isinstance(exc.filename, str | bytes) else None
    what = exc.strerror[:1].lower() + exc.strerror[1:]
    advice = _FILE_ERRNOS.get(exc.errno or 0) if where is not None else None
    advice = advice or _DISK_ERRNOS.get(exc.errno or 0)
    line = f"{where}: {what}" if where is not None else what
    return f"{line}; {advice}" if advice else line


def error_text(exc: BaseException) -> str:
    """What an error says on its line: a catalog error its message, another OSError
    :func:`os_error_message`."""
    if isinstance(exc, OSError) and not isinstance(exc, errors.CatalogError):
        return os_error_message(exc)
    return str(exc)


def error(message: str) -> None:
    """Print a user error: one message on stderr, no traceback (and remember it for the
    ``--json`` document of a command that stops before printing its own, `JSON_ERRORS`)."""
    JSON_ERRORS.append(message)
    print(f"catalog: error: {message}", file=sys.stderr)


#: The messages `error` printed while the command runs (`catalog.cli.main` empties it first):
#: with ``--json``, a command that printed no document gets one saying these.
JSON_ERRORS: list[str] = []


def error_document(code: int) -> dict[str, object]:
    """What ``--json`` prints when the command printed no document of its own (it stopped
    on an error before, or argparse refused its arguments): ``{"ok": false, "exit_code":
    N, "errors": [the error lines, as on stderr without "catalog: error: "]}``."""
    return {"ok": code == EXIT_OK, "exit_code": code, "errors": list(JSON_ERRORS)}


_DATASET_HELP = "dataset name (NAME/CONFIG for one config, NAME:VERSION) or builder folder"
#: --data-dir, worded the same for every command that reads prepared data.
DATA_DIR = Argument("--data-dir", help=f"where prepared data is (${env.DATA_DIR_ENV})")
#: The dataset argument and --data-dir of a command taking one dataset.
DATASET = (Argument("name", metavar="NAME", help=_DATASET_HELP), DATA_DIR)
#: The dataset arguments and --data-dir of a command taking one or more datasets.
DATASETS = (Argument("names", nargs="+", metavar="NAME", help=_DATASET_HELP), DATA_DIR)
#: --download-dir, for the commands that fetch or remove downloads.
DOWNLOAD_DIR = Argument("--download-dir", help=f"download cache (${env.DOWNLOAD_DIR_ENV})")
#: --json, for a command whose output is one JSON document.
JSON = Argument("--json", action="store_true", help="print one JSON document")


def image_max_side(what: str) -> Argument:
    """--image-max-side N: the copy of a dataset with images at most N px on a side (the one
    ``catalog prepare --image-max-side N`` writes, in ``<version>-maxN``); `what` the command
    does with it."""
    return Argument(
        "--image-max-side",
        type=positive_int,
        metavar="N",
        help=f"{what} the copy prepared with --image-max-side N (images at most N px on a side)",
    )
