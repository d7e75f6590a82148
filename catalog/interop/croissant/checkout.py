"""Git repositories as a Croissant file's source: the pattern of GitHub-hosted datasets (the
Croissant editor writes it), a FileObject ``contentUrl: https://github.com/OWNER/REPO``,
``encodingFormat: git+https``, and FileSets (or FileObjects) ``containedIn`` it whose paths are
relative to the repository. catalog clones nothing: a Croissant file read from a checkout of
that repository reads those files from the checkout (its folder, as files beside any local
Croissant file are read: never outside it); anywhere else, one error says to clone the
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


def checkout_folder(
    uid: str, node: Mapping[str, Any], where: str, checkouts: Mapping[str, str]
) -> Path:
    """The folder distribution node `uid` (a FileSet or FileObject ``containedIn`` a git
    repository of `checkouts`, ``{@id: URL}``) is read from: the Croissant file's (`where`),
    when it holds the node's files; else one SpecError saying to clone the repository."""
    container = next(c for c in (id_of(c) for c in as_list(node.get("containedIn"))) if c)
    url = checkouts[container]
    folder = Path(where).parent
    local = urlsplit(where).scheme not in ("http", "https")
    kind = short_type(node.get("@type"))
    if kind == "cr:FileSet":
        wanted = [g for g in as_list(node.get("includes")) if isinstance(g, str)]
        found = local and any(_matches(folder, g) for g in wanted)
    else:
        wanted = [str(node.get("contentUrl") or "")]
        found = local and _matches(folder, wanted[0])
    if not found:
        raise SpecError(
            f"{where}: {kind} {uid!r} lies in the git repository {url} ({', '.join(wanted)}), "
            f"and no such file is beside this Croissant file: clone the repository (git clone "
            f"{url}) and run catalog prepare on the Croissant file inside the clone"
        )
    return folder


def _matches(folder: Path, pattern: str) -> bool:
    """Whether glob `pattern` (relative, no ``..``) names a file inside `folder`."""
    if not pattern or pattern.startswith("/") or ".." in pattern.split("/"):
        return False
    try:
        return any(p.is_file() for p in folder.glob(pattern))
    except (ValueError, OSError, NotImplementedError):
        return False
