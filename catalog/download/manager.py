"""DownloadManager: the files a dataset needs, verified, in the cache, each fetched once.

For each file the first source that delivers verified bytes wins, in this order:

1. the download cache, ``<download_dir>/<sha256[:16]>-<filename>``;
2. the manual dir, ``<manual_dir>/<filename>`` (used where it is; an unverified manual file,
   one with no published checksum, comes from there only: `catalog.download.manual`);
3. local sources: mirror directories (``<dir>/<host>/<path of the URL>``), ``file://`` URLs,
   never copied: hard-linked into the cache where the file systems allow, else read in place;
4. unless offline, remote sources in rounds (user mirrors, then the file's url and mirrors),
   resuming interrupted transfers and retrying transient failures with backoff.

One process fetches a file while the others wait on its lock and then reuse it; the files of
a dataset are fetched by a bounded thread pool. When nothing delivers, the error lists every
source tried and why each failed, and says where to put the file by hand (its ``summary``
says it in one line: see :mod:`catalog.download.report`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from types import TracebackType

import requests

from catalog._util.hashing import Digest
from catalog.download.cache import EXTRACTED_DIR, Cache, CachedFile, cache_path
from catalog.download.config import DownloadConfig, resolve_config
from catalog.download.deadline import DEFAULT_MIN_RATE, Deadline, DeadlineExceeded
from catalog.download.extract import extract
from catalog.download.http import fetch, new_session
from catalog.download.local_tree import file_digest, tree_digest
from catalog.download.manual import by_hand_error, manual_file, unverified_note
from catalog.download.mirrors import Source, local_miss, sources
from catalog.download.progress import Progress
from catalog.download.report import Tried, combined_error, download_error, offline_error
from catalog.download.resource import Failure, Resource, verify
from catalog.download.retry import Backoff
from catalog.errors import CatalogError, ChecksumError, DownloadError, SpecError, StorageError
from catalog.storage.diskspace import disk_full, require_free

__all__ = ["DownloadManager"]


class DownloadManager:
    """Fetches files into the download cache as ``config`` says; use it as a context manager.

    ``sleep`` (seconds -> None), ``clock`` (-> seconds, monotonic) and ``rng`` replace the
    wall clock and the jitter in tests.

    >>> config = DownloadConfig(download_dir="/data/downloads")
    >>> with DownloadManager(config) as dm:  # doctest: +SKIP
    ...     files = dm.download_all({"train": Resource((url,), size, sha256, "train.gz")})
    >>> files["train"].path  # doctest: +SKIP
    """

    def __init__(
        self,
        config: DownloadConfig | None = None,
        *,
        sleep: Callable[[float], object] | None = None,
        rng: random.Random | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        config = resolve_config(config)
        if config.download_dir is None or config.manual_dir is None:  # resolve_config sets them
            raise ValueError("DownloadManager needs a resolved DownloadConfig")
        self.config = config
        self.download_dir: Path = config.download_dir
        self.manual_dir: Path = config.manual_dir
        self.mirrors: tuple[str, ...] = config.mirrors or ()
        self.offline = bool(config.offline)
        self.cache = Cache(self.download_dir)
        self.progress = Progress(config.progress)
        self._backoff = Backoff(config.backoff, config.max_backoff, rng or random.Random())
        self._cancelled = threading.Event()
        # The default wait ends at once when the run is interrupted (Ctrl-C).
        self._sleep = sleep if sleep is not None else self._cancelled.wait
        self._clock = clock if clock is not None else time.monotonic
        self._session: requests.Session | None = None
        self._session_lock = threading.Lock()

    def __enter__(self) -> DownloadManager:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP session (a later download opens a new one)."""
        with self._session_lock:
            if self._session is not None:
                self._session.close()
                self._session = None

    def download_all(self, resources: Mapping[str, Resource]) -> dict[str, CachedFile]:
        """Fetch every resource, several at once; return name -> verified file.

        Resources with the same content are fetched once (from all their URLs). Every file
        is attempted; the error then names all that failed. A failed run leaves the download
        dir as it found it apart from complete, verified files (and the part files of
        interrupted transfers, which the next run resumes): no lock, no empty folder.
        """
        created = not self.download_dir.exists()
        try:
            return self._download_all(resources)
        except BaseException:
            self._tidy(created)
            raise

    def _tidy(self, created: bool) -> None:
        """Remove the folders this run made and left empty."""
        folders = [self.cache.meta, *([self.download_dir] if created else [])]
        for folder in folders:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty

    def _download_all(self, resources: Mapping[str, Resource]) -> dict[str, CachedFile]:
        unique: dict[str, Resource] = {}
        for r in resources.values():
            key = self.cache.key(r)
            if key in unique:
                urls = tuple(dict.fromkeys((*unique[key].urls, *r.urls)))
                r = dataclasses.replace(unique[key], urls=urls)
            unique[key] = r
        done: dict[str, CachedFile] = {}
        failed: dict[str, CatalogError] = {}
        workers = min(self.config.max_workers, len(unique))
        if workers <= 1:
            for key, r in unique.items():
                try:
                    done[key] = self.download(r)
                except CatalogError as error:
                    failed[key] = error
        else:
            with ThreadPoolExecutor(workers, thread_name_prefix="catalog-download") as pool:
                futures = {pool.submit(self.download, r): key for key, r in unique.items()}
                try:
                    for future in as_completed(futures):
                        try:
                            done[futures[future]] = future.result()
                        except CatalogError as error:
                            failed[futures[future]] = error
                except BaseException:  # Ctrl-C or a local error (disk full): stop the others
                    self._cancelled.set()
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise
        if failed:
            raise combined_error([failed[key] for key in unique if key in failed], len(unique))
        return {name: done[self.cache.key(r)] for name, r in resources.items()}

    def download(self, resource: Resource) -> CachedFile:
        """The verified file of ``resource``, fetched only if no cache or local copy has it."""
        file = self._download(resource)
        return dataclasses.replace(file, max_extracted_size=resource.max_extracted_size)

    def _download(self, resource: Resource) -> CachedFile:
        if resource.manual:  # no checksum anybody published: measured where the user put it
            measured = manual_file(resource, self.manual_dir)
            self.progress.note(unverified_note(measured))
            return measured
        if not resource.registered and not self.config.register_checksums:
            raise SpecError(
                f"no size and sha256 registered for {resource.filename}; a builder's author "
                "registers them with --register-checksums"
            )
        if self.config.register_checksums and resource.registered:
            hit = self.cache.lookup(resource, on_corrupt=self.progress.note)
            if hit is not None:
                return hit
            # Fetch the bytes as they are now: new or changed files get registered.
            resource = dataclasses.replace(resource, size=None, sha256=None)
        if self.offline and not resource.registered and not resource.in_place:
            # a file no checksum names (recorded when fetched): the bytes fetched last time
            resource = self.cache.last_fetched(resource) or resource
        self.download_dir.mkdir(parents=True, exist_ok=True)
        tried: Tried = []
        on_wait = self._waiting_note(resource)
        with self.cache.locked(resource, on_wait=on_wait, cancelled=self._cancelled):
            candidates = sources(resource.urls, self.mirrors)
            if resource.in_place:  # the user's own file or folder: read where it is
                found = self._in_place(candidates, resource, tried)
                if found is None:
                    where, why = tried[-1] if tried else (resource.filename, Failure("not found"))
                    kind = ChecksumError if why.checksum else DownloadError
                    raise kind(f"{where}: {why.reason}")
            else:
                found = (
                    self.cache.lookup(resource, on_corrupt=self.progress.note)
                    or self._from_manual_dir(resource, tried)
                    or self._from_local(candidates, resource, tried)
                )
            if found is not None:
                return found
            manual = list(tried)  # what the manual dir held, if anything
            try:
                if self.offline:
                    cached = (
                        cache_path(resource, self.download_dir) if resource.registered else None
                    )
                    manual_path = self.manual_dir / resource.filename
                    raise offline_error(resource, tried, manual_path, cached)
                remote = [s.where for s in candidates if s.path is None]
                return self._from_network(resource, remote, tried)
            except (DownloadError, StorageError) as error:  # no space for it, a login page...
                if not resource.by_hand:
                    raise
                raise by_hand_error(resource, self.manual_dir, manual, error) from None

    def extract(self, file: CachedFile) -> Path:
        """Extract an archive once, into ``<download_dir>/extracted/<sha256[:16]>-<name>/``,
        within the file's ``max_extracted_size`` (else catalog's default limit). A folder
        download is its own extracted folder."""
        if file.path.is_dir():
            return file.path
        return extract(
            file.path,
            self.download_dir / EXTRACTED_DIR,
            name=file.filename,
            sha256=file.sha256,
            max_size=file.max_extracted_size,
        )

    # The sources, in order.

    def _from_manual_dir(self, resource: Resource, tried: Tried) -> CachedFile | None:
        path = self.manual_dir / resource.filename
        if path.is_dir():
            reason = "is a directory; expected the downloaded file itself at this path"
            tried.append((f"{path} (manual dir)", Failure(reason)))
            return None
        if not path.exists():
            return None
        try:
            digest = _stable_digest(path)
            verify(resource, digest, remote=False)
        except OSError as error:  # a FIFO or a device is refused before it is opened
            reason = f"{error.strerror or error}; expected the downloaded file itself here"
            tried.append((f"{path} (manual dir)", Failure(reason)))
            return None
        except Failure as failure:
            tried.append((f"{path} (manual dir)", failure))
            return None
        self.progress.note(f"using {resource.filename} from the manual dir: {path}")
        return CachedFile(
            path, resource.filename, digest.size, digest.sha256, str(path), stamp=digest.stamp
        )

    def _from_local(
        self, candidates: list[Source], resource: Resource, tried: Tried
    ) -> CachedFile | None:
        for source in candidates:
            if source.path is None:
                continue
            if not source.path.is_file():
                tried.append((source.where, Failure(local_miss(source))))
            elif (found := self._use_local(source.path, resource, tried)) is not None:
                return found
        return None

    def _in_place(
        self, candidates: list[Source], resource: Resource, tried: Tried
    ) -> CachedFile | None:
        """The user's own file or folder its ``file://`` URL names, verified (a folder by its
        manifest's digest, `catalog.download.local_tree`), read where it is."""
        for source in candidates:
            if source.path is None:
                continue
            if not source.path.exists():
                tried.append((source.where, Failure("not found")))
                continue
            what = "folder" if source.path.is_dir() else "file"
            try:
                digest = (tree_digest if what == "folder" else file_digest)(source.path)
                verify(resource, digest, remote=False)
            except Failure as failure:
                if failure.checksum:
                    failure.reason = (
                        f"the {what} changed since its size and sha256 were recorded "
                        f"({failure}); prepare it again from its path to record it anew"
                    )
                tried.append((source.where, failure))
                continue
            return CachedFile(
                source.path, resource.filename, digest.size, digest.sha256, str(source.path),
                stamp=digest.stamp,
            )  # fmt: skip
        return None

    def _use_local(self, path: Path, resource: Resource, tried: Tried) -> CachedFile | None:
        """A local file (a mirror dir's, a file:// URL's), verified, never copied: hard-linked
        into the cache where the file systems allow (the cache's record of its inode, size, mtime
        and ctime then catches a later change to the mirror file), else read where it is (and
        hashed again whenever it is used, as the manual dir's files are)."""
        try:
            linked = self._link(path, resource)
            if linked is not None:
                return linked
            digest = _stable_digest(path)
            verify(resource, digest, remote=False)
        except Failure as failure:
            tried.append((str(path), failure))
            return None
        self.progress.note(f"using {resource.filename} where it is: {path}")
        return CachedFile(
            path, resource.filename, digest.size, digest.sha256, str(path), stamp=digest.stamp
        )

    def _link(self, path: Path, resource: Resource) -> CachedFile | None:
        """Hard-link `path` into the cache if it holds the right bytes; None if no link can be
        made here (another file system, no permission): then the file is read in place."""
        part = self.cache.new_part(resource)
        try:
            os.link(path, part)
        except OSError:
            return None
        try:
            digest = _stable_digest(part)
            verify(resource, digest, remote=False)
            file = self.cache.commit(part, resource, digest, str(path))
        finally:
            part.unlink(missing_ok=True)
        self.progress.note(f"using {resource.filename} from {path} (linked into the cache)")
        return file

    def _from_network(self, resource: Resource, urls: list[str], tried: Tried) -> CachedFile:
        last: dict[str, Failure] = {}
        attempts: Counter[str] = Counter()
        pending = list(urls)
        part = self.cache.part_path(resource)
        deadline = Deadline(
            size=resource.size,
            start=part.stat().st_size if part.is_file() and resource.registered else 0,
            min_rate=self.config.min_rate or DEFAULT_MIN_RATE,
            clock=self._clock,
            stall_seconds=self.config.read_timeout,
        )
        try:
            for round_ in range(self.config.retries + 1):
                if round_:
                    hints = [h for u in pending if (h := last[u].retry_after) is not None]
                    wait = self._backoff.delay(round_ - 1, max(hints) if hints else None)
                    wait = min(wait, max(deadline.remaining, 0.0))
                    self.progress.note(f"{resource.filename}: trying again in {wait:.1f} s")
                    self._sleep(wait)
                    if self._cancelled.is_set():
                        raise DownloadError(f"download of {resource.filename} cancelled")
                for url in list(pending):
                    try:
                        return self._fetch(url, resource, deadline)
                    except DeadlineExceeded:
                        raise
                    except Failure as failure:
                        last[url], attempts[url] = failure, attempts[url] + 1
                        if failure.transient:  # final failures are all in the error at the end
                            self.progress.note(f"{resource.filename}: {url}: {failure.reason}")
                        if not failure.transient or (failure.unanswered and attempts[url] >= 2):
                            pending.remove(url)
                if not pending:
                    break
        except DeadlineExceeded as failure:
            last.pop(failure.url, None)
            tried.extend(self._tried(last, attempts))
            tried.append((failure.url, failure))
            raise download_error(resource, tried, self.manual_dir / resource.filename) from None
        tried.extend(self._tried(last, attempts))
        raise download_error(resource, tried, self.manual_dir / resource.filename)

    @staticmethod
    def _tried(last: dict[str, Failure], attempts: Counter[str]) -> Tried:
        for url, why in last.items():
            if attempts[url] > 1:
                why.reason += f" ({attempts[url]} attempts)"
        return list(last.items())

    def _fetch(self, url: str, resource: Resource, deadline: Deadline) -> CachedFile:
        """One attempt at ``url``: resume the part file, verify, move into the cache."""
        part = self.cache.part_path(resource)
        part.parent.mkdir(parents=True, exist_ok=True)
        held = part.is_file() and resource.registered
        start = part.stat().st_size if held else 0
        # A part file as long as the file (never moved into the cache) is complete. Only one
        # that exists: a registered empty file (size 0) has no part file until it is fetched.
        if held and resource.size is not None and start >= resource.size:
            digest = Digest.of_file(part)
            try:
                verify(resource, digest)
                return self.cache.commit(part, resource, digest, url)
            except Failure:
                part.unlink()
                start = 0
        deadline.check(url, start)
        if resource.size is not None:
            require_free(part.parent, resource.size - start, f"downloading {resource.filename}")
        bar = self.progress.transfer(
            resource.filename, resource.size, url, start=start, deadline=deadline.describe()
        )
        # Never wait past the deadline: the next check then reports it.
        left = max(deadline.remaining, 0.1)
        timeout = (min(self.config.connect_timeout, left), min(self.config.read_timeout, left))
        try:
            digest, body_start = fetch(
                self._get_session(), url, part, resource,
                timeout=timeout, bar=bar, cancelled=self._cancelled, deadline=deadline,
            )  # fmt: skip
        except Failure as failure:
            if failure.checksum:
                part.unlink(missing_ok=True)
            raise
        except OSError as error:  # local: the cache's disk, not the URL
            full = disk_full(error, self.download_dir, f"downloading {resource.filename}")
            if full is None:
                raise
            # Nothing to resume into on a full disk: give its bytes back, keep nothing half.
            part.unlink(missing_ok=True)
            raise full from None
        finally:
            bar.close()
        try:
            verify(resource, digest)
        except Failure as failure:
            part.unlink(missing_ok=True)  # wrong bytes are never kept, not even to resume
            if body_start and failure.checksum:  # the older bytes may be the wrong ones
                failure.reason += f" after resuming at byte {body_start}; starting over"
                failure.transient = True
            raise
        return self.cache.commit(part, resource, digest, url)

    def _get_session(self) -> requests.Session:
        with self._session_lock:
            if self._session is None:
                self._session = new_session(self.config.max_workers)
            return self._session

    def _waiting_note(self, resource: Resource) -> Callable[[str], None]:
        def note(holder: str) -> None:
            self.progress.note(
                f"waiting for another process downloading {resource.filename}: {holder}"
            )

        return note


def _stable_digest(path: Path) -> Digest:
    """The digest of `path`, or Failure if the file changed while it was read."""
    digest = Digest.of_file(path)
    if digest.stamp is None:
        raise Failure("the file changed while it was read; try again once it is complete")
    return digest
