"""The `catalog` command. Each subcommand is a module with `register(commands)`, listed in
`catalog.cli.commands`; only the module of the command that runs is imported, so `--help` and
`--version` load nothing but argparse.

Exit codes: 0 everything asked for was done; 1 at least one dataset failed and the others
were done, `verify` found a problem, or a prepare's worker was killed (a command stopped by
one error exits with that error's code); 2 usage error (bad arguments, an unknown dataset or
split, a dataset that must be prepared first, a malformed builder.yaml, an unusable data dir,
a missing optional library); 3 data error (a source file, download, shard or record that is
missing, corrupt or does not match its description: SourceFormatError, FeatureError,
ShardError, ChecksumError, DownloadError). Which catalog error gives 2 and which 3 is decided
in one place, `catalog.cli.common.EXIT_CODES`, by the error's class; `catalog --help` lists
the codes. Errors print one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from catalog._version import __version__
from catalog.cli.commands import COMMANDS, Command, find
from catalog.cli.common import (
    ENVIRONMENT,
    EXIT_HELP,
    EXIT_OK,
    HelpFormatter,
    Parser,
    error,
    exit_code,
)
from catalog.errors import CatalogError

__all__ = ["main"]

#: What `catalog --help` ends with, before the environment variables (as every command's does).
EXAMPLES = """\
examples:
  catalog list --tag image-classification     find a dataset
  catalog info fashion_mnist                  its features, splits and sizes
  catalog prepare fashion_mnist               download, verify and prepare it
  catalog show fashion_mnist -o grid.png      look at some examples
  catalog COMMAND --help                      the options of one command
"""


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The subcommands. Each is named (in `--help`, and as a choice) without building its
    parser: only the command that runs needs one, and building the others (with argparse's
    translated messages) was a fifth of `catalog --help`'s start-up."""

    def add_unbuilt(self, command: Command) -> None:
        """Name `command` with its help line; its parser is made if it is ever parsed."""
        aliases = list(command.aliases)
        self._choices_actions.append(self._ChoicesPseudoAction(command.name, aliases, command.help))
        for name in (command.name, *aliases):
            self._name_parser_map[name] = command  # a placeholder, built in __call__

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        command = self._name_parser_map.get(values[0])
        if isinstance(command, Command):  # not built up front (`_parser` builds the one named)
            for name in (command.name, *command.aliases):
                del self._name_parser_map[name]
            importlib.import_module(command.module).register(self)
        super().__call__(parser, namespace, values, option_string)


def _parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for `argv`: the command it names in full (its module imported), every other
    command by its name and help line only."""
    named = next((a for a in argv if not a.startswith("-")), None)
    running = find(named) if named is not None else None
    parser = Parser(
        prog="catalog",
        description="Download, verify and prepare datasets; read them as NumPy, no TensorFlow.",
        epilog=f"{EXAMPLES}\n{EXIT_HELP}\n{ENVIRONMENT}",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"catalog {__version__}")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", action=_Commands
    )
    assert isinstance(commands, _Commands)
    for command in COMMANDS:
        if command is running:
            importlib.import_module(command.module).register(commands)
        else:
            commands.add_unbuilt(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # what argparse's version action prints, without building it
        print(f"catalog {__version__}")
        return EXIT_OK
    args = _parser(argv).parse_args(argv)
    try:
        code: int = args.run(args)
    except CatalogError as exc:
        error(str(exc))
        return exit_code(exc)
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except BrokenPipeError:  # e.g. `catalog list --json | head`: the reader left, not an error
        # Point stdout at devnull so the interpreter's final flush cannot fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    return code
