"""The `catalog` command. Each subcommand is a module with `register(commands)`.

Exit codes: 0 everything asked for was done; 1 at least one dataset failed (the others still
ran) or `verify` found a problem; 2 usage error (bad arguments, unknown dataset or split, a
dataset that must be prepared first). Errors print one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from catalog._version import __version__
from catalog.cli import export, imports, info, listing, prepare, rm, show, site, verify
from catalog.cli.common import ENVIRONMENT, EXIT_OK, EXIT_USAGE, Parser, error
from catalog.errors import CatalogError

__all__ = ["main"]

#: The subcommands, in the order `catalog --help` lists them.
COMMANDS = (prepare, listing, info, show, verify, rm, imports, export, site)


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="catalog",
        description="Download, verify and prepare datasets; read them as NumPy, no TensorFlow.",
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"catalog {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except CatalogError as exc:
        error(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except BrokenPipeError:  # e.g. `catalog list --json | head`: the reader left, not an error
        # Point stdout at devnull so the interpreter's final flush cannot fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    return code
