"""An image folder's channels and encoding, decided from what its images are.

The channels are the dataset's, chosen explicitly: ``channels`` when the user gives them
(``--channels``), else what most images have (1 gray, 3 colour, 4 with alpha; a tie goes to
more channels), counted over up to `InferOptions.sample` files spread over the folder. An
image with other channels is converted on the way in (`catalog.formats.image_files`: decoded,
converted as Pillow converts, re-encoded losslessly); the spec's description records how many
were, and a note says so. One RGBA PNG no longer makes a folder of RGB JPEGs four channels.

The encoding the feature states is what the files are: ``jpeg`` when every image looked at is
a JPEG (and there is no alpha), else ``png``. Files are stored byte for byte either way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from catalog.errors import SourceFormatError
from catalog.features import pixel_budget

__all__ = ["FolderImages", "folder_images"]

_GRAY = frozenset({"1", "L", "I;16", "I", "F"})
_ALPHA = frozenset({"RGBA", "LA", "PA"})


@dataclass(frozen=True)
class FolderImages:
    """What an image folder's images are: the `channels` chosen, the `encoding` the files
    have, and `converted`, ``{channels: files}`` of the images looked at that differ."""

    channels: int
    encoding: str
    converted: dict[int, int]
    looked_at: int

    def record(self) -> str:
        """The conversion in words, for the description ("" when none)."""
        if not self.converted:
            return ""
        parts = ", ".join(f"{n} with {c}" for c, n in sorted(self.converted.items()))
        return (
            f"; images are stored with {self.channels} channel(s): of {self.looked_at} looked "
            f"at, {parts} converted"
        )


def _channels_of(file: Path) -> tuple[int, str]:
    try:  # the header only, within the pixel budget
        with pixel_budget.open_image(file.read_bytes(), str(file)) as img:
            mode, fmt, info = img.mode, img.format, img.info
    except pixel_budget.OverBudgetError:
        raise
    except (SourceFormatError, OSError) as error:
        raise SourceFormatError(f"{file}: not an image Pillow can read ({error})") from None
    if mode in _ALPHA or (mode == "P" and "transparency" in info):
        return 4, fmt or ""
    return (1 if mode in _GRAY else 3), fmt or ""


def folder_images(files: list[Path], sample: int, channels: int | None = None) -> FolderImages:
    """The `FolderImages` of `files` (see the module docstring)."""
    step = max(1, len(files) // sample)
    chosen = files[::step][:sample]
    seen = [_channels_of(f) for f in chosen]
    counts = Counter(c for c, _ in seen)
    if channels is None:
        channels = max(counts, key=lambda c: (counts[c], c))
    formats = {fmt for _, fmt in seen}
    encoding = "jpeg" if formats <= {"JPEG", "MPO"} and channels != 4 else "png"
    converted = {c: n for c, n in counts.items() if c != channels}
    return FolderImages(channels, encoding, converted, len(chosen))
