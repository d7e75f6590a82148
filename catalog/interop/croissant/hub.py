"""The Hugging Face Hub's Croissant files: their ``repo`` FileObject (``encodingFormat:
git+https``, ``contentUrl: <host>/datasets/<owner>/<name>/tree/refs%2Fconvert%2Fparquet``)
holds the Parquet files the Hub converted, which a FileSet ``containedIn`` it selects by path
(``<config>/<split>/<n>.parquet``). catalog clones no git repository: it asks the Hub's API
for that branch's Parquet files (``<host>/api/datasets/<owner>/<name>/parquet``, a JSON
object ``{config: {split: [url, ...]}}``) and downloads each file like any other, its sha256
recorded when fetched. Files on another host than the Croissant file's repository are refused.
The listing and the files are cached like any download: offline, the ones fetched last are
used (`catalog.download.cache.Cache.last_fetched`).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from urllib.parse import urlsplit

from catalog.download import DownloadManager, Resource
from catalog.errors import SpecError

__all__ = ["MAX_LISTING", "RepoLister", "hub_lister", "is_hub_tree", "is_repo"]

#: The most bytes the API's listing may hold.
MAX_LISTING = 16 << 20
_TREE = re.compile(r"^(https?://[^/]+)/datasets/([\w.-]+/[\w.-]+)/tree/refs%2Fconvert%2Fparquet/?$")
_PART = re.compile(r"^[\w.-]+$")

#: A repository's contentUrl -> its files as (path in the repository, URL).
RepoLister = Callable[[str], list[tuple[str, str]]]


def is_repo(encoding: object) -> bool:
    return isinstance(encoding, str) and encoding.strip().lower() == "git+https"


def is_hub_tree(url: object) -> bool:
    """Whether a repository's contentUrl is the Hub's converted Parquet branch (listed
    through the Hub's API); any other repository is read from a checkout."""
    return isinstance(url, str) and _TREE.match(url) is not None


def hub_lister(manager: DownloadManager) -> RepoLister:
    """Lists a Hub repository's converted Parquet files through `manager` (offline and
    mirrors as configured)."""

    def files(url: str) -> list[tuple[str, str]]:
        found = _TREE.match(url)
        if found is None:
            raise SpecError(
                f"not supported yet: a git repository as contentUrl ({url}); catalog reads the "
                "Hugging Face Hub's refs/convert/parquet branch through the Hub's API"
            )
        host, repo = found.groups()
        api = f"{host}/api/datasets/{repo}/parquet"
        name = re.sub(r"[^\w.-]", "_", repo) + "-parquet.json"
        got = manager.download(Resource((api,), None, None, name, max_size=MAX_LISTING))
        try:
            listing = json.loads(got.path.read_bytes())
        except (ValueError, RecursionError) as error:
            raise SpecError(f"{api}: not the Hub's listing of Parquet files ({error})") from None
        out = []
        for config, splits in listing.items() if isinstance(listing, dict) else ():
            for split, urls in splits.items() if isinstance(splits, dict) else ():
                for file_url in urls if isinstance(urls, list) else ():
                    out.append((_member(config, split, file_url, host, api), str(file_url)))
        if not out:
            raise SpecError(f"{api}: lists no Parquet file")
        return sorted(out)

    return files


def _member(config: str, split: str, url: object, host: str, api: str) -> str:
    """``<config>/<split>/<file>``: the file's path in the parquet branch."""
    parts = urlsplit(str(url))
    name = posixpath.basename(parts.path)
    if f"{parts.scheme}://{parts.netloc}" != host or not all(
        _PART.match(p) for p in (config, split, name)
    ):
        raise SpecError(
            f"{api}: lists {str(url)[:200]!r} for {config!r}/{split!r}; catalog downloads only "
            f"files of {host} with plain names"
        )
    return f"{config}/{split}/{name}"
