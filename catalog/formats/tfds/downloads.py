"""catalog's download layer as the download manager TFDS's builder code calls.

A builder's ``_split_generators(dl_manager)`` asks for its files with ``download``,
``download_and_extract``, ``extract``, ``iter_archive`` and ``manual_dir``, each taking a
URL or path, or a dict/list of them. `TFDSDownloads` answers those calls; what it does with
a URL is handed in as `fetch`, so the same object serves twice:

- when the dataset's spec is made (`catalog.interop.tfds.builder_spec`): `fetch` downloads
  through `catalog.download.DownloadManager` (cache, mirrors, offline mode, resume,
  deadlines), checked against the size and sha256 TFDS registers for the URL, and each URL
  and archive extracted is recorded (`fetched`, `extracted`), so the spec declares them;
- in a prepare's work unit (`catalog.formats.tfds.reader`): `fetch` looks the URL up among
  the spec's downloads, already verified and resolved to paths by the prepare driver.

Archives are extracted by catalog (`catalog.download.extract`: bounded, safe); a single
compressed file extracts to the file itself, and a file that is no archive is given back as
it is, as TFDS's ``extract`` does. `iter_archive` reads an archive
member by member with TFDS's own iterator (plain Python, its file calls on the TF stand-in).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from catalog.download.extract import archive_format
from catalog.errors import MissingDependencyError

__all__ = ["TFDSDownloads", "download_name", "single_file"]


def download_name(url: str) -> str:
    """The name a spec gives the download of `url`: stable, whoever calls for it.

    >>> download_name("https://example.org/a.gz")
    'url-dc70c5ecb853ea24'
    """
    return "url-" + hashlib.sha256(url.encode()).hexdigest()[:16]


def single_file(root: Path, archive: Path) -> Path:
    """What TFDS's ``extract`` gives for `archive` extracted into `root`: the file itself for
    a single compressed file (gz, bz2, xz), else the folder."""
    if archive_format(archive) in ("gz", "bz2", "xz"):
        held = list(root.iterdir()) if root.is_dir() else []
        if len(held) == 1 and held[0].is_file():
            return held[0]
    return root


class TFDSDownloads:
    """The download manager a TFDS builder is given (see the module docstring).

    `fetch(url)` -> the verified file of a URL; `extract(path)` -> its extracted folder or
    file (`single_file`); `manual_dir`: the folder of files placed by hand; `name`: the
    dataset, ``tfds:NAME``, for errors."""

    def __init__(
        self,
        name: str,
        fetch: Callable[[str], Path],
        extract: Callable[[Path], Path],
        manual_dir: Path | None,
    ) -> None:
        self.name = name
        self._fetch = fetch
        self._extract = extract
        self._manual_dir = manual_dir
        self.fetched: dict[str, Path] = {}  # url -> file, in the order asked for
        self.extracted: dict[Path, Path] = {}  # archive -> what it extracted to

    # TFDS's DownloadManager API

    def download(self, url_or_urls: Any) -> Any:
        return _map(url_or_urls, self._download)

    def extract(self, path_or_paths: Any) -> Any:
        return _map(path_or_paths, self._extract_one)

    def download_and_extract(self, url_or_urls: Any) -> Any:
        return _map(url_or_urls, lambda url: self._extract_one(self._download(url)))

    def iter_archive(self, resource: Any) -> Iterator[tuple[str, BinaryIO]]:
        from tensorflow_datasets.core.download import extractor
        from tensorflow_datasets.core.download import resource as resource_lib

        if not isinstance(resource, resource_lib.Resource):
            resource = resource_lib.Resource(path=resource)
        return extractor.iter_archive(resource.path, resource.extract_method)  # type: ignore[no-any-return]

    @property
    def manual_dir(self) -> Path:
        if self._manual_dir is None or not self._manual_dir.is_dir():
            raise MissingDependencyError(
                f"{self.name} needs files placed by hand in its manual dir "
                f"({self._manual_dir}); put them there (see 'catalog info {self.name}') or "
                "give --manual-dir"
            )
        return self._manual_dir

    @property
    def download_dir(self) -> Path:
        raise self._unsupported("download_dir")

    def download_checksums(self, checksums_url: str) -> Any:
        raise self._unsupported("download_checksums")

    def download_kaggle_data(self, competition_or_dataset: str) -> Any:
        raise self._unsupported("download_kaggle_data")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise self._unsupported(name)

    # inside

    def _unsupported(self, call: str) -> MissingDependencyError:
        return MissingDependencyError(
            f"{self.name} calls dl_manager.{call}, which catalog's download manager for TFDS "
            "builders does not provide yet; this dataset cannot be prepared by catalog yet"
        )

    def _download(self, url: Any) -> Path:
        url = str(getattr(url, "url", url))  # a tfds.download.Resource gives its url
        if url not in self.fetched:
            self.fetched[url] = self._fetch(url)
        return self.fetched[url]

    def _extract_one(self, given: Any) -> Path:
        path = Path(os.fspath(getattr(given, "path", given)))
        if path.is_dir() or archive_format(path) is None:
            return path  # not an archive: TFDS's extract gives it back as it is
        if path not in self.extracted:
            self.extracted[path] = single_file(self._extract(path), path)
        return self.extracted[path]


def _map(value: Any, function: Callable[[Any], Path]) -> Any:
    """`function` over a URL/path or a dict/list/tuple of them, keeping the structure."""
    if isinstance(value, dict):
        return {key: _map(item, function) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map(item, function) for item in value)
    return function(value)
