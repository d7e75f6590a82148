"""Size and sha256 of streams and files, computed in one pass over fixed-size chunks.

>>> d = Digest()
>>> d.update(b"abc")
>>> d.size, d.sha256[:16]
(3, 'ba7816bf8f01cfea')
"""

from __future__ import annotations

import hashlib
import os
import re

__all__ = ["CHUNK_SIZE", "SHA256_HEX", "Digest", "sha256_file"]

CHUNK_SIZE = 1 << 20
#: A sha256 as checksums.tsv and the download records write it.
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class Digest:
    """Running size, sha256 and first bytes (``head``, to recognise an HTML page) of a stream."""

    HEAD_SIZE = 512

    def __init__(self) -> None:
        self._hasher = hashlib.sha256()
        self._known: str | None = None
        self.size = 0
        self.head = b""

    def update(self, chunk: bytes) -> None:
        self._hasher.update(chunk)
        self.size += len(chunk)
        if len(self.head) < self.HEAD_SIZE:
            self.head += chunk[: self.HEAD_SIZE - len(self.head)]

    @property
    def sha256(self) -> str:
        """Lowercase hex sha256 of everything so far."""
        return self._known if self._known is not None else self._hasher.hexdigest()

    @classmethod
    def known(cls, size: int, sha256: str) -> Digest:
        """A finished digest of bytes hashed before, whose size and sha256 are known."""
        digest = cls()
        digest.size, digest._known = size, sha256
        return digest

    @classmethod
    def of_file(cls, path: str | os.PathLike[str]) -> Digest:
        """The digest of a whole file."""
        digest = cls()
        with open(path, "rb") as f:
            while chunk := f.read(CHUNK_SIZE):
                digest.update(chunk)
        return digest


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Lowercase hex sha256 of a file."""
    return Digest.of_file(path).sha256
