"""The one seam to the network: a requests Session, and fetching one URL into a part file.

:func:`fetch` resumes: when the part file already holds the first N bytes it asks for the
rest with ``Range: bytes=N-``; a server that ignores the range (status 200) is read from the
start again, one that refuses it (416) makes the next attempt start over. Every way one URL
can fail becomes a :class:`~catalog.download.resource.Failure` with a one-line reason.

This package is the only part of catalog that imports ``requests``.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from pathlib import Path

import requests
import urllib3

from catalog._util.hashing import CHUNK_SIZE, Digest
from catalog._version import __version__
from catalog.download.deadline import Deadline
from catalog.download.progress import Bar
from catalog.download.resource import Failure, Resource, looks_like_html
from catalog.download.retry import is_transient_status, parse_retry_after
from catalog.errors import DownloadError

__all__ = ["USER_AGENT", "fetch", "new_session"]

USER_AGENT = f"catalog/{__version__} (dataset downloader; python-requests/{requests.__version__})"

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


def new_session(pool_size: int = 10) -> requests.Session:
    """A Session naming catalog, never asking for compressed bytes, with a connection pool
    large enough for ``pool_size`` parallel downloads. Proxies (HTTP(S)_PROXY, NO_PROXY) come
    from the environment, as requests reads them on every request."""
    session = requests.Session()
    session.headers["User-Agent"] = USER_AGENT
    # The registered sha256 is of the bytes as stored: never let a server compress them.
    session.headers["Accept-Encoding"] = "identity"
    adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=pool_size)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def fetch(
    session: requests.Session,
    url: str,
    part: Path,
    resource: Resource,
    *,
    timeout: tuple[float, float],
    bar: Bar,
    cancelled: threading.Event,
    deadline: Deadline,
) -> tuple[Digest, int]:
    """Make ``part`` hold the whole body of ``url``, resuming from the bytes it already holds.

    Returns the digest of the whole part file (verification is the caller's) and the byte
    offset this response started at (0 unless resumed). Raises :class:`Failure` (a
    :class:`~catalog.download.deadline.DeadlineExceeded` once the file's deadline passes,
    checked as every chunk arrives); the part file keeps whatever was received, for the next
    attempt. A body of the registered size is complete: a server that then keeps the
    connection open is not waited for.
    """
    start = part.stat().st_size if part.is_file() and resource.registered else 0
    headers = {"Range": f"bytes={start}-"} if start else {}
    try:
        response = session.get(url, stream=True, timeout=timeout, headers=headers)
    except requests.RequestException as exc:
        raise _request_failure(exc) from exc
    with response:
        start = _check_status(response, start, resource, part)
        if resource.size == 0:  # nothing is read for it: a body it announces is not empty
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length):
                raise _oversized(resource, response, int(length), start)
        digest = Digest.of_file(part) if start else Digest()
        deadline.begin()
        with open(part, "ab" if start else "wb") as out:
            try:
                # read1: whatever has arrived, so a transfer that stalls and times out keeps
                # every byte received before it (a resume then starts exactly there).
                while digest.size != resource.size and (
                    chunk := response.raw.read1(CHUNK_SIZE, decode_content=False)
                ):
                    if cancelled.is_set():
                        raise DownloadError(f"download of {url} cancelled")
                    if resource.size is not None and digest.size + len(chunk) > resource.size:
                        raise _oversized(resource, response, digest.size + len(chunk), start)
                    if (
                        resource.max_size is not None
                        and digest.size + len(chunk) > resource.max_size
                    ):
                        raise Failure(f"larger than {resource.max_size} bytes, the most it may be")
                    out.write(chunk)  # a local OSError (disk full) propagates: not the URL's
                    digest.update(chunk)
                    bar.update(len(chunk))
                    deadline.add(len(chunk), url, digest.size)
            except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
                raise Failure(
                    f"transfer interrupted after {digest.size} bytes: {_short(_innermost(exc))}",
                    transient=True,
                ) from exc
            finally:
                out.flush()
                os.fsync(out.fileno())
        if resource.size is not None and digest.size < resource.size:
            _check_short(response, digest, start, resource)
    return digest, start


def _check_status(response: requests.Response, start: int, resource: Resource, part: Path) -> int:
    """Raise :class:`Failure` for a response that brings no usable body; return the byte
    offset the body starts at (``start`` for a range answered with 206, else 0)."""
    status = response.status_code
    if start and status == 206:
        match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
        if match is None or int(match[1]) != start:
            part.unlink(missing_ok=True)
            raise Failure(
                f"asked for bytes {start}-, got Content-Range "
                f"{response.headers.get('Content-Range')!r}; starting over",
                transient=True,
            )
        if match[3] != "*" and int(match[3]) != resource.size:
            part.unlink(missing_ok=True)
            raise Failure(
                f"size mismatch: expected {resource.size} bytes, got {match[3]}", checksum=True
            )
        return start
    if start and status == 416:
        part.unlink(missing_ok=True)
        raise Failure(f"the server refused to resume at byte {start} (HTTP 416)", transient=True)
    if status == 200:
        return 0  # the whole body: also what a server that ignores Range sends
    reason = f"HTTP {status} {response.reason or ''}".strip()
    if is_transient_status(status):
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        raise Failure(reason, transient=True, retry_after=retry_after)
    raise Failure(reason if status >= 400 else f"unexpected {reason}")


def _check_short(response: requests.Response, digest: Digest, start: int, res: Resource) -> None:
    """A body that ended before ``res.size`` bytes: an interrupted transfer (transient) unless
    it was complete by its own Content-Length or is an HTML page (then the caller's check of
    the bytes reports it)."""
    length = response.headers.get("Content-Length", "")
    complete = length.isdigit() and int(length) == digest.size - start
    if not complete and not looks_like_html(digest.head):
        raise Failure(f"connection closed after {digest.size} of {res.size} bytes", transient=True)


def _oversized(resource: Resource, response: requests.Response, got: int, start: int) -> Failure:
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and start + int(length) >= got:
        got_text = str(start + int(length))
    else:
        got_text = f"at least {got}"
    return Failure(f"size mismatch: expected {resource.size} bytes, got {got_text}", checksum=True)


def _request_failure(exc: requests.RequestException) -> Failure:
    """Why a request got no response, and whether trying again later may help."""
    inner = _short(_innermost(exc))
    if isinstance(exc, requests.exceptions.ProxyError):
        # The proxy is the machine's, not the URL's: retrying a URL will not bring it back.
        return Failure(f"could not reach the proxy (HTTP(S)_PROXY): {inner}")
    if isinstance(exc, requests.exceptions.SSLError):
        return Failure(f"TLS error: {inner}")
    if isinstance(exc, requests.Timeout):
        return Failure(f"timed out: {inner}", transient=True, unanswered=True)
    if _dns_failure(exc):
        # The name did not resolve (no network, no DNS, a typo): another try in a few seconds
        # will not change that, so the next source is tried at once.
        return Failure(f"host not found (DNS: {inner})")
    if isinstance(exc, requests.ConnectionError):
        return Failure(f"connection failed: {inner}", transient=True)
    return Failure(inner)  # invalid URL, unsupported scheme, too many redirects


def _dns_failure(exc: BaseException) -> bool:
    """Whether a request failed because the host name did not resolve."""
    seen: set[int] = set()
    stack: list[object] = [exc]
    while stack:
        item = stack.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (socket.gaierror, urllib3.exceptions.NameResolutionError)):
            return True
        stack += [item.__cause__, item.__context__, getattr(item, "reason", None), *item.args]
    return False


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
