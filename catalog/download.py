"""Download the files a dataset needs, verify their size and sha256, cache them by content.

A verified file lives at ``download_dir / f"{sha256[:16]}-{filename}"``, so the same bytes are
shared across datasets and versions, and a user can place a file there by hand. Bytes are
streamed into a hidden ``.part`` file beside it, hashed on the way, and moved into place only
once they match; nothing else is ever left in the download dir.

This is the only module of catalog that talks to the network (and imports ``requests``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import requests
import urllib3
from tqdm import tqdm

from catalog._version import __version__
from catalog.errors import ChecksumError, DownloadError, SpecError

__all__ = [
    "CHUNK_SIZE",
    "CONNECT_TIMEOUT",
    "READ_TIMEOUT",
    "USER_AGENT",
    "Resource",
    "cache_path",
    "download",
    "download_all",
]

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0  # seconds to establish a connection
READ_TIMEOUT = 60.0  # seconds without a byte before giving up on a response
CHUNK_SIZE = 1 << 20
USER_AGENT = f"catalog/{__version__}"

_SHA256 = re.compile(r"[0-9a-f]{64}")
_HTML_START = (b"<!doctype html", b"<html")
_HTML_SUFFIXES = (".html", ".htm", ".xhtml")


@dataclass(frozen=True)
class Resource:
    """One file a dataset needs: where to get it and the exact bytes to expect."""

    urls: tuple[str, ...]  # tried in order: the builder's url first, then its mirrors
    size: int  # bytes
    sha256: str  # lowercase hex
    filename: str  # original file name, e.g. "train-images-idx3-ubyte.gz"

    def __post_init__(self) -> None:
        urls: object = self.urls  # typed as a tuple, but a caller may pass one string
        if isinstance(urls, str):
            raise SpecError(f"{self.filename}: urls must be a tuple of URLs, not one string")
        object.__setattr__(self, "urls", tuple(self.urls))  # a list works too, and stays hashable
        if self.size < 0:
            raise SpecError(f"{self.filename}: size must be >= 0, got {self.size}")
        if not _SHA256.fullmatch(self.sha256):
            raise SpecError(f"{self.filename}: sha256 must be 64 lowercase hex digits")
        if self.filename in ("", ".", "..") or any(c in self.filename for c in "/\\\0"):
            raise SpecError(f"filename must be a plain file name, got {self.filename!r}")


class _Failure(Exception):
    """Why one URL did not deliver the file; ``checksum`` if it delivered wrong bytes."""

    def __init__(self, reason: str, *, checksum: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.checksum = checksum


def cache_path(resource: Resource, download_dir: Path) -> Path:
    """Where the verified file lives: ``download_dir / f"{sha256[:16]}-{filename}"``.

    Keyed by content, so the same bytes are shared across datasets and versions.
    """
    return Path(download_dir) / f"{resource.sha256[:16]}-{resource.filename}"


def download(
    resource: Resource, download_dir: Path, *, session: requests.Session | None = None
) -> Path:
    """Return the path of the verified file, downloading it only if it is not cached."""
    dest = cache_path(resource, download_dir)
    if dest.exists():
        if _matches(dest, resource):
            return dest
        logger.warning("%s does not match its size/sha256; downloading it again", dest)
        dest.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    if session is None:
        with _new_session() as own_session:
            return _download_from_urls(own_session, resource, dest)
    return _download_from_urls(session, resource, dest)


def download_all(resources: Mapping[str, Resource], download_dir: Path) -> dict[str, Path]:
    """Download every resource (one shared session, sequential for now), return name -> path."""
    with _new_session() as session:
        return {name: download(r, download_dir, session=session) for name, r in resources.items()}


def _new_session() -> requests.Session:
    session = requests.Session()
    session.headers["User-Agent"] = USER_AGENT
    # The registered sha256 is of the bytes as stored: never let a server compress them.
    session.headers["Accept-Encoding"] = "identity"
    return session


def _download_from_urls(session: requests.Session, resource: Resource, dest: Path) -> Path:
    failures: list[tuple[str, _Failure]] = []
    for url in resource.urls:
        logger.info("downloading %s from %s", resource.filename, url)
        try:
            _fetch_one(session, url, resource, dest)
        except _Failure as failure:
            logger.info("%s: %s", url, failure.reason)
            failures.append((url, failure))
        else:
            return dest
    raise _final_error(resource, dest, failures)


def _fetch_one(session: requests.Session, url: str, resource: Resource, dest: Path) -> None:
    """Download ``url`` into ``dest`` if its bytes verify; raise :class:`_Failure` if not."""
    # Hidden, unique, beside dest (same file system, so the final rename is atomic); created
    # like any file (mode 0o666 minus umask), unlike mkstemp's 0o600, so a shared cache works.
    part = dest.parent / f".{dest.name}.{secrets.token_hex(4)}.part"
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            _stream_verified(session, url, resource, out)
            out.flush()
            os.fsync(out.fileno())
        part.replace(dest)  # atomic: dest is either absent or complete and verified
    finally:
        part.unlink(missing_ok=True)  # a no-op once replaced


def _stream_verified(
    session: requests.Session, url: str, resource: Resource, out: IO[bytes]
) -> None:
    """GET ``url`` and write its body to ``out``, checking it against ``resource`` as it comes."""
    try:
        response = session.get(url, stream=True, timeout=(CONNECT_TIMEOUT, READ_TIMEOUT))
    except requests.RequestException as exc:
        raise _Failure(_describe_request_error(exc)) from exc
    with response:
        try:
            response.raise_for_status()
        except requests.HTTPError as exc:
            raise _Failure(f"HTTP {response.status_code} {response.reason}".strip()) from exc
        received, digest, head = _copy_body(response, resource, out)
    if received != resource.size:
        raise _mismatch(resource, head, f"got {received}")
    if digest != resource.sha256:
        raise _mismatch(resource, head, sha256=digest)


def _copy_body(
    response: requests.Response, resource: Resource, out: IO[bytes]
) -> tuple[int, str, bytes]:
    """Copy the body exactly as sent (never decompressed) to ``out``; stop past ``size``.

    Returns the byte count, the sha256 and the first bytes (to recognise an HTML page).
    """
    hasher, received, head = hashlib.sha256(), 0, b""
    tty = sys.stderr is not None and sys.stderr.isatty()
    with tqdm(
        total=resource.size, unit="B", unit_scale=True, desc=resource.filename, disable=not tty
    ) as bar:
        try:
            for chunk in response.raw.stream(CHUNK_SIZE, decode_content=False):
                received += len(chunk)
                if len(head) < 512:
                    head += chunk[:512]
                if received > resource.size:
                    raise _mismatch(resource, head, f"got {_announced_size(response, received)}")
                hasher.update(chunk)
                out.write(chunk)  # a local OSError (disk full) propagates: not the URL's fault
                bar.update(len(chunk))
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            short = _short(_innermost(exc))
            raise _Failure(f"transfer interrupted after {received} bytes: {short}") from exc
    return received, hasher.hexdigest(), head


def _mismatch(resource: Resource, head: bytes, got_size: str = "", *, sha256: str = "") -> _Failure:
    if head.lstrip().lower().startswith(_HTML_START) and not resource.filename.lower().endswith(
        _HTML_SUFFIXES
    ):
        return _Failure(
            "the server sent an HTML page instead of the file "
            "(often a rate limit, login or error page)"
        )
    if sha256:
        return _Failure(f"sha256 mismatch: expected {resource.sha256}, got {sha256}", checksum=True)
    return _Failure(f"size mismatch: expected {resource.size} bytes, {got_size}", checksum=True)


def _announced_size(response: requests.Response, received: int) -> str:
    """The body's size as announced by Content-Length, or "at least <received>"."""
    length = response.headers.get("Content-Length", "")
    return length if length.isdigit() and int(length) >= received else f"at least {received}"


def _final_error(
    resource: Resource, dest: Path, failures: list[tuple[str, _Failure]]
) -> DownloadError | ChecksumError:
    if not failures:
        return DownloadError(
            f"could not download {resource.filename}: no URL is registered for it.\n"
            f"Download it yourself and place it at {dest}"
        )
    lines = [f"could not download {resource.filename}:"]
    lines += [f"  {url}: {failure.reason}" for url, failure in failures]
    if all(failure.checksum for _, failure in failures):
        lines.append(
            "Every URL delivered bytes that differ from the registered size/sha256 (the file"
            " may have changed upstream). Check the URLs, or place a file with sha256"
            f" {resource.sha256} at {dest}"
        )
        return ChecksumError("\n".join(lines))
    lines.append(
        "Check the network connection (or try again later), or download the file yourself"
        f" and place it at {dest}"
    )
    return DownloadError("\n".join(lines))


def _matches(path: Path, resource: Resource) -> bool:
    """Whether the file at ``path`` has exactly the resource's size and sha256."""
    if not path.is_file() or path.stat().st_size != resource.size:
        return False
    hasher = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK_SIZE):
            hasher.update(chunk)
    return hasher.hexdigest() == resource.sha256


def _describe_request_error(exc: requests.RequestException) -> str:
    """A one-line reason for a request that got no response."""
    if isinstance(exc, requests.Timeout):
        return f"timed out: {_short(_innermost(exc))}"
    if isinstance(exc, requests.ConnectionError):
        return f"connection failed: {_short(_innermost(exc))}"
    return _short(exc)


def _innermost(exc: BaseException) -> BaseException:
    """The root cause behind requests' and urllib3's layers of wrapping."""
    seen = {id(exc)}
    while True:
        reason = getattr(exc, "reason", None)
        arg = exc.args[0] if exc.args else None
        for inner in (exc.__cause__, reason, arg, exc.__context__):
            if isinstance(inner, BaseException) and id(inner) not in seen:
                seen.add(id(inner))
                exc = inner
                break
        else:
            return exc


def _short(exc: BaseException) -> str:
    """The first line of an exception's message, without urllib3's ``<object at 0x..>:`` prefix."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = re.sub(r"^<[^>]*>:\s*", "", text)
    return text[:200] or type(exc).__name__
