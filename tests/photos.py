"""Photo-like JPEG files for the tests of the photo path (decode, resize, crops)."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image as PILImage


def photo(height: int, width: int, seed: int = 0, quality: int = 90, **save: Any) -> bytes:
    """A photo-like JPEG: smooth waves plus noise (as bench_pipeline's flowers)."""
    rng = np.random.default_rng(seed)
    r, c = np.ogrid[:height, :width]
    channels = [127 + 90 * np.sin(r / (20 + 9 * k) + c / (30 + 7 * k) + k) for k in range(3)]
    pixels = np.stack(channels, axis=-1) + rng.normal(0, 12, (height, width, 3))
    out = io.BytesIO()
    img = PILImage.fromarray(pixels.clip(0, 255).astype(np.uint8))
    img.save(out, format="JPEG", quality=quality, **save)
    return out.getvalue()
