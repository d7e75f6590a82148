"""What every `catalog` command shares: exit codes, error output, sizes, the environment."""

from __future__ import annotations

import argparse
import sys

from catalog import paths

__all__ = ["ENVIRONMENT", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "add_command", "error"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

#: Every environment variable catalog reads, shown in `catalog --help` and each command's help.
ENVIRONMENT = f"""\
environment:
  {paths.DATA_DIR_ENV}      data dir (default: the platform's user data dir)
  {paths.DOWNLOAD_DIR_ENV}  download cache (default: <data dir>/downloads)
  {paths.MIRRORS_ENV}       mirrors tried first: base URLs or directories, space-separated
  {paths.OFFLINE_ENV}       1: never use the network (the cache, mirror dirs, the manual dir)
"""


def add_command(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    *,
    help: str,
    description: str,
    example: str,
) -> argparse.ArgumentParser:
    """Add a subcommand whose --help ends with an example and the environment variables."""
    return commands.add_parser(  # type: ignore[no-any-return]
        name,
        help=help,
        description=description,
        epilog=f"example:\n  {example}\n\n{ENVIRONMENT}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def error(message: str) -> None:
    """Print a user error: one message on stderr, no traceback."""
    print(f"catalog: error: {message}", file=sys.stderr)
