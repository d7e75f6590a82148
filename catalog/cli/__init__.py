"""The `catalog` command. Each subcommand is declared as data: its name, help line and module
in the one table `catalog.cli.commands.COMMANDS`, and in its module what it parses
(``ARGUMENTS``, a `catalog.cli.common.Arguments`) and what runs (``run``). Parsers are built
from those declarations by `catalog.cli.common.build_command`, and only for the command that
runs: only its module is imported, so `--help` and `--version` load nothing but argparse.

Exit codes: 0 everything asked for was done; 1 at least one dataset failed and the others
were done, `verify` found a problem, or a prepare's worker was killed (a command stopped by
one error exits with that error's code); 2 usage error (bad arguments, an unknown dataset or
split, a dataset that must be prepared first, a malformed builder.yaml, an unusable data dir,
a missing optional library); 3 data error (a source file, download, shard or record that is
missing, corrupt or does not match its description: SourceFormatError, FeatureError,
ShardError, ChecksumError, DownloadError; and a file that cannot be read, an OSError naming
it). Which catalog error gives 2 and which 3 is decided in one place,
`catalog.cli.common.EXIT_CODES`, by the error's class (`exit_code`: an OSError by its errno);
`catalog --help` lists the codes. Errors print one line on stderr, never a traceback.

Everything printed passes through `catalog._util.terminal`'s escaping (control characters a
dataset's text carries reach the terminal as visible escapes); with ``--json`` stdout holds
exactly one JSON document for every exit code (`main`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from catalog._util.terminal import EscapingStream, escaping, unescaped
from catalog._version import __version__
from catalog.cli.commands import COMMANDS, Command, find
from catalog.cli.common import (
    ENVIRONMENT,
    EXIT_FAILED,
    EXIT_HELP,
    EXIT_OK,
    EXIT_USAGE,
    JSON_ERRORS,
    HelpFormatter,
    Parser,
    build_command,
    error,
    error_document,
    exit_code,
    os_error_message,
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
            build_command(self, command, importlib.import_module(command.module))
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
            build_command(commands, command, importlib.import_module(command.module))
        else:
            commands.add_unbuilt(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `catalog` command `argv` (default: ``sys.argv[1:]``); its exit code.

    What it prints goes through `catalog._util.terminal`'s escaping streams (a dataset's own
    text reaches the terminal with its control characters as visible escapes), and with
    ``--json`` stdout gets exactly one JSON document whatever the exit code: the command's,
    or `error_document` when it stopped before printing one."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # what argparse's version action prints, without building it
        print(f"catalog {__version__}")
        return EXIT_OK
    stdout, stderr = sys.stdout, sys.stderr
    if stdout is not None and stderr is not None:  # (None without a console: pythonw)
        sys.stdout, sys.stderr = _Counting(stdout), escaping(stderr)
    JSON_ERRORS.clear()
    wants_json = "--json" in argv
    code = EXIT_FAILED
    try:
        code = _run(argv)
        return code
    except SystemExit as stop:  # argparse: --help (0), a usage error (2)
        code = stop.code if isinstance(stop.code, int) else EXIT_USAGE
        raise
    except BaseException as exc:  # a bug: its traceback, after the --json document below
        if not JSON_ERRORS:
            JSON_ERRORS.append(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        counted = sys.stdout
        if wants_json and isinstance(counted, _Counting) and not counted.written:
            with contextlib.suppress(OSError):
                print(json.dumps(error_document(code), indent=2), flush=True)
        sys.stdout, sys.stderr = stdout, stderr


def _run(argv: list[str]) -> int:
    args = _parser(argv).parse_args(argv)
    try:
        code: int = args.run(args)
    except CatalogError as exc:
        error(str(exc))
        return exit_code(exc)
    except OSError as exc:  # a file the command reads or writes, named, in one line
        if isinstance(exc, BrokenPipeError):  # `catalog list --json | head`: not an error
            # Point stdout at devnull so the interpreter's final flush cannot fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_OK
        error(os_error_message(exc))
        return exit_code(exc)
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    return code


class _Counting(EscapingStream):
    """stdout, escaped, counting what is written: with ``--json``, `main` prints an error
    document only when the command printed nothing."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(unescaped(stream))
        self.written = 0

    def write(self, text: str) -> int:
        self.written += len(text)
        return super().write(text)
