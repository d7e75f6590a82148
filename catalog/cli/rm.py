"""`catalog rm NAME...` (or `clean`): remove prepared datasets and, with --downloads, their files.

What goes: ``<data_dir>/<name>[/<config>]/<version>/`` (the pointer and every generation of
it no running process reads, `catalog.storage.generations`; and leftovers of killed runs beside
it; in a bucket, the pointer object, every generation and the markers of killed runs,
`catalog.storage.bucket_publish`), removed under the lock `catalog prepare` holds, so a
prepare running meanwhile is waited for, never cut in half. With ``--downloads``, also the
download cache entries of the files the dataset's spec lists (by their cache path
``<sha256[:16]>-<filename>``, with their records, partial downloads and extracted archives);
files in the manual dir are the user's and never touched. Removing what is not there is not
an error, for every kind of dataset: a registered one not prepared, and a plain name nothing
answers to (a dataset prepared from files or a Croissant file and removed already: its spec
went with it); the command says so (and which registered names come close) and exits 0.
"""

from __future__ import annotations

import argparse
import difflib

from catalog._util.units import count, format_size
from catalog.api.manage import DownloadsRemoval, remove_handle, remove_unnamed
from catalog.api.resolve import DatasetHandle, Resolver, plain_name
from catalog.cli.common import (
    DATASETS,
    DOWNLOAD_DIR,
    EXIT_FAILED,
    EXIT_OK,
    Argument,
    Arguments,
    error,
    error_text,
    image_max_side,
)
from catalog.errors import CatalogError, DatasetNotFoundError
from catalog.spec.registry import registered
from catalog.storage.data_dir import Removal

__all__ = ["ARGUMENTS", "run"]

ARGUMENTS = Arguments(
    description="Remove prepared datasets: <data dir>/<name>[/<config>]/<version>/, under "
    "the prepare lock (a prepare running meanwhile is waited for). With --downloads also "
    "the dataset's files in the download cache (never the manual dir). Says what was "
    "removed and how much space it took. Nothing to remove is not an error (exit 0). "
    "'catalog clean' is the same command.",
    example="catalog rm fashion_mnist --downloads",
    arguments=(
        *DATASETS,
        image_max_side("remove"),
        DOWNLOAD_DIR,
        Argument(
            "--downloads",
            action="store_true",
            help="also remove the dataset's downloaded files from the download cache",
        ),
        Argument(
            "--dry-run", action="store_true", help="say what would be removed, remove nothing"
        ),
    ),
)


def _removed_line(label: str, data_dir: object, removal: Removal, dry_run: bool) -> str:
    """What `catalog.remove` did (or, `dry_run`, would do) to `label`, as one line."""
    if not removal.found:
        return f"{label}: not prepared in {data_dir}; nothing to remove"
    what = removal.what
    if removal.leftovers:  # name them: a work dir is not the prepared copy
        work = f"{count(len(removal.leftovers), 'work dir')} of an interrupted prepare"
        what = f"{what} and {work}" if what else f"{work} ({', '.join(removal.leftovers)})"
    if dry_run:
        return f"{label}: would remove {what} ({format_size(removal.size)})"
    line = f"{label}: removed {what} ({format_size(removal.freed)})"
    if removal.held:  # an open data source still reads it: the next rm or prepare removes it
        held = removal.held
        line += (
            f"; {count(len(held), 'generation')} still read by a running process "
            f"{'is' if len(held) == 1 else 'are'} left until it closes them "
            f"({', '.join(held)}): run 'catalog rm' again then"
        )
    return line


def _downloads_line(label: str, removal: DownloadsRemoval, dry_run: bool) -> str:
    """What ``--downloads`` did (or would do) to `label`'s downloads, as one line."""
    where = removal.download_dir
    if not removal.found:
        return f"{label}: no downloads in {where}; nothing to remove"
    files = removal.files
    what = f"{files} download{'s' if files != 1 else ''} ({format_size(removal.size)})"
    return f"{label}: {'would remove' if dry_run else 'removed'} {what} from {where}"


def _handle(name: str, resolver: Resolver) -> DatasetHandle | None:
    """What `name` names; None for a plain name nothing answers to (nothing to remove)."""
    try:
        if plain_name(name):
            resolver.store()  # found there, or not: either way the data dir says
        return resolver.resolve(name)
    except DatasetNotFoundError:
        if not plain_name(name):
            raise
        return None


def _absent_line(name: str, where: object) -> str:
    """The line for a plain name nothing answers to, with the registered names close to it."""
    close = difflib.get_close_matches(name.partition("/")[0], list(registered()), n=3)
    hint = f" (no dataset of that name is known: did you mean {', '.join(close)}?)" if close else ""
    return f"{name}: nothing prepared under that name in {where}; nothing to remove{hint}"


def run(args: argparse.Namespace) -> int:
    resolver = Resolver(args.data_dir, args.image_max_side)
    handles = [_handle(n, resolver) for n in args.names]  # every argument checked before any rm
    failed = False
    for name, handle in zip(args.names, handles, strict=True):
        label = name
        try:
            label = name if handle is None else handle.label
            if handle is None:  # nothing answers to the name: what an earlier rm left
                store = resolver.store()
                removal = remove_unnamed(name, store, args.image_max_side, args.dry_run)
                if not removal.found:
                    print(_absent_line(name, store.root))
                    continue
                where = store.root
            else:
                removal = remove_handle(
                    handle, args.dry_run, downloads=args.downloads, download_dir=args.download_dir
                )
                where = handle.data_dir
            print(_removed_line(label, where, removal, args.dry_run))
            if removal.downloads is not None:
                print(_downloads_line(label, removal.downloads, args.dry_run))
        except (OSError, CatalogError) as exc:
            error(f"{label}: {error_text(exc)}")
            failed = True
    return EXIT_FAILED if failed else EXIT_OK
