"""Text: a Python str, stored as UTF-8."""

from __future__ import annotations

from typing import Any

from catalog.features.base import Feature

__all__ = ["MAX_BYTES", "RawText", "Text"]

#: The longest text, in UTF-8 bytes: a variable-size value's length is stored as a uint32.
MAX_BYTES = (1 << 32) - 1


class RawText(bytes):
    """Bytes a `Text` keeps as they are, UTF-8 or not: what TensorFlow Datasets' ``Text``
    feature keeps (the real rockyou.txt has passwords that are not UTF-8). The ``tfds:`` route
    gives a TFDS generator's non-UTF-8 bytes for a Text as this; plain bytes stay refused.

    Examples:
        >>> text = Text()
        >>> data = text.encode(RawText(b"caf\\xe9"))
        >>> text.decode(bytearray(data), 0, len(data))
        b'caf\\xe9'
    """


class Text(Feature):
    """A string of any length up to 4 GiB of UTF-8 (`MAX_BYTES`), decoded to a Python ``str``.

    Values must be ``str`` (bytes are refused: decode them with their own encoding first), or
    a `RawText`: bytes kept as they are, as TFDS's Text keeps them; stored bytes that are not
    UTF-8 (only a `RawText` makes them) decode to those ``bytes``, as TFDS's data source gives
    them.

    Takes no arguments.

    Raises:
        FeatureError: (``encode_example``, when preparing) a value that does not fit, naming
            the feature and the example (not a str, too long).

    Examples:
        >>> Text().to_json()
        {'type': 'Text'}
    """

    type_name = "Text"
    shape = ()

    @property
    def dtype_name(self) -> str:
        return "str"

    def encode(self, value: Any) -> bytes:
        if isinstance(value, RawText):
            if len(value) > MAX_BYTES:
                raise self._error(f"{len(value)} bytes; a Text holds at most {MAX_BYTES}")
            return bytes(value)
        if not isinstance(value, str):
            hint = " (decode the bytes first)" if isinstance(value, (bytes, bytearray)) else ""
            raise self._error(f"expected a str, got {type(value).__name__}{hint}")
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError as error:  # lone surrogates
            raise self._error(f"not encodable as UTF-8: {error.reason} at {error.start}") from None
        if len(data) > MAX_BYTES:
            raise self._error(f"{len(data)} bytes of UTF-8; a Text holds at most {MAX_BYTES}")
        return data

    def decode(self, buf: bytearray, offset: int, length: int) -> str | bytes:
        data = buf[offset : offset + length]
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:  # a RawText's bytes, as they were given
            return bytes(data)

    def decode_spans(self, data: bytearray, starts: list[int], ends: list[int]) -> list[Any]:
        try:  # every value UTF-8: one list comprehension, no call per value
            return [data[a:b].decode("utf-8") for a, b in zip(starts, ends, strict=True)]
        except UnicodeDecodeError:  # a RawText's bytes among them: `decode` says which
            return [self.decode(data, a, b - a) for a, b in zip(starts, ends, strict=True)]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type_name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Text:
        return cls()

    def __repr__(self) -> str:
        return "Text()"
