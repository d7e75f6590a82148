"""The files under a folder, symlinks followed within it: the one walk every reader of a
local folder uses (image and audio folders, ``catalog prepare FOLDER``, a folder's digest).

`files_under` yields every file under `root` (a path under `root`, as the walk reached it), in
sorted path order. A symlink to a file is followed wherever it points (its bytes are read and
hashed). A symlink to a folder is followed when its target lies inside `root`, as a folder of
its own (``root/cat -> root/all/cat`` holds its files under ``cat/``); one whose target lies
outside `root`, that points back to a folder it is inside (a loop), or that points nowhere is
one `SourceFormatError` naming it: nothing is dropped in silence. Python's ``Path.rglob``
(before 3.13) silently skips symlinked folders, which is why this walk exists.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from catalog.errors import SourceFormatError

__all__ = ["files_under"]


def files_under(root: Path, *, hidden: bool = True) -> Iterator[Path]:
    """Every file under `root` in sorted path order (see the module docstring); names
    starting with ``.`` are skipped (with their folders) unless `hidden`."""
    top = root.resolve()
    yield from _walk(root, top, (top,), hidden)


def _walk(folder: Path, top: Path, inside: tuple[Path, ...], hidden: bool) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as error:
        raise SourceFormatError(f"{folder}: cannot list this folder ({error.strerror})") from None
    for entry in entries:
        if not hidden and entry.name.startswith("."):
            continue
        path = folder / entry.name
        if not entry.is_symlink():
            if entry.is_dir(follow_symlinks=False):
                yield from _walk(path, top, (*inside, path.resolve()), hidden)
            elif entry.is_file(follow_symlinks=False):
                yield path
            continue
        target = path.resolve()
        if not target.exists():
            raise SourceFormatError(
                f"{path}: a symlink to {path.readlink()}, which does not exist; remove it "
                "or point it at the file"
            )
        if target.is_file():
            yield path
        elif target.is_dir():
            if not target.is_relative_to(top):
                raise SourceFormatError(
                    f"{path}: a symlink to the folder {target}, outside {top}; catalog follows "
                    "folder links only within the folder it reads: move or copy that folder "
                    "in, or give its parent folder"
                )
            if any(target == ancestor for ancestor in inside):
                raise SourceFormatError(
                    f"{path}: a symlink to {target}, a folder it is inside (a loop); remove it"
                )
            yield from _walk(path, top, (*inside, target), hidden)
