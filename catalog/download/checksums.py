"""Checksums: size and sha256 of streams and files, and the checksums.tsv files that record them.

A builder's ``checksums.tsv`` holds one line per download, ``url<TAB>size<TAB>sha256<TAB>filename``
(the form of the public checksum registries); it is only ever merged, never rewritten from
scratch. Digests are computed in one pass over fixed-size chunks.

>>> d = Digest()
>>> d.update(b"abc")
>>> d.size, d.sha256[:16]
(3, 'ba7816bf8f01cfea')
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlparse

from catalog.errors import SpecError

__all__ = [
    "CHUNK_SIZE",
    "SHA256_HEX",
    "Digest",
    "content_name",
    "read_checksums",
    "sha256_file",
    "url_filename",
    "write_checksums",
]

CHUNK_SIZE = 1 << 20
#: A sha256 as checksums.tsv and the download records write it.
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class Digest:
    """Running size, sha256 and first bytes (``head``, to recognise an HTML page) of a stream."""

    HEAD_SIZE = 512

    def __init__(self) -> None:
        self._hasher = hashlib.sha256()
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
        return self._hasher.hexdigest()

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


def content_name(sha256: str, filename: str) -> str:
    """The name that keys a file by its content: ``<sha256[:16]>-<filename>``. Downloads are
    cached, and archives extracted, under it, so the same bytes are shared everywhere."""
    return f"{sha256[:16]}-{filename}"


def url_filename(url: str) -> str:
    """The file name at the end of a URL's path ("download" when it has none)."""
    return Path(urlparse(url).path).name or "download"


def read_checksums(path: Path) -> dict[str, tuple[int, str, str]]:
    """Read checksums.tsv into ``{url: (size, sha256, filename)}``; a missing file is empty."""
    if not path.is_file():
        return {}
    table: dict[str, tuple[int, str, str]] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if (
                len(parts) not in (3, 4)
                or not parts[1].isdigit()
                or not SHA256_HEX.fullmatch(parts[2])
            ):
                raise SpecError(
                    f"{path}:{number}: expected 'url<TAB>size<TAB>sha256[<TAB>filename]', "
                    f"got {line!r}"
                )
            filename = parts[3] if len(parts) == 4 else url_filename(parts[0])
            table[parts[0]] = (int(parts[1]), parts[2], filename)
    return table


def write_checksums(path: Path, entries: Mapping[str, tuple[int, str, str]]) -> None:
    """Merge ``{url: (size, sha256, filename)}`` into checksums.tsv (``--register-checksums``).

    Entries for other URLs are kept (never dropped), lines are sorted by URL, comment lines
    stay at the top, and the file is replaced atomically.
    """
    table = {**read_checksums(path), **entries}
    text = path.read_text("utf-8") if path.is_file() else ""
    lines = [line for line in text.splitlines() if line.startswith("#")]
    lines += [f"{url}\t{size}\t{sha}\t{name}" for url, (size, sha, name) in sorted(table.items())]
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text("\n".join(lines) + "\n", "utf-8")
    temp.replace(path)
