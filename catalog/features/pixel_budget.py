"""One pixel budget for every image catalog decodes, checked from the file's header before
any pixel is allocated.

A 3 KB JPEG may claim 60000x60000 pixels: decoded, that is 10 GiB. Every decoder in catalog
(the photo path's simplejpeg and OpenCV, Pillow when preparing or reading a folder, foreign
records from TFDS directories and TFRecords) asks `check` first, with the height and width
the header gives, and refuses an image over the budget with one error naming the file or
record: a SourceFormatError here (`OverBudgetError`), which callers that know more (a feature,
an example) re-raise as their own error. Pillow's own check (`PIL.Image.MAX_IMAGE_PIXELS`, a warning
over it, an error over twice it) is replaced by this one: `open_image` opens a file with
Pillow, which reads only its header, and checks it against the budget.

The budget is, in order: the ``max_pixels`` argument of the function decoding, else
``$CATALOG_MAX_IMAGE_PIXELS``, else `DEFAULT`: Pillow's own default limit, whatever a program
set `PIL.Image.MAX_IMAGE_PIXELS` to (setting it to None in Pillow does not lift catalog's).

>>> check(1000, 1000, "x.jpg")
>>> over_budget(60000, 60000, 100_000_000)
'it claims 60000x60000 pixels (3600000000), more than the 100000000 an image may have'
"""

from __future__ import annotations

import io
import os
from typing import Any

from catalog.errors import SourceFormatError

__all__ = [
    "DEFAULT",
    "PIXELS_ENV",
    "OverBudgetError",
    "check",
    "header_size",
    "max_pixels",
    "open_image",
    "over_budget",
]

PIXELS_ENV = "CATALOG_MAX_IMAGE_PIXELS"
#: Pillow's default `PIL.Image.MAX_IMAGE_PIXELS`: about a quarter gigabyte of RGB pixels.
DEFAULT = 89_478_485
_HEADER_SCAN = 1 << 20  # bytes `header_size` looks through for a JPEG's frame header


class OverBudgetError(SourceFormatError):
    """An image file claims more pixels than the budget."""


def max_pixels(limit: int | None = None) -> int:
    """The budget in pixels: `limit` when given, else ``$CATALOG_MAX_IMAGE_PIXELS``, else
    `DEFAULT`."""
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"max_pixels must be a positive number of pixels, got {limit!r}")
        return limit
    value = os.environ.get(PIXELS_ENV, "").strip().replace("_", "")
    if not value:
        return DEFAULT
    if not value.isdigit() or int(value) < 1:
        raise SourceFormatError(
            f"${PIXELS_ENV}={os.environ[PIXELS_ENV]!r} is not a positive number of pixels; "
            f"unset it for the default ({DEFAULT})"
        )
    return int(value)


def over_budget(height: int, width: int, limit: int | None = None) -> str | None:
    """Why an image of `height` x `width` pixels is refused, or None when it is within the
    budget (see `max_pixels` for `limit`)."""
    budget = max_pixels(limit)
    if height * width <= budget:
        return None
    return (
        f"it claims {height}x{width} pixels ({height * width}), more than the {budget} an "
        "image may have"
    )


def check(height: int, width: int, where: str, limit: int | None = None) -> None:
    """SourceFormatError naming `where` when `height` x `width` is over the budget."""
    reason = over_budget(height, width, limit)
    if reason is not None:
        raise OverBudgetError(f"{where}: {reason} {advice()}")


def advice() -> str:
    """What to do about an image over the budget (the end of every such message)."""
    return (
        f"(a decompression bomb?); if the image is genuine, raise ${PIXELS_ENV} "
        "(or the max_pixels argument)"
    )


def header_size(data: bytes | bytearray | memoryview) -> tuple[int, int] | None:
    """(height, width) from a PNG's IHDR or a JPEG's first SOF marker; None for other data
    or a header this does not find."""
    data = bytes(data[:_HEADER_SCAN])
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[20:24], "big"), int.from_bytes(data[16:20], "big")
    if data[:2] != b"\xff\xd8":
        return None
    pos = 2
    while pos + 9 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if 0xD0 <= marker <= 0xD9 or marker == 0x01:  # markers without a length
            pos += 2
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # start of frame
            height = int.from_bytes(data[pos + 5 : pos + 7], "big")
            return height, int.from_bytes(data[pos + 7 : pos + 9], "big")
        pos += 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
    return None


def open_image(data: bytes | bytearray | memoryview, where: str, limit: int | None = None) -> Any:
    """Pillow's image of the file `data` (only its header read), within the budget:
    SourceFormatError naming `where` when it is over it or Pillow cannot read the file."""
    from PIL import Image as PILImage  # Pillow: a core dependency, loaded when first needed

    budget = max_pixels(limit)
    size = header_size(data)
    if size is not None:
        check(*size, where, budget)
    pillow_limit = PILImage.MAX_IMAGE_PIXELS
    if pillow_limit is not None and budget > pillow_limit:
        # Pillow warns over its limit and refuses over twice it, before this check can run:
        # a budget raised on purpose raises Pillow's too (it guards nothing catalog does not)
        PILImage.MAX_IMAGE_PIXELS = budget
    try:
        img = PILImage.open(io.BytesIO(data))
    except (PILImage.DecompressionBombError, PILImage.DecompressionBombWarning) as error:
        raise OverBudgetError(f"{where}: {error} {advice()}") from None
    except Exception as error:  # Pillow raises UnidentifiedImageError, OSError, ...
        raise SourceFormatError(
            f"{where}: {len(data)} bytes that are not an image file catalog can read (PNG, "
            f"JPEG, ...): {error}"
        ) from None
    reason = over_budget(img.height, img.width, budget)
    if reason is not None:
        img.close()
        raise OverBudgetError(f"{where}: {reason} {advice()}")
    return img
