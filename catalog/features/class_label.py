"""ClassLabel: an integer class index with optional class names."""

from __future__ import annotations

import numbers
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from catalog._util.small_file import read_small
from catalog.errors import FeatureError
from catalog.features.base import Feature

__all__ = ["MAX_NAMES_FILE_SIZE", "ClassLabel", "abbreviate", "read_names_file"]

#: The most a names file may hold: a million names of a dozen letters.
MAX_NAMES_FILE_SIZE = 16 << 20


def _storage_width(num_classes: int) -> int:
    """Bytes needed to store a label in 0..num_classes-1 (unsigned, little-endian)."""
    return 1 if num_classes <= 1 << 8 else 2 if num_classes <= 1 << 16 else 4


def read_names_file(path: str | os.PathLike[str]) -> list[str]:
    """Class names from a text file: one per line, surrounding spaces and blank lines ignored.

    The file must be a regular file (not a device or FIFO such as /dev/zero) of at most
    :data:`MAX_NAMES_FILE_SIZE` bytes; FeatureError otherwise."""
    where = f"ClassLabel names_file {str(path)!r}"
    data = read_small(
        path, MAX_NAMES_FILE_SIZE, FeatureError, where=where, regular_only=True,
        too_large=f"larger than {MAX_NAMES_FILE_SIZE >> 20} MiB, the most a names file may hold",
    )  # fmt: skip
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FeatureError(f"{where}: cannot read it (not UTF-8 text)") from None
    names = [line.strip() for line in text.splitlines()]
    return [name for name in names if name]


def abbreviate(items: Sequence[str], width: int = 60) -> str:
    """``a, b, c, ..., z``: as many leading items as fit in `width` characters, then the last.

    >>> abbreviate(["cat", "dog"]), abbreviate([str(i) for i in range(100)], 20)
    ('cat, dog', '0, 1, 2, 3, ..., 99')
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
    lines ignored) or ``num_classes``; ``num_classes`` may accompany names when it agrees. As in
    TFDS, zero classes are allowed, and a ClassLabel made with none of them gets its classes
    later, from ``label.names = [...]``, before it encodes or decodes anything.
    Values to encode may be the index or the class name. Stored as a 1, 2 or 4 byte unsigned
    int; in a `Sequence` labels stack into an int64 array. With ``allow_unlabeled`` the label
    may also be -1, TFDS's "no label" (e.g. IMDB's unsupervised split, GLUE's test splits);
    it is then stored as index + 1 (STL-10's ``unlabelled`` split uses it too). A ClassLabel of
    zero classes takes -1 (its only value) without the flag, as TFDS's encodes it. The JSON
    form always holds the names themselves, so a prepared dataset never needs the names file
    again.

    Args:
        names: the class names, in index order.
        num_classes: the number of classes (with names: must agree).
        names_file: a text file of names, one a line.
        allow_unlabeled: also take -1, "no label".

    Raises:
        FeatureError: conflicting or duplicate names, an unreadable names file; and
            (``encode_example``, when preparing) a value that does not fit, naming the feature and
            the example (an index out of range, an unknown name).

    Examples:
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
        allow_unlabeled: bool = False,
    ) -> None:
        if names is not None and names_file is not None:
            raise FeatureError("ClassLabel got both names and names_file; give one of them")
        if names_file is not None:
            names = read_names_file(names_file)
            if not names:
                raise FeatureError(f"ClassLabel names_file {str(names_file)!r} has no names")
        if num_classes is not None and (
            isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 0
        ):
            raise FeatureError(f"ClassLabel num_classes must be an int >= 0, got {num_classes!r}")
        if not isinstance(allow_unlabeled, bool):
            raise FeatureError(
                f"ClassLabel allow_unlabeled must be a bool, got {allow_unlabeled!r}"
            )
        self.allow_unlabeled = allow_unlabeled
        self._shift = int(allow_unlabeled)  # stored value = index + shift, so -1 stores as 0
        self._names: list[str] | None = None
        self._index: dict[str, int] = {}
        self._num_classes: int | None = None
        self._width = 0
        self.raw_dtype = None
        if names is not None:
            self._set_names(names, num_classes)
        elif num_classes is not None:
            self._set_count(num_classes)

    def _set_count(self, num_classes: int) -> None:
        self._num_classes = num_classes
        if num_classes == 0:  # -1 is the only label it can hold (TFDS's "no label")
            self._shift = 1
        self._width = _storage_width(num_classes + self._shift)
        # The stored bytes are the value itself only without the shift (Sequence stacks them).
        self.raw_dtype = None if self.allow_unlabeled else np.dtype(f"<u{self._width}")

    def _set_names(self, names: Sequence[str], num_classes: int | None = None) -> None:
        if isinstance(names, str) or not isinstance(names, Sequence):
            raise FeatureError(f"ClassLabel names must be a list of strings, got {names!r}")
        names = [str(n) for n in names]
        if num_classes is not None and num_classes != len(names):
            raise FeatureError(
                f"ClassLabel got num_classes={num_classes} but {len(names)} names; "
                "give one of them, or make them agree"
            )
        duplicates = sorted(n for n, times in Counter(names).items() if times > 1)
        if duplicates:
            raise FeatureError(f"ClassLabel names must be unique; repeated: {duplicates}")
        self._names = names
        self._index = {n: i for i, n in enumerate(names)}
        self._set_count(len(names))

    @property
    def num_classes(self) -> int | None:
        """The number of classes; None while neither names nor a count were given."""
        return self._num_classes

    @property
    def names(self) -> list[str]:
        """Class names in index order ("0", "1", ... when the classes are unnamed; empty while
        no classes are set). May be set once on a ClassLabel made without names (as in TFDS:
        ``label = ClassLabel(); label.names = [...]``); setting other names than it has, or
        as many names as a `num_classes` it was given does not agree with, is refused."""
        if self._names is None:
            return [str(i) for i in range(self._num_classes or 0)]
        return list(self._names)

    @names.setter
    def names(self, names: Sequence[str]) -> None:
        if self._names is not None:
            if list(names) != self._names:
                raise FeatureError(
                    f"ClassLabel names are already {abbreviate(self._names)}; they cannot be "
                    f"changed to {abbreviate([str(n) for n in names])}"
                )
            return
        self._set_names(names, self._num_classes)

    @property
    def has_names(self) -> bool:
        """True when the classes have names of their own (given, or read from a file); False
        when they are only counted (``num_classes``) or not set yet."""
        return self._names is not None

    @property
    def lowest(self) -> int:
        """The lowest label it takes: -1 (no label) with ``allow_unlabeled`` or zero classes,
        else 0."""
        return -self._shift

    def _classes(self) -> int:
        """The number of classes, which encoding and decoding need."""
        if self._num_classes is None:
            raise self._error(
                "it has no classes yet: give names=[...] or num_classes=N, or set .names "
                "before the feature encodes or decodes anything"
            )
        return self._num_classes

    def str2int(self, name: str) -> int:
        """The index of class `name` (``"-1"``: -1, when unlabelled examples are allowed)."""
        if self._shift and name == "-1":
            return -1
        if self._names is None:
            if name.isdigit() and int(name) < self._classes():
                return int(name)
        elif name in self._index:
            return self._index[name]
        raise self._error(f"unknown class name {name!r}; known: {abbreviate(self.names, 200)}")

    def int2str(self, index: int) -> str:
        """The name of class `index` (``"-1"`` for -1, no label)."""
        self._check_range(index)
        if index == -1:
            return "-1"
        return self._names[index] if self._names is not None else str(index)

    def _check_range(self, index: int) -> None:
        classes = self._classes()
        if not -self._shift <= index < classes:
            if classes == 0:
                raise self._error(
                    f"label {index} is out of range: the feature has no classes (-1, no label, "
                    "is its only value)"
                )
            raise self._error(
                f"label {index} is out of range: expected {-self._shift}..{classes - 1}"
            )

    @property
    def fixed_size(self) -> int:
        self._classes()  # the storage width follows from the number of classes
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
        return (index + self._shift).to_bytes(self._width, "little")

    def decode(self, buf: bytearray, offset: int, length: int) -> int:
        if length == 1:
            return buf[offset] - self._shift
        return int.from_bytes(buf[offset : offset + length], "little") - self._shift

    def decode_block(self, block: np.ndarray[Any, Any]) -> list[Any]:
        values = block[:, 0] if self._width == 1 else block.view(f"<u{self._width}")[:, 0]
        if self._shift:
            values = values.astype(np.int64) - self._shift
        result: list[Any] = values.tolist()  # Python ints, as `decode` returns
        return result

    def describe(self) -> str:
        unlabeled = " (-1: no label)" if self.allow_unlabeled else ""
        if self._num_classes is None:
            return "classes not set yet"
        if self._names is None:
            return f"{self._num_classes} classes{unlabeled}"
        return f"{self._num_classes} classes{unlabeled}: {abbreviate(self._names, 48)}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type_name}
        if self._names is None:
            if self._num_classes is not None:
                data["num_classes"] = self._num_classes
        else:
            data["names"] = list(self._names)
        if self.allow_unlabeled:
            data["allow_unlabeled"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClassLabel:
        return cls(
            names=data.get("names"),
            num_classes=data.get("num_classes"),
            names_file=data.get("names_file"),
            allow_unlabeled=data.get("allow_unlabeled", False),
        )

    def __repr__(self) -> str:
        flag = ", allow_unlabeled=True" if self.allow_unlabeled else ""
        if self._num_classes is None:
            return f"ClassLabel({flag[2:]})"
        if self._names is None:
            return f"ClassLabel(num_classes={self._num_classes}{flag})"
        shown = ", ".join(repr(n) for n in self._names[:5])
        more = f", ... ({self._num_classes} in all)" if self._num_classes > 5 else ""
        return f"ClassLabel(names=[{shown}{more}]{flag})"
