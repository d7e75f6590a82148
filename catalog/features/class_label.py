"""ClassLabel: an integer class index with optional class names."""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import FeatureError
from catalog.features.base import Feature

__all__ = ["ClassLabel", "abbreviate", "read_names_file"]


def _storage_width(num_classes: int) -> int:
    """Bytes needed to store a label in 0..num_classes-1 (unsigned, little-endian)."""
    return 1 if num_classes <= 1 << 8 else 2 if num_classes <= 1 << 16 else 4


def read_names_file(path: str | os.PathLike[str]) -> list[str]:
    """Class names from a text file: one per line, surrounding spaces and blank lines ignored."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise FeatureError(
            f"ClassLabel names_file {str(path)!r}: cannot read it ({reason})"
        ) from None
    names = [line.strip() for line in text.splitlines()]
    return [name for name in names if name]


def abbreviate(items: Sequence[str], width: int = 60) -> str:
    """``a, b, c, ..., z``: as many leading items as fit in `width` characters, then the last.

    >>> abbreviate(["cat", "dog"]), abbreviate([str(i) for i in range(100)], 20)
    ('cat, dog', '0, 1, 2, 3, 4, ..., 99')
    """
    full = ", ".join(items)
    if len(full) <= width:
        return full
    tail = f", ..., {items[-1]}"
    head: list[str] = []
    for item in items[:-1]:
        if len(", ".join([*head, item])) + len(tail) > width and head:
            break
        head.append(item)
    return ", ".join(head) + tail


class ClassLabel(Feature):
    """A class index in ``0..num_classes-1``; decodes to a Python ``int``.

    Give one of ``names`` (index order), ``names_file`` (a text file, one name per line, blank
    lines ignored) or ``num_classes``; ``num_classes`` may accompany names when it agrees.
    Values to encode may be the index or the class name. Stored as a 1, 2 or 4 byte unsigned
    int; in a `Sequence` labels stack into an int64 array. The JSON form always holds the
    names themselves, so a prepared dataset never needs the names file again.

    With ``unlabelled=True`` the value -1 is accepted too and decodes back to -1: an example
    without a label, as TFDS stores them (STL-10's ``unlabelled`` split). It is stored as the
    largest value of the storage width, so it is not for labels inside a `Sequence`.

    >>> label = ClassLabel(names=["cat", "dog"])
    >>> label.str2int("dog"), label.int2str(0), label.num_classes
    (1, 'cat', 2)
    """

    type_name = "ClassLabel"
    shape = ()
    dtype = np.dtype(np.int64)

    def __init__(
        self,
        *,
        names: Sequence[str] | None = None,
        num_classes: int | None = None,
        names_file: str | os.PathLike[str] | None = None,
        unlabelled: bool = False,
    ) -> None:
        if names is not None and names_file is not None:
            raise FeatureError("ClassLabel got both names and names_file; give one of them")
        if names_file is not None:
            names = read_names_file(names_file)
            if not names:
                raise FeatureError(f"ClassLabel names_file {str(names_file)!r} has no names")
        if names is None and num_classes is None:
            raise FeatureError(
                "ClassLabel needs names=[...], names_file=... or num_classes=N; got none of them"
            )
        if isinstance(names, str):
            raise FeatureError(f"ClassLabel names must be a list of strings, got {names!r}")
        if names is not None:
            names = [str(n) for n in names]
            if num_classes is not None and num_classes != len(names):
                raise FeatureError(
                    f"ClassLabel got num_classes={num_classes} but {len(names)} names; "
                    "give one of them, or make them agree"
                )
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise FeatureError(f"ClassLabel names must be unique; repeated: {duplicates}")
            num_classes = len(names)
        assert num_classes is not None
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
            raise FeatureError(
                f"ClassLabel num_classes must be a positive int, got {num_classes!r}"
            )
        self._names: list[str] | None = names
        self._num_classes = num_classes
        self._index = {n: i for i, n in enumerate(names)} if names is not None else {}
        if not isinstance(unlabelled, bool):
            raise FeatureError(f"ClassLabel unlabelled must be true or false, got {unlabelled!r}")
        self.unlabelled = unlabelled
        self._width = _storage_width(num_classes + 1 if unlabelled else num_classes)
        self.raw_dtype = np.dtype(f"<u{self._width}")
        self._none = (1 << (8 * self._width)) - 1  # how -1 is stored when unlabelled

    @property
    def num_classes(self) -> int:
        return self._num_classes

    @property
    def names(self) -> list[str]:
        """Class names in index order ("0", "1", ... when the classes are unnamed)."""
        if self._names is None:
            return [str(i) for i in range(self._num_classes)]
        return list(self._names)

    def str2int(self, name: str) -> int:
        """The index of class `name`."""
        if self._names is None:
            if name.isdigit() and int(name) < self._num_classes:
                return int(name)
        elif name in self._index:
            return self._index[name]
        raise self._error(f"unknown class name {name!r}; known: {abbreviate(self.names, 200)}")

    def int2str(self, index: int) -> str:
        """The name of class `index` ("unlabelled" for -1 when the feature allows it)."""
        self._check_range(index)
        if index == -1:
            return "unlabelled"
        return self._names[index] if self._names is not None else str(index)

    def _check_range(self, index: int) -> None:
        if not 0 <= index < self._num_classes and not (self.unlabelled and index == -1):
            raise self._error(f"label {index} is out of range: expected 0..{self._num_classes - 1}")

    @property
    def fixed_size(self) -> int:
        return self._width

    def encode(self, value: Any) -> bytes:
        if isinstance(value, str):
            index = self.str2int(value)
        elif isinstance(value, bool):  # an int subclass, but never a class index
            raise self._error("expected an int index or a class name, got bool")
        elif isinstance(value, numbers.Integral):
            index = int(value)
        elif getattr(value, "shape", None) == () and getattr(value, "dtype", None) is not None:
            return self.encode(value.item())  # a 0-d NumPy array
        else:
            raise self._error(f"expected an int index or a class name, got {type(value).__name__}")
        self._check_range(index)
        return (self._none if index == -1 else index).to_bytes(self._width, "little")

    def decode(self, buf: bytearray, offset: int, length: int) -> int:
        value = (
            buf[offset] if length == 1 else int.from_bytes(buf[offset : offset + length], "little")
        )
        return -1 if self.unlabelled and value == self._none else value

    def decode_block(self, block: np.ndarray[Any, Any]) -> list[Any]:
        values = block[:, 0] if self._width == 1 else block.view(f"<u{self._width}")[:, 0]
        if self.unlabelled:
            values = np.where(values == self._none, -1, values.astype(np.int64))
        result: list[Any] = values.tolist()  # Python ints, as `decode` returns
        return result

    def describe(self) -> str:
        none = " (-1 = unlabelled)" if self.unlabelled else ""
        if self._names is None:
            return f"{self._num_classes} classes{none}"
        return f"{self._num_classes} classes{none}: {abbreviate(self._names, 48)}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type_name}
        if self._names is None:
            data["num_classes"] = self._num_classes
        else:
            data["names"] = list(self._names)
        if self.unlabelled:
            data["unlabelled"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClassLabel:
        return cls(
            names=data.get("names"),
            num_classes=data.get("num_classes"),
            names_file=data.get("names_file"),
            unlabelled=data.get("unlabelled", False),
        )

    def __repr__(self) -> str:
        flag = ", unlabelled=True" if self.unlabelled else ""
        if self._names is None:
            return f"ClassLabel(num_classes={self._num_classes}{flag})"
        shown = ", ".join(repr(n) for n in self._names[:5])
        more = f", ... ({self._num_classes} in all)" if self._num_classes > 5 else ""
        return f"ClassLabel(names=[{shown}{more}]{flag})"
