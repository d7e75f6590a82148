"""Git repositories as a Croissant file's source: the pattern of GitHub-hosted datasets (the
Croissant editor writes it), a FileObject ``contentUrl: https://github.com/OWNER/REPO``,
``encodingFormat: git+https``, and FileSets (or FileObjects) ``containedIn`` it whose paths are
relative to the repository. catalog clones nothing: a Croissant file read from a checkout of
that repository reads those files from the checkout (the Croissant file's folder, or the one
above it the paths start from when it lies inside the repository: never outside that
folder); anywhere else, one error says to clone the
repository and prepare the Croissant file inside the clone. The Hugging Face Hub's Parquet
branch, also ``git+https``, is listed through the Hub's API instead
(`catalog.interop.croissant.hub`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from catalog.errors import SpecError
from catalog.interop.croissant.nodes import as_list, id_of, short_type

__all__ = ["checkout_folder"]


#: How many folders above the Croissant file's a checkout's top may be (the file may lie in a
#: folder of the repository, ``data/metadata.json``).
MAX_LEVELS = 4


def checkout_folder(
    uid: str, node: Mapping[str, Any], where: str, checkouts: Mapping[str, str]
) -> Path:
    """The folder distribution node `uid` (a FileSet or FileObject ``containedIn`` a git
    repository of `checkouts`, ``{@id: URL}``) is read from: the top of the checkout the
    Croissant file (`where`) lies in, the nearest of its folder and the folders above (up to
    the one holding ``.git``, at most `MAX_LEVELS`) where the node's paths name files; else
    one SpecError saying to clone the repository."""
    container = next(c for c in (id_of(c) for c in as_list(node.get("containedIn"))) if c)
    url = checkouts[container]
    kind = short_type(node.get("@type"))
    if kind == "cr:FileSet":
        wanted = [g for g in as_list(node.get("includes")) if isinstance(g, str)]
    else:
        wanted = [str(node.get("contentUrl") or "")]
    if urlsplit(where).scheme not in ("http", "https"):
        for level, folder in enumerate(_tops(Path(where).parent)):
            # above the Croissant file's folder, only paths under a named folder are looked
            # for (never a ``**`` walk of everything above it)
            usable = [w for w in wanted if level == 0 or not _has_magic(w.split("/")[0])]
            if any(_matches(folder, w) for w in usable):
                return folder
    raise SpecError(
        f"{where}: {kind} {uid!r} lies in the git repository {url} ({', '.join(wanted)}), "
        f"and no such file is in a checkout around this Croissant file: clone the repository "
        f"(git clone {url}) and run catalog prepare on the Croissant file inside the clone"
    )


def _tops(folder: Path) -> list[Path]:
    """`folder` and those above it, up to the one holding ``.git`` (at most `MAX_LEVELS`)."""
    found = [folder]
    for above in folder.resolve().parents[:MAX_LEVELS]:
        if (found[-1] / ".git").exists():
            break
        found.append(above)
    return found


def _has_magic(part: str) -> bool:
    return any(c in part for c in "*?[")


def _matches(folder: Path, pattern: str) -> bool:
    """Whether glob `pattern` (relative, no ``..``) names a file inside `folder`."""
    if not pattern or pattern.startswith("/") or ".." in pattern.split("/"):
        return False
    try:
        return any(p.is_file() for p in folder.glob(pattern))
    except (ValueError, OSError, NotImplementedError):
        return False
