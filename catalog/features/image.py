"""Image: a uint8 array of shape (height, width, channels), stored raw, as PNG or as JPEG."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from catalog.errors import FeatureError, SourceFormatError
from catalog.features import pixel_budget
from catalog.features.base import Feature

__all__ = [
    "DEEP_MODES",
    "DOWNSCALE_QUALITY",
    "JPEG_QUALITY",
    "MAX_PIXELS",
    "RAW_MAX_BYTES",
    "Image",
    "deep_image",
    "fit_side",
]

#: Images with a fully known shape up to this many bytes are stored raw by default: decoding
#: a 28x28 PNG costs about six times the record read itself, raw costs nothing.
RAW_MAX_BYTES = 64 * 64 * 4
#: The quality arrays are encoded with when the encoding is "jpeg" (Pillow's scale, 1-95).
JPEG_QUALITY = 95
#: The JPEG quality an image downscaled when it is stored (`Image` ``max_side``) is re-encoded
#: at: FFCV's default, visually lossless at these sizes, about a third of the bytes of 95.
DOWNSCALE_QUALITY = 90
#: The most pixels an image file may have by default (`catalog.features.pixel_budget`, which
#: ``$CATALOG_MAX_IMAGE_PIXELS`` overrides): Pillow's own default limit, as an error.
MAX_PIXELS = pixel_budget.DEFAULT
_ENCODINGS = ("raw", "png", "jpeg")
#: The file formats a png or jpeg feature stores as they are, whichever its encoding: the
#: file's own signature says which it is and decoding (Pillow) reads it from there, so a
#: folder mixing PNG and JPEG files keeps every file's bytes and pixels, as TFDS does. MPO is
#: a camera's JPEG with more pictures appended: it decodes, as JPEG, to the first.
_STORED_FORMATS = frozenset({"PNG", "JPEG", "MPO"})
_MODES = {1: "L", 3: "RGB", 4: "RGBA"}  # channels -> the Pillow mode decoding gives
#: libjpeg-turbo's colorspace of a JPEG file (simplejpeg) -> the mode Pillow opens it in
_JPEG_MODES = {"Gray": "L", "YCbCr": "RGB", "RGB": "RGB", "CMYK": "CMYK", "YCCK": "CMYK"}
#: Pillow modes of more than 8 bits a channel (16-bit grayscale PNG and TIFF, 32-bit integer
#: and float images): an Image holds 8 bits a channel, and Pillow's conversion to them clips
#: every value past 255, so such images are refused (`deep_image`), never converted.
DEEP_MODES = frozenset({"I;16", "I;16L", "I;16B", "I;16N", "I", "F"})
#: Modes a stored file may have besides the target one: each converts to the target mode
#: without losing anything the feature keeps, so such files are converted and re-encoded
#: (anything else, e.g. RGB for a grayscale feature, is refused).
_WIDENS_TO = {
    "L": frozenset({"1"}),
    "RGB": frozenset({"1", "L", "P", "CMYK", "YCbCr"}),
    "RGBA": frozenset({"1", "L", "LA", "P", "PA", "RGB"}),
}


class Image(Feature):
    """An image as a NumPy uint8 array of shape ``(height, width, channels)``.

    ``channels`` is 1 (grayscale), 3 (RGB) or 4 (RGBA); height and width may be None (they
    vary). ``encoding`` is how the image is stored:

    - "raw": the pixels as they are; needs a fully known shape; decoding costs nothing.
    - "png": lossless; an array is encoded with Pillow.
    - "jpeg": an array is encoded with Pillow at quality `JPEG_QUALITY` (95); no alpha.

    By default small fixed-shape images (up to 64x64x4) are raw and everything else is PNG.
    With ``max_side=N`` (``catalog prepare --image-max-side N``) every image is stored with
    its longer side at most N: a larger one is resized (aspect kept, Pillow's antialiased
    LANCZOS from the full-size pixels) and stored as JPEG at `DOWNSCALE_QUALITY` (PNG for
    RGBA; raw for a raw feature, whose shape becomes the downscaled one); a file already small
    enough keeps its bytes. `quality` (1-100) replaces that JPEG quality. `shape` is the
    shape stored; `source_shape` the one given to `encode` (only JSON names it, for a fixed
    shape larger than max_side).
    Values are NumPy arrays (a grayscale image may be ``(height, width)``), or the bytes of a
    PNG/JPEG file or a path to one. A PNG or JPEG file is stored as it is (the original
    bytes, never re-encoded) once its header shows a fitting size and channels, whichever of
    the two the encoding names: the encoding is how arrays are encoded, and each stored file's
    own signature says how it decodes (as TFDS stores files), so PNG and JPEG files mix; a
    grayscale or palette file for an RGB feature is converted when decoded. Files given to a
    raw feature are decoded. Decoding returns a writable uint8 array ``(h, w, channels)``.

    Args:
        shape: ``(height, width, channels)``; height and width may be None.
        dtype: ``uint8`` (the only one).
        encoding: ``raw``, ``png`` or ``jpeg``; None chooses as above.
        max_side: store images at most this many pixels on their longer side.
        quality: the JPEG quality of downscaled images (1-100).
        source_shape: the shape given to ``encode_example`` (JSON only).
        files: how the image files of a prepared folder are stored, ``{"jpeg": n, "png": n,
            "reencoded": n}`` (`catalog.spec.infer.image_channels` counts them): what ``info``
            shows in place of the encoding, which only says how arrays are encoded.

    Raises:
        FeatureError: a bad shape, dtype, encoding, max_side or quality; and (``encode_example``,
            when preparing) a value that does not fit, naming the feature and the example (wrong
            size or channels, a GIF/BMP/WebP file).

    Examples:
        >>> Image(shape=(28, 28, 1))
        Image(shape=(28, 28, 1), dtype='uint8', encoding='raw')
    """

    type_name = "Image"
    dtype: np.dtype[Any]

    def __init__(
        self,
        shape: Sequence[int | None] = (None, None, 3),
        *,
        dtype: str = "uint8",
        encoding: str | None = None,
        max_side: int | None = None,
        quality: int | None = None,
        source_shape: Sequence[int | None] | None = None,
        files: dict[str, int] | None = None,
    ) -> None:
        given = shape
        shape = tuple(shape if source_shape is None else source_shape)
        if len(shape) != 3 or shape[2] not in (1, 3, 4):
            raise FeatureError(
                f"Image shape must be (height, width, channels) with 1, 3 or 4 channels, "
                f"got {shape}"
            )
        if any(d is not None and (not isinstance(d, int) or d < 1) for d in shape[:2]):
            raise FeatureError(f"Image height and width must be positive ints or None, got {shape}")
        try:
            is_uint8 = np.dtype(dtype) == np.uint8
        except TypeError:
            is_uint8 = False
        if not is_uint8:
            raise FeatureError(f"Image dtype must be uint8, got {dtype!r}")
        if max_side is not None and (
            isinstance(max_side, bool) or not isinstance(max_side, int) or max_side < 1
        ):
            raise FeatureError(f"Image max_side must be a positive int or None, got {max_side!r}")
        if quality is not None and (max_side is None or quality not in range(1, 101)):
            raise FeatureError(
                f"Image quality (of downscaled images) must be 1-100 and needs max_side, got "
                f"quality={quality!r}, max_side={max_side!r}"
            )
        self.max_side, self.quality = max_side, quality or DOWNSCALE_QUALITY
        self.source_shape: tuple[int | None, int | None, int] = shape  # type: ignore[assignment]
        if max_side is not None and shape[0] is not None and shape[1] is not None:
            shape = (*fit_side(shape[0], shape[1], max_side), shape[2])
        elif max_side is not None:  # one side varies: the other shrinks with it when it is long
            shape = (None, None, shape[2])
        if source_shape is not None and tuple(given) != shape:
            raise FeatureError(
                f"Image shape {tuple(given)} is not source_shape {self.source_shape} fitted to "
                f"max_side {max_side}: {shape}"
            )
        self.shape: tuple[int | None, int | None, int] = shape  # type: ignore[assignment]
        self.dtype = np.dtype(np.uint8)
        self.channels: int = self.shape[2]
        known = None not in shape
        if encoding is None:
            encoding = "raw" if known and math.prod(shape) <= RAW_MAX_BYTES else "png"  # type: ignore[arg-type]
        if encoding not in _ENCODINGS:
            raise FeatureError(f"Image encoding must be one of {_ENCODINGS}, got {encoding!r}")
        if encoding == "raw" and not known:
            raise FeatureError(f"Image encoding 'raw' needs a fully known shape, got {shape}")
        if encoding == "jpeg" and self.channels == 4:
            raise FeatureError("Image encoding 'jpeg' has no alpha channel: use 'png' for RGBA")
        self.encoding = encoding
        if files is not None and (
            not isinstance(files, dict)
            or not set(files) <= {"jpeg", "png", "reencoded"}
            or any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in files.values())
        ):
            raise FeatureError(
                f"Image files must map jpeg, png or reencoded to counts of files, got {files!r}"
            )
        self.files = dict(files) if files else None
        self._size = math.prod(shape) if encoding == "raw" else None  # type: ignore[arg-type]
        if encoding == "raw":
            self.raw_dtype = self.dtype

    @property
    def fixed_size(self) -> int | None:
        return self._size

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, value: Any) -> bytes:
        value = self._file_value(value, "image")
        if isinstance(value, (bytes, bytearray, memoryview)):
            return self._encode_file(bytes(value))
        array = self._validate(value)
        if self.max_side is not None and max(array.shape[:2]) > self.max_side:
            from PIL import Image as PILImage

            pixels = array[:, :, 0] if self.channels == 1 else array  # Pillow infers the mode
            return self._downscale(PILImage.fromarray(np.ascontiguousarray(pixels)))
        if self.encoding == "raw":
            return array.tobytes()
        return self._compress(array)

    def _validate(self, value: Any) -> np.ndarray[Any, Any]:
        if not isinstance(value, np.ndarray):
            raise self._error(
                f"expected a NumPy array, image file bytes or a path, got {type(value).__name__}"
            )
        if value.dtype != np.uint8:
            raise self._error(f"expected dtype uint8, got {value.dtype}")
        if value.ndim == 2 and self.channels == 1:
            value = value[:, :, None]
        want_shape = self.source_shape
        ok = value.ndim == 3 and all(
            want is None or want == got for want, got in zip(want_shape, value.shape, strict=True)
        )
        if not ok:
            raise self._error(f"expected shape {want_shape}, got {value.shape}")
        return value  # type: ignore[no-any-return]

    def _compress(self, array: np.ndarray[Any, Any]) -> bytes:
        from PIL import Image as PILImage  # Pillow is needed only for PNG and JPEG

        pixels = array[:, :, 0] if self.channels == 1 else array  # Pillow infers L, RGB, RGBA
        return _save(PILImage.fromarray(np.ascontiguousarray(pixels)), self.encoding)

    def _encode_file(self, data: bytes) -> bytes:
        """Check an image file's header; keep its bytes when they already fit the feature."""
        if self._jpeg_kept(data):
            return data
        img = self._open_file(data)
        with img:
            self._check_header(img)
            width, height = img.size
            mode, target = img.mode, _MODES[self.channels]
            if self.max_side is not None and max(width, height) > self.max_side:
                try:
                    return self._downscale(img.convert(target) if mode != target else img)
                except Exception as error:  # truncated or corrupt: OSError, SyntaxError, ...
                    raise self._error(f"cannot decode the {img.format} image: {error}") from None
            if self.encoding == "raw":  # the pixels themselves are stored
                try:
                    array = np.array(img.convert(target) if mode != target else img)
                except (OSError, ValueError) as error:
                    raise self._error(f"cannot decode the {img.format} image: {error}") from None
                return array.reshape(height, width, self.channels).tobytes()
            # PNG/JPEG files are kept byte for byte, even in another mode that widens to this
            # one (a grayscale or CMYK JPEG for an RGB feature) or in the other format (a PNG
            # for a jpeg feature): `decode` opens either and converts the pixels, so the
            # original file is never re-encoded (lossily, for JPEG).
            try:
                img.verify()  # checks the file's structure without decoding the pixels
            except Exception as error:  # Pillow raises many types here: SyntaxError, OSError...
                raise self._error(f"a damaged {img.format} file: {error}") from None
        return data

    def _jpeg_kept(self, data: bytes) -> bool:
        """Whether `data` is a JPEG file this feature keeps as it is, told from its header by
        libjpeg-turbo (simplejpeg: ~4 us, where Pillow's marker walk in Python takes ~110 us
        a photo): the checks `_check_header` makes, the pixel budget, no resize. False when
        Pillow must look (another format, a header libjpeg-turbo does not read, a file to
        decode or shrink): `_encode_file` goes on as for any file then. Pillow's `verify`
        checks nothing more in a JPEG file."""
        if self.encoding == "raw" or data[:2] != b"\xff\xd8":
            return False
        import simplejpeg  # (a core dependency; loaded, as Pillow is, when first needed)

        try:
            height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
        except ValueError:
            return False
        mode, target = _JPEG_MODES.get(colorspace), _MODES[self.channels]
        want_h, want_w = self.source_shape[:2]
        return (
            (mode == target or mode in _WIDENS_TO[target])
            and want_h in (None, height)
            and want_w in (None, width)
            and (self.max_side is None or max(width, height) <= self.max_side)
            and pixel_budget.over_budget(height, width) is None
        )

    def _downscale(self, img: Any) -> bytes:
        """The stored bytes of `img` (a Pillow image in this feature's mode, its longer side
        over `max_side`): resized to fit, then raw pixels, JPEG or (RGBA) PNG."""
        from PIL import Image as PILImage

        assert self.max_side is not None
        height, width = fit_side(img.height, img.width, self.max_side)
        small = img.resize((width, height), PILImage.Resampling.LANCZOS)
        if self.encoding == "raw":
            return np.asarray(small).tobytes()
        out = io.BytesIO()
        if self.channels == 4:
            small.save(out, format="PNG")
        else:
            small.save(out, format="JPEG", quality=self.quality)
        return out.getvalue()

    def _open_file(self, data: bytes) -> Any:
        """Pillow's image of the file `data` (its header read, no pixel decoded yet), within
        the pixel budget (`catalog.features.pixel_budget`), checked from a PNG or JPEG
        header before Pillow opens it."""
        self._check_size(data)
        try:
            return pixel_budget.open_image(data, f"a file of {len(data)} bytes")
        except pixel_budget.OverBudgetError as error:
            raise self._error(str(error)) from None
        except SourceFormatError:
            raise self._error(
                f"the {len(data)} bytes given are not an image file Pillow can read"
            ) from None

    def _check_header(self, img: Any) -> None:
        """An opened image file must have this feature's height, width and channels (or a
        mode that widens to them) and, for png/jpeg, be a PNG or JPEG file."""
        width, height = img.size
        want_h, want_w = self.source_shape[:2]
        if (want_h not in (None, height)) or (want_w not in (None, width)):
            raise self._error(
                f"expected shape {self.source_shape}, got a {img.format} image of {height}x{width} "
                "pixels"
            )
        if self.encoding != "raw" and img.format not in _STORED_FORMATS:
            raise self._error(
                f"expected a PNG or JPEG file, got a {img.format} image; give the "
                "decoded array to encode it"
            )
        mode, target = img.mode, _MODES[self.channels]
        if mode in DEEP_MODES:
            raise self._error(deep_image(img))
        if mode != target and mode not in _WIDENS_TO[target]:
            raise self._error(
                f"expected {self.channels} channel(s) (mode {target}), got a {img.format} "
                f"image in mode {mode}; convert it, or give the decoded array"
            )

    def check_file(self, data: bytes) -> None:
        """Check the header of an image file from data catalog did not write (a TFDS
        directory, TFRecord files) without decoding its pixels: a PNG or JPEG of this
        feature's height, width and channels, within the pixel budget. FeatureError
        otherwise."""
        with self._open_file(data) as img:
            self._check_header(img)

    def decode_file(self, data: bytes) -> np.ndarray[Any, Any]:
        """Decode an image file from data catalog did not write, checked: its header as
        `check_file` does before any pixel is decoded, then the pixels (a damaged file is a
        FeatureError, not Pillow's own exception). The checked counterpart of `decode`, which
        reads catalog's own records (checked when they were written)."""
        with self._open_file(data) as img:
            self._check_header(img)
            target = _MODES[self.channels]
            try:
                array = np.array(img if img.mode == target else img.convert(target))
            except Exception as error:  # truncated or corrupt data: OSError, SyntaxError, ...
                raise self._error(f"a damaged {img.format} file: {error}") from None
            width, height = img.size
        if array.dtype != np.uint8 or array.size != height * width * self.channels:
            raise self._error(
                f"a {img.format} file of {height}x{width} pixels decoded to {array.dtype} "
                f"{array.shape}, not {self.channels} uint8 channel(s)"
            )
        return array.reshape(height, width, self.channels)

    def _check_size(self, data: bytes) -> None:
        """Refuse a PNG or JPEG file whose header claims more pixels than the budget
        (`catalog.features.pixel_budget`), read from the header itself before Pillow opens
        it (Pillow would warn, or raise its own error)."""
        size = pixel_budget.header_size(data)
        reason = None if size is None else pixel_budget.over_budget(*size)
        if reason is not None:
            raise self._error(f"a file of {len(data)} bytes: {reason} {pixel_budget.advice()}")

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, buf: bytearray, offset: int, length: int) -> np.ndarray[Any, Any]:
        if self.encoding == "raw":  # a view of the record's buffer; the fastest constructor
            return np.ndarray(self.shape, self.dtype, buf, offset)  # type: ignore[arg-type]
        # the photo path's decoder: libjpeg-turbo (simplejpeg) for JPEG, exact for PNG; a
        # damaged file is a SourceFormatError, which the data source names the record in
        from catalog.features import image_decode

        return image_decode.decode(memoryview(buf)[offset : offset + length], self.channels)

    def decode_block(self, block: np.ndarray[Any, Any]) -> list[Any] | None:
        if self.encoding != "raw":
            return None
        return list(block.reshape((len(block), *self.shape)))  # type: ignore[arg-type]

    def describe(self) -> str:
        if self.files and self.encoding != "raw":  # a folder's files: what is really stored
            found = ", ".join(f"{k} {n:,}" for k, n in self.files.items() if k != "reencoded" and n)
            again = self.files.get("reencoded", 0)
            text = f"{found or 'none'}" + (f"; re-encoded: {again:,}" if again else "")
            if self.max_side is None:
                return f"kept as found: {text}"
            how = "PNG" if self.channels == 4 else f"JPEG quality {self.quality}"
            return (
                f"files found: {text}; those larger than {self.max_side} px downscaled "
                f"({how}), the others kept"
            )
        if self.max_side is None:
            return self.encoding
        jpeg = self.encoding != "raw" and self.channels != 4  # how downscaled images are kept
        quality = f" (JPEG quality {self.quality})" if jpeg else ""
        return f"{self.encoding}, downscaled to at most {self.max_side} px{quality}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": self.type_name,
            "shape": list(self.shape),
            "dtype": self.dtype.name,
            "encoding": self.encoding,
        }
        if self.max_side is not None:  # absent at full size: older files and fingerprints hold
            data.update(max_side=self.max_side, quality=self.quality)
            if self.source_shape != self.shape:
                data["source_shape"] = list(self.source_shape)
        if self.files:  # a prepared folder's files only: other features' JSON unchanged
            data["files"] = dict(self.files)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Image:
        return cls(
            shape=data.get("shape", (None, None, 3)),
            dtype=data.get("dtype", "uint8"),
            encoding=data.get("encoding"),
            max_side=data.get("max_side"),
            quality=data.get("quality"),
            source_shape=data.get("source_shape"),
            files=data.get("files"),
        )

    def __repr__(self) -> str:
        more = "" if self.max_side is None else f", max_side={self.max_side}"
        return (
            f"Image(shape={self.shape}, dtype={self.dtype.name!r}, "
            f"encoding={self.encoding!r}{more})"
        )


def deep_image(img: Any) -> str:
    """Why an image of more than 8 bits a channel (a Pillow image in one of `DEEP_MODES`) is
    refused, and what to do."""
    return (
        f"a {img.format} image of more than 8 bits per channel (Pillow mode {img.mode}); not "
        "supported yet: an Image holds 8 bits per channel, and converting would clip every "
        "value past 255 (convert the files to 8 bits first, scaling as they need)"
    )


def fit_side(height: int, width: int, max_side: int) -> tuple[int, int]:
    """(height, width) of an image scaled, aspect kept, to a longer side of at most
    `max_side` (the same when it fits already).

    >>> fit_side(375, 500, 256), fit_side(100, 80, 256)
    ((192, 256), (100, 80))
    """
    longer = max(height, width)
    if longer <= max_side:
        return height, width
    return max(1, round(height * max_side / longer)), max(1, round(width * max_side / longer))


def _save(img: Any, encoding: str) -> bytes:
    out = io.BytesIO()
    if encoding == "jpeg":
        img.save(out, format="JPEG", quality=JPEG_QUALITY)
    else:
        img.save(out, format="PNG")
    return out.getvalue()
