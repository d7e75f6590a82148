"""catalog's download layer as the download manager TFDS's builder code calls.

A builder's ``_split_generators(dl_manager)`` asks for its files with ``download``,
``download_and_extract``, ``extract``, ``iter_archive`` and ``manual_dir``, each taking a
URL or path, or a dict/list of them; ``download_checksums(url)`` fetches a checksums file
whose sizes and sha256s the later downloads are checked against (crema_d's).
`TFDSDownloads` answers those calls; what it does with a URL is handed in as `fetch`, so the
same object serves twice:

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

Testing hook: inside `dummy_downloads(DummyDownloads(...))` every `TFDSDownloads` of this
process answers as TFDS's own ``DatasetBuilderTestCase`` makes its download manager answer:
``download_and_extract`` gives the test's ``DL_EXTRACT_RESULT`` (names under the dummy folder,
the folder itself when there is none), ``download`` its ``DL_DOWNLOAD_RESULT`` (else the
same), ``extract`` its ``DL_EXTRACT_ONLY_RESULT`` when given, ``manual_dir`` and
``download_dir`` the dummy folder. Nothing is fetched, so the spec lists no downloads;
everything else (the builder's generators, the features, the prepare, the shards) is
catalog's real path. It holds in this process only: prepare with ``num_proc=1``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from catalog.download.extract import archive_format
from catalog.errors import MissingDependencyError, SourceFormatError

__all__ = ["DummyDownloads", "TFDSDownloads", "download_name", "dummy_downloads", "single_file"]


@dataclass(frozen=True)
class DummyDownloads:
    """What a TFDS builder test's download manager returns (see the module docstring):
    `folder` the dummy files; `extract_result`, `download_result`, `extract_only_result` the
    test's ``DL_EXTRACT_RESULT``, ``DL_DOWNLOAD_RESULT``, ``DL_EXTRACT_ONLY_RESULT`` (names
    relative to `folder`, nested in dicts and lists as the test gives them, or None)."""

    folder: Path
    extract_result: Any = None
    download_result: Any = None
    extract_only_result: Any = None

    def extracted(self) -> Any:
        if self.extract_result is None:
            return self.folder
        return _map(self.extract_result, lambda name: self.folder / name)

    def downloaded(self) -> Any:
        if self.download_result is None:
            return self.extracted()
        return _map(self.download_result, lambda name: self.folder / name)


_dummy: list[DummyDownloads] = []  # the one in force, innermost last


@contextlib.contextmanager
def dummy_downloads(dummy: DummyDownloads) -> Iterator[DummyDownloads]:
    """Every `TFDSDownloads` of this process answers from `dummy` until the block ends."""
    _dummy.append(dummy)
    try:
        yield dummy
    finally:
        _dummy.remove(dummy)


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
    file (`single_file`); `manual_dir`: the folder of files placed by hand, and
    `instructions` TFDS's for it (``MANUAL_DOWNLOAD_INSTRUCTIONS``: a manual dir that is
    missing or empty is one error quoting them, as TFDS's download manager says then);
    `manual` is that folder once the builder used it; `name`: the dataset, ``tfds:NAME``,
    for errors."""

    def __init__(
        self,
        name: str,
        fetch: Callable[[str], Path],
        extract: Callable[[Path], Path],
        manual_dir: Path | None,
        instructions: str = "",
    ) -> None:
        self.name = name
        self._fetch = fetch
        self._extract = extract
        self._manual_dir = manual_dir
        self.instructions = instructions
        self.manual: Path | None = None
        self.fetched: dict[str, Path] = {}  # url -> file, in the order asked for
        self.extracted: dict[Path, Path] = {}  # archive -> what it extracted to
        #: URL -> TFDS's UrlInfo (size, checksum, filename) that `download_checksums` read
        self.url_infos: dict[str, Any] = {}
        #: the URLs `download_checksums` fetched (TFDS registers no checksum for them)
        self.checksums_files: set[str] = set()

    # TFDS's DownloadManager API

    def download(self, url_or_urls: Any) -> Any:
        if _dummy:
            return _dummy[-1].downloaded()
        return _map(url_or_urls, self._download)

    def extract(self, path_or_paths: Any) -> Any:
        if _dummy and _dummy[-1].extract_only_result is not None:
            dummy = _dummy[-1]
            return _map(dummy.extract_only_result, lambda name: dummy.folder / name)
        return _map(path_or_paths, self._extract_one)

    def download_and_extract(self, url_or_urls: Any) -> Any:
        if _dummy:
            return _dummy[-1].extracted()
        return _map(url_or_urls, lambda url: self._extract_one(self._download(url)))

    def iter_archive(self, resource: Any) -> Iterator[tuple[str, BinaryIO]]:
        from tensorflow_datasets.core.download import extractor
        from tensorflow_datasets.core.download import resource as resource_lib

        if not isinstance(resource, resource_lib.Resource):
            resource = resource_lib.Resource(path=resource)
        return extractor.iter_archive(resource.path, resource.extract_method)  # type: ignore[no-any-return]

    @property
    def manual_dir(self) -> Path:
        if _dummy:
            return _dummy[-1].folder
        folder = self._manual_dir
        missing = folder is None or not folder.is_dir()
        if missing or not any(folder.iterdir()):  # type: ignore[union-attr]
            steps = " ".join(self.instructions.split()) or f"see 'catalog info {self.name}'."
            raise MissingDependencyError(
                f"{self.name} needs files placed by hand, and its manual dir {folder} "
                f"{'does not exist' if missing else 'is empty'}; TFDS's instructions: {steps} "
                "(put them there, or give --manual-dir DIR)"
            )
        self.manual = folder
        return folder  # type: ignore[return-value]

    @property
    def download_dir(self) -> Path:
        if _dummy:
            return _dummy[-1].folder
        raise self._unsupported("download_dir")

    def download_checksums(self, checksums_url: Any) -> None:
        """TFDS's: download a checksums file (TFDS's format: ``URL<TAB>size<TAB>sha256
        [<TAB>name]`` lines) and register its sizes and sha256s for the URLs it lists
        (`url_infos`), which later downloads are verified against. The file itself is
        registered nowhere (TFDS downloads it unverified too): it is measured, and the spec
        records its size and sha256 like any download's. Under `dummy_downloads`, nothing
        (as TFDS's test case)."""
        if _dummy:
            return
        from tensorflow_datasets.core.download import checksums

        url = str(getattr(checksums_url, "url", checksums_url))
        self.checksums_files.add(url)
        path = self._download(url)
        try:
            infos = checksums.load_url_infos(path)
        except (AssertionError, ValueError, UnicodeDecodeError) as error:
            raise SourceFormatError(
                f"{self.name}: the checksums file {url} is not TFDS's checksums format "
                f"(URL, size, sha256 per line): {error}"
            ) from None
        self.url_infos.update(infos)

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
