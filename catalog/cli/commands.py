"""The subcommands of `catalog`, in the order `catalog --help` lists them.

Only this table is read to answer `catalog --help` and `catalog --version`: a command's module
(and what it imports: the builder specs, NumPy, the readers) is imported when that command runs,
so asking for help or the version starts as fast as ``import catalog``.
"""

from __future__ import annotations

__all__ = ["COMMANDS", "Command", "find"]


class Command:
    """One subcommand. A plain class: a dataclass or NamedTuple would cost `--version` a
    noticeable part of its start-up."""

    __slots__ = ("aliases", "help", "module", "name")

    def __init__(self, name: str, module: str, help: str, aliases: tuple[str, ...] = ()) -> None:
        self.name = name
        #: defines ``ARGUMENTS`` (its parser, declared) and ``run(args)``, the command itself
        self.module = module
        self.help = help  #: the line `catalog --help` shows
        self.aliases = aliases


COMMANDS = (
    Command("prepare", "catalog.cli.prepare", "download, verify and prepare datasets"),
    Command("list", "catalog.cli.listing", "list the datasets in the catalog"),
    Command("info", "catalog.cli.info", "show a dataset's features, splits, sizes and citation"),
    Command(
        "show", "catalog.cli.show", "draw a grid of examples into a PNG (print text and table rows)"
    ),
    Command(
        "verify", "catalog.cli.verify", "check prepared datasets against their dataset_info.json"
    ),
    Command(
        "rm",
        "catalog.cli.rm",
        "remove prepared datasets (and, with --downloads, their downloads)",
        aliases=("clean",),
    ),
    Command(
        "import",
        "catalog.cli.imports",
        "convert a TFDS directory (or TFRecord files + a builder) into a catalog dataset",
    ),
    Command(
        "export",
        "catalog.cli.export",
        "write a prepared dataset as TFRecord files, a TFDS directory or Parquet files",
    ),
    Command("site", "catalog.cli.site", "write a static web site of the datasets"),
    Command("croissant", "catalog.cli.croissant", "print a dataset's Croissant 1.0 JSON-LD"),
)


def find(name: str) -> Command | None:
    """The command called `name` (or one of its aliases), if any."""
    return next((c for c in COMMANDS if name == c.name or name in c.aliases), None)
