"""An image folder's channels and encoding, decided from what its images are.

The channels are the dataset's, chosen explicitly: ``channels`` when the user gives them
(``--channels``), else colour when colour images (3 and 4 channels together) are at least as
many as gray ones (then 4 when more of them have alpha than not), else gray, counted over up to
`InferOptions.sample` files spread over the folder. An image with other channels is converted on
the way in (`catalog.formats.images.image_files`: decoded, converted as Pillow converts, re-encoded
losslessly); the spec's description records how many were, and a note says so. One RGBA PNG no
longer makes a folder of RGB JPEGs four channels.

The encoding the feature states is what the files are: ``jpeg`` when every image looked at is a
JPEG (and there is no alpha), else ``png``. Files are stored byte for byte either way, so the
feature also records what is stored (`catalog.features.Image` ``files``, which ``catalog info``
shows): every file's format, told from its signature (its first bytes; the files are hashed
whole for the download record anyway), and the files re-encoded (as PNG) in place of being kept:
those of the images looked at whose channels differ and do not widen to the dataset's (gray or
palette files for colour decode as colour from their own bytes), and any file that is neither
PNG nor JPEG.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from catalog.errors import SourceFormatError
from catalog.features import pixel_budget
from catalog.features.image import DEEP_MODES, deep_image

__all__ = ["FolderImages", "folder_images"]

_GRAY = frozenset({"1", "L"})
_ALPHA = frozenset({"RGBA", "LA", "PA"})


@dataclass(frozen=True)
class FolderImages:
    """What an image folder's images are: the `channels` chosen, the `encoding` the files
    have, and `converted`, ``{channels: files}`` of the images looked at that differ."""

    channels: int
    encoding: str
    converted: dict[int, int]
    looked_at: int
    #: ``{"jpeg": n, "png": n, "reencoded": n}``: how the files are stored (zero counts left out)
    files: dict[str, int] = field(default_factory=dict)

    def record(self) -> str:
        """The conversion in words, for the description ("" when none)."""
        if not self.converted:
            return ""
        parts = ", ".join(f"{n} with {c}" for c, n in sorted(self.converted.items()))
        return (
            f"; images are stored with {self.channels} channel(s): of {self.looked_at} looked "
            f"at, {parts} converted"
        )


def _signature(file: Path) -> str:
    """``png``, ``jpeg`` or ``other``, from a file's first bytes."""
    with file.open("rb") as f:
        head = f.read(8)
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    return "jpeg" if head.startswith(b"\xff\xd8\xff") else "other"


def _channels_of(file: Path) -> tuple[int, str, str]:
    try:  # the header only, within the pixel budget
        with pixel_budget.open_image(file.read_bytes(), str(file)) as img:
            mode, fmt, info = img.mode, img.format, img.info
            deep = deep_image(img) if mode in DEEP_MODES else None
    except pixel_budget.OverBudgetError:
        raise
    except (SourceFormatError, OSError) as error:
        raise SourceFormatError(f"{file}: not an image Pillow can read ({error})") from None
    if deep is not None:
        raise SourceFormatError(f"{file}: {deep}")
    if mode in _ALPHA or (mode == "P" and "transparency" in info):
        return 4, fmt or "", mode
    return (1 if mode in _GRAY else 3), fmt or "", mode


def _most(counts: Counter[int]) -> int:
    """Colour (3 or 4) when colour images are at least as many as gray ones, counted
    together (13 colour images of 25, some with alpha, are a colour folder); then 4 when
    more have alpha than not. Else gray."""
    colour = counts[3] + counts[4]
    if colour and colour >= counts[1]:
        return 4 if counts[4] > counts[3] else 3
    return 1


def folder_images(files: list[Path], sample: int, channels: int | None = None) -> FolderImages:
    """The `FolderImages` of `files` (see the module docstring)."""
    step = max(1, len(files) // sample)
    chosen = files[::step][:sample]
    seen = [_channels_of(f) for f in chosen]
    counts = Counter(c for c, _, _ in seen)
    if channels is None:
        channels = _most(counts)
    formats = {fmt for _, fmt, _ in seen}
    encoding = "jpeg" if formats <= {"JPEG", "MPO"} and channels != 4 else "png"
    converted = {c: n for c, n in counts.items() if c != channels}
    # files with fewer channels (and palette files for colour) widen to the dataset's
    # (catalog.features.Image): kept as they are; the others are converted and re-encoded
    refused = {
        f
        for f, (c, _, mode) in zip(chosen, seen, strict=True)
        if c > channels and not (mode == "P" and channels == 3)
    }
    stored = Counter(
        "reencoded" if f in refused or (kind := _signature(f)) == "other" else kind for f in files
    )
    return FolderImages(channels, encoding, converted, len(chosen), dict(sorted(stored.items())))
