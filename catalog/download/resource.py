"""What a file must be (:class:`Resource`), and why a source did not deliver it (:class:`Failure`).

Every file is checked against its registered size and sha256 wherever it comes from (the
network, a mirror directory, the manual dir, the cache): :func:`verify` never skips a check.
A body that is an HTML page where a binary was expected is named as such, because a rate-limit
or login page served with status 200 is the most common way a download goes wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog._util.hashing import SHA256_HEX, Digest
from catalog.errors import SpecError

__all__ = ["Failure", "Resource", "looks_like_html", "verify"]

_HTML_START = (b"<!doctype html", b"<html", b"<head", b"<?xml version")
_HTML_SUFFIXES = (".html", ".htm", ".xhtml")


@dataclass(frozen=True)
class Resource:
    """One file a dataset needs: where to get it and the exact bytes to expect.

    ``size`` and ``sha256`` are None only while a builder author registers them
    (``--register-checksums``); any other download of such a file is refused.
    """

    urls: tuple[str, ...]  # tried in order: the builder's url first, then its mirrors
    size: int | None  # bytes
    sha256: str | None  # lowercase hex
    filename: str  # original file name, e.g. "train-images-idx3-ubyte.gz"
    #: The most the file may extract to, when it is an archive (None: catalog's default limit).
    max_extracted_size: int | None = None
    #: The user's own local file or folder (a ``file://`` URL; `catalog prepare PATH`): read
    #: where it is, never linked into the cache (errors name it), and hashed each time it is
    #: used (a folder by its manifest, `catalog.download.local_tree`).
    in_place: bool = False
    #: For a file whose size is not known (a Croissant file fetched by URL): the most bytes
    #: read before the transfer fails (None: no limit but the size, when known).
    max_size: int | None = None
    #: An unverified manual file or folder (a builder's ``manual:``): no published checksum,
    #: taken from the manual dir only, its size and sha256 measured there
    #: (`catalog.download.manual`); ``size`` and ``sha256`` stay None.
    manual: bool = False
    #: Downloaded by hand from its URL (a login, an agreement) into the manual dir, checked
    #: against its registered size and sha256 (builder.yaml's ``manual: true``): when it is
    #: in neither the manual dir nor the cache, `catalog.download.manual.check_placed` says
    #: where to put it before anything is fetched.
    by_hand: bool = False

    def __post_init__(self) -> None:
        urls: object = self.urls  # typed as a tuple, but a caller may pass one string
        if isinstance(urls, str):
            raise SpecError(f"{self.filename}: urls must be a tuple of URLs, not one string")
        object.__setattr__(self, "urls", tuple(self.urls))  # a list works too, and stays hashable
        if (self.size is None) != (self.sha256 is None):
            raise SpecError(f"{self.filename}: give both size and sha256, or neither")
        if self.size is not None and self.size < 0:
            raise SpecError(f"{self.filename}: size must be >= 0, got {self.size}")
        if self.sha256 is not None and not SHA256_HEX.fullmatch(self.sha256):
            raise SpecError(f"{self.filename}: sha256 must be 64 lowercase hex digits")
        if self.manual and self.sha256 is not None:
            raise SpecError(f"{self.filename}: a manual file with no checksum has no sha256")
        if self.filename in ("", ".", "..") or any(c in self.filename for c in "/\\\0"):
            raise SpecError(f"filename must be a plain file name, got {self.filename!r}")

    @property
    def registered(self) -> bool:
        """Whether the expected size and sha256 are known."""
        return self.sha256 is not None


class Failure(Exception):
    """Why one source did not deliver a file.

    ``transient``: trying the same URL again later may work (connection errors, timeouts,
    interrupted transfers, HTTP 408/429/5xx); ``retry_after``: seconds the server asked for.
    ``checksum``: the source delivered complete bytes that differ from the registered ones.
    ``unanswered``: the request timed out before any response, or the response stalled (a URL
    that does that is tried twice at most: a server that never answers, or drips, costs two
    timeouts, not one per round).
    """

    def __init__(
        self,
        reason: str,
        *,
        transient: bool = False,
        checksum: bool = False,
        retry_after: float | None = None,
        unanswered: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unanswered = unanswered
        self.transient = transient
        self.checksum = checksum
        self.retry_after = retry_after


def looks_like_html(head: bytes) -> bool:
    """Whether the first bytes of a body look like an HTML page."""
    return head.lstrip().lower().startswith(_HTML_START)


def verify(resource: Resource, digest: Digest, *, remote: bool = True) -> None:
    """Raise :class:`Failure` unless ``digest`` is of exactly the bytes ``resource`` expects.

    A registered resource must match size and sha256; any mismatching body that looks like an
    HTML page, and for an unregistered one any HTML page (unless the file is one), is
    reported as such.
    """
    size_ok = resource.size is None or digest.size == resource.size
    sha_ok = size_ok and (resource.sha256 is None or digest.sha256 == resource.sha256)
    expected_html = resource.filename.lower().endswith(_HTML_SUFFIXES)
    suspect = not sha_ok or not resource.registered
    if suspect and not expected_html and looks_like_html(digest.head):
        who = "the server sent" if remote else "the file is"
        raise Failure(
            f"{who} an HTML page instead of the file (often a rate limit, login or error page)"
        )
    if not size_ok:
        raise Failure(
            f"size mismatch: expected {resource.size} bytes, got {digest.size}", checksum=True
        )
    if not sha_ok:
        raise Failure(
            f"sha256 mismatch: expected {resource.sha256}, got {digest.sha256}", checksum=True
        )
