"""Audio: a clip of samples, stored as a WAV file, decoded to a NumPy array."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from catalog.errors import FeatureError
from catalog.features.base import Feature
from catalog.features.tensor import check_array_dtype
from catalog.features.wav import WavHeader, read_header, read_samples, write_wav

__all__ = ["Audio"]

_DTYPES = ("int16", "int32", "int64", "float32", "float64")
#: The widest integer samples (in bits) each integer dtype holds without changing a value.
_MAX_BITS = {"int16": 16, "int32": 32, "int64": 32}


class Audio(Feature):
    """A clip of audio samples at one sample rate: ``(samples,)`` mono or ``(samples, channels)``.

    Stored as a WAV file: a WAV file given as a path or bytes is kept byte for byte once its
    header shows the feature's sample rate and channel count and samples the dtype holds; an
    array is written as a WAV file (int16/int32 as integer PCM, floats as IEEE floats).
    ``decoders={"audio": False}`` hands back those WAV bytes.

    Decoding gives a writable array of `dtype`: integer dtypes hold the samples as the file
    stores them (16-bit PCM as -32768..32767; TFDS's convention); float dtypes hold integer
    samples scaled to [-1, 1) (divided by 2**(bits-1)) and float samples as they are. An integer
    dtype must hold the file's samples: int16 takes 8- and 16-bit PCM, int32 and int64 up to
    32-bit PCM; float files need a float dtype.

    Args:
        sample_rate: samples per second, > 0.
        dtype: ``int16``, ``int32``, ``int64``, ``float32`` or ``float64``.
        shape: ``(None,)`` mono, or ``(None, channels)``.

    Raises:
        FeatureError: a bad sample rate, dtype or shape; and (``encode_example``, when preparing) a
            value that does not fit, naming the feature and the example.

    Examples:
        >>> Audio(sample_rate=16000, dtype="int16")
        Audio(sample_rate=16000, dtype='int16', shape=(None,))
    """

    type_name = "Audio"
    dtype: np.dtype[Any]

    def __init__(
        self,
        sample_rate: int,
        dtype: str = "int16",
        shape: Sequence[int | None] = (None,),
    ) -> None:
        if isinstance(sample_rate, bool) or not isinstance(sample_rate, int) or sample_rate < 1:
            raise FeatureError(f"Audio sample_rate must be a positive int, got {sample_rate!r}")
        if dtype not in _DTYPES:
            raise FeatureError(f"Audio dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
        dims = tuple(shape)
        if not (
            dims == (None,)
            or (
                len(dims) == 2
                and dims[0] is None
                and isinstance(dims[1], int)
                and not isinstance(dims[1], bool)
                and dims[1] >= 1
            )
        ):
            raise FeatureError(
                f"Audio shape must be (None,) for mono or (None, channels), got {dims}"
            )
        self.sample_rate = sample_rate
        self.dtype = np.dtype(dtype)
        self.shape: tuple[int | None, ...] = dims
        self.channels: int = 1 if len(dims) == 1 else dims[1]  # type: ignore[assignment]

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, value: Any) -> bytes:
        value = self._file_value(value, "WAV")
        if isinstance(value, (bytes, bytearray, memoryview)):
            data = bytes(value)
            self._check_header(read_header(data, f"{self!r}: the {len(data)} bytes given"))
            return data
        if not isinstance(value, np.ndarray):
            raise self._error(
                f"expected a NumPy array, WAV file bytes or a path, got {type(value).__name__}"
            )
        return self._write(value)

    def _check_header(self, header: WavHeader) -> None:
        if header.sample_rate != self.sample_rate:
            raise self._error(
                f"expected {self.sample_rate} Hz, got a WAV file of {header.sample_rate} Hz"
            )
        if header.channels != self.channels:
            raise self._error(
                f"expected {self.channels} channel(s), got a WAV file of {header.channels}"
            )
        if self.dtype.kind == "i":
            if header.is_float:
                raise self._error(f"{self.dtype.name} cannot hold float samples; use a float dtype")
            if header.bits > _MAX_BITS[self.dtype.name]:
                raise self._error(
                    f"{self.dtype.name} cannot hold {header.bits}-bit samples; "
                    "use a wider dtype (int32) or a float one"
                )

    def _write(self, array: np.ndarray[Any, Any]) -> bytes:
        if array.ndim == 1 and self.channels == 1:
            array = array[:, None]
        if array.ndim != 2 or array.shape[1] != self.channels:
            raise self._error(f"expected shape {self.shape}, got {array.shape}")
        if self.dtype.kind == "f":
            if array.dtype.kind != "f":
                raise self._error(f"expected float samples in [-1, 1], got dtype {array.dtype}")
            return write_wav(array.astype(np.float32 if self.dtype == np.float32 else np.float64),
                             self.sample_rate)  # fmt: skip
        target = np.dtype(np.int16 if self.dtype == np.int16 else np.int32)
        problem = check_array_dtype(array, target)
        if problem:
            raise self._error(f"{problem} (samples are stored as {8 * target.itemsize}-bit PCM)")
        return write_wav(array.astype(target), self.sample_rate)

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, buf: bytearray, offset: int, length: int) -> np.ndarray[Any, Any]:
        data = buf[offset : offset + length]  # a bytearray: the samples come back writable
        header = read_header(data)
        samples = read_samples(data, header)
        if self.dtype.kind == "f" and not header.is_float:
            samples = samples.astype(self.dtype) / self.dtype.type(2 ** (header.bits - 1))
        elif samples.dtype != self.dtype:
            samples = samples.astype(self.dtype)
        return samples[:, 0] if len(self.shape) == 1 else samples

    def describe(self) -> str:
        return f"wav, {self.sample_rate} Hz"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type_name,
            "sample_rate": self.sample_rate,
            "dtype": self.dtype.name,
            "shape": list(self.shape),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Audio:
        return cls(
            sample_rate=data["sample_rate"],
            dtype=data.get("dtype", "int16"),
            shape=data.get("shape", (None,)),
        )

    def __repr__(self) -> str:
        return (
            f"Audio(sample_rate={self.sample_rate}, dtype={self.dtype.name!r}, shape={self.shape})"
        )
