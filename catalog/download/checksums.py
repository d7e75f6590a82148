"""Checksums as data: the checksums.tsv files that record each download's size and sha256, and
the names files are kept under (by content, by URL). Hashing itself is `catalog._util.hashing`.

A builder's ``checksums.tsv`` holds one line per download, ``url<TAB>size<TAB>sha256<TAB>filename``
(the form of the public checksum registries); it is only ever merged, never rewritten from
scratch.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlparse

from catalog._util.hashing import SHA256_HEX
from catalog.errors import SpecError

__all__ = ["content_name", "read_checksums", "url_filename", "write_checksums"]


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
