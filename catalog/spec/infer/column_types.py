"""A column's type, decided from every value it holds, widening as values come.

`TextColumn` watches the fields of a CSV/TSV column, `JsonColumn` the values of a JSON Lines
key; each keeps a few numbers whatever the file's size (its kind, counts, the line where it
widened, and its distinct values up to a cap: a few to tell a label-like column, the class
names of a ``--label`` column), so one pass over a file of any size decides its types in
bounded memory.

Text fields widen as pandas' C parser types them: ``bool`` (``true``/``false`` in any case)
< ``int64`` (integers within int64, ASCII spaces around them allowed) < ``float64`` (decimal
numbers, ``inf``, ``nan``; no ``_`` separators) < ``text``; a bool column given a number, or
an integer too large for int64, becomes text. Empty fields (and the texts given as
``missing``) are missing values and do not change the type; a column whose every field is
empty is text. The texts pandas also reads as missing by default (`PANDAS_MISSING`: ``NA``,
``N/A``, ``null``...) are text here unless given as ``missing``; a column made text by them
alone is remembered (`TextColumn.na_texts`, `TextColumn.real_text`) so that a note can say
so.

JSON values keep their JSON type: an integer key given a float widens to float64; a string
beside numbers or booleans, or a boolean beside numbers, is one error naming both lines
(pandas would make the column ``object``, values of mixed types, which no feature stores). A
key holding lists is a Sequence of their elements (typed as a key's values are, to any
depth: lists of lists, lists of objects); a key holding objects a FeaturesDict of their
fields (each typed so), as Hugging Face datasets and pyarrow read them into structs. A list or
object beside other values, a null inside a list or an object, an object without a field
another line's has (or with one it has not), and a field name builder.yaml could not hold
(`FIELD_NAME`) are errors naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from catalog.errors import SpecError
from catalog.features import Feature, FeaturesDict, Scalar, Sequence, Text
from catalog.formats.tables.csv_dialect import PANDAS_MISSING
from catalog.spec.load import FEATURE_NAME_RULE

__all__ = [
    "EMPTY",
    "FEW",
    "FIELD_NAME",
    "MAX_NESTING",
    "PANDAS_MISSING",
    "ZERO_PADDED",
    "JsonColumn",
    "TextColumn",
    "kind_of_text",
]

#: The names a field of a struct (a JSON object, a Parquet struct) may have: a feature name of
#: builder.yaml's rule without the ``/`` that joins the parts of a feature's path.
FIELD_NAME = re.compile(f"^{FEATURE_NAME_RULE.replace(' /-', ' -')}\\Z")
#: The most lists and structs one value may be nested in (a JSON key's, a Parquet column's):
#: what a file holds deeper is refused, not read with a recursion as deep.
MAX_NESTING = 32
#: What a field name that is not one must be, in an error's words.
FIELD_NAME_WORDS = "words of letters, digits and _ holding a letter, joined by '.', ' ' or '-'"
#: Distinct values a column remembers unless told more (a label column: its class names).
FEW = 20
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(
    r"\s*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)\s*",
    re.IGNORECASE,
)
_BOOL = frozenset({"true", "false"})
#: How a number written with leading zeros starts (``01234``, ``007.5``): a number column
#: drops them (as pandas does).
ZERO_PADDED = re.compile(r"0[0-9]")
#: The spaces pandas' C parser skips around a number (ASCII's), which ``int()`` skips too.
_SPACES = " \t\n\v\f\r"
#: The fields that are missing values unless told otherwise: the empty one.
EMPTY = frozenset({""})
_INT64 = (-(1 << 63), (1 << 63) - 1)
_ORDER = ("empty", "bool", "int64", "float64", "text")


@dataclass
class _Column:
    """What every column remembers: its kind so far, how many values are missing (and the
    first missing one's line), its distinct values while they are few."""

    kind: str = "empty"
    missing: int = 0
    first_missing: int | None = None
    #: line where the kind last widened, for messages
    widened_at: dict[str, int] = field(default_factory=dict)
    #: the distinct values, while there are at most `cap` (then None)
    distinct: set[Any] | None = field(default_factory=set)
    cap: int = FEW
    values: int = 0

    def _remember(self, value: Any) -> None:
        self.values += 1
        if self.distinct is not None:
            self.distinct.add(value)
            if len(self.distinct) > self.cap:
                self.distinct = None

    def _missing(self, line: int) -> None:
        self.missing += 1
        if self.first_missing is None:
            self.first_missing = line

    def feature(self) -> Feature:
        """The column's feature: Scalar of its dtype, or Text."""
        if self.kind in ("empty", "text"):
            return Text()
        return Scalar(self.kind)


@dataclass
class TextColumn(_Column):
    """A CSV/TSV column's type from its fields (see the module docstring)."""

    #: `PANDAS_MISSING` texts seen, each with its first line, while no other text was seen
    na_texts: dict[str, int] = field(default_factory=dict)
    #: how many fields were one of `na_texts`
    na_count: int = 0
    #: whether a text that is none of `PANDAS_MISSING` was seen
    real_text: bool = False
    #: the first field starting with a zero and a digit (``01234``, a ZIP code): (line, text)
    zero_padded: tuple[int, str] | None = None

    def add(self, text: str, line: int, missing: frozenset[str] = EMPTY) -> None:
        if text in missing:
            self._missing(line)
            return
        self._remember(text)
        if self.zero_padded is None and text[:1] == "0" and ZERO_PADDED.match(text):
            self.zero_padded = (line, text)
        if self.kind == "text" and self.real_text:
            return
        kind = kind_of_text(text)
        if kind == "text":
            self.saw_text(text, line)
        self.widen(kind, line)

    def saw_text(self, text: str, line: int) -> None:
        """Remember a field of kind text: a `PANDAS_MISSING` one, or that there is real text."""
        if text in PANDAS_MISSING:
            self.na_texts.setdefault(text, line)
            self.na_count += 1
        else:
            self.real_text = True

    def text_only_by_na(self) -> bool:
        """Whether the column is text only because of `PANDAS_MISSING` texts: without them
        it would hold numbers or booleans."""
        return (
            self.kind == "text"
            and not self.real_text
            and bool(self.na_texts)
            and self.values > self.na_count
        )

    def widen(self, kind: str, line: int) -> None:
        """The column's kind once a value of `kind` (on `line`) is seen."""
        if kind == self.kind:
            return
        if self.kind == "empty":
            new = kind
        elif "bool" in (kind, self.kind) or "text" in (kind, self.kind):
            new = "text"
        else:
            new = max(kind, self.kind, key=_ORDER.index)
        if new != self.kind:
            self.kind = new
            self.widened_at.setdefault(new, line)


def kind_of_text(text: str) -> str:
    """The kind of one CSV field (see the module docstring)."""
    digits = text.strip(_SPACES)  # pandas' C parser reads " 2 " as the integer 2
    if _INT.fullmatch(digits):
        # int() of a long digit string is refused past 4300 digits; no int64 is that long
        if len(digits) <= 20 and _INT64[0] <= int(digits) <= _INT64[1]:
            return "int64"
        return "text"  # as pandas: an integer past int64 (and uint64) keeps its digits as text
    if _FLOAT.fullmatch(text):
        return "float64"
    if text.strip().lower() in _BOOL:
        return "bool"
    return "text"


@dataclass
class JsonColumn(_Column):
    """A JSON Lines key's type from its values (see the module docstring)."""

    #: the first line holding a negative integer
    negative_at: int | None = None
    #: the elements of a key that holds lists, as one column
    items: JsonColumn | None = None
    #: the fields of a key that holds objects, each as a column
    fields: dict[str, JsonColumn] | None = None

    def add(self, value: Any, line: int, where: str, key: str, depth: int = 0) -> None:
        if value is None:
            self._missing(line)
            return
        if depth > MAX_NESTING and isinstance(value, (list, dict)):
            raise SpecError(
                f"{where}:{line}: key {key!r} holds values nested more than {MAX_NESTING} lists "
                "and objects deep; catalog reads them that deep"
            )
        if isinstance(value, list):
            kind = "list"
            items = self.items = self.items or JsonColumn()
            for at, item in enumerate(value):
                if item is None:
                    raise SpecError(
                        f"{where}:{line}: key {key!r} holds a list holding a null (element "
                        f"{at}); catalog fills a missing value of a whole key (--fill), not one "
                        "inside a list: fill it in the file"
                    )
                items.add(item, line, where, f"{key}[{at}]", depth + 1)
            self.values += 1
        elif isinstance(value, dict):
            kind = "object"
            self._fields(value, line, where, key, depth)
            self.values += 1
        elif isinstance(value, bool):
            kind = "bool"
        elif isinstance(value, int):
            kind = self._integer(value, line, where, key)
        elif isinstance(value, float):
            kind = "float64"
        elif isinstance(value, str):
            kind = "text"
        else:
            raise SpecError(
                f"{where}:{line}: key {key!r} holds a {type(value).__name__}, which is no JSON "
                "value"
            )
        if kind == "text":
            self._remember(value)
        if kind == self.kind:
            return
        if kind in ("list", "object") and self.kind == "empty":
            self.kind = kind
            self.widened_at.setdefault(kind, line)
            return
        numbers = {kind, self.kind} <= {"int64", "uint64", "float64"}
        if self.kind == "empty" or numbers:
            new = kind if self.kind == "empty" else max(kind, self.kind, key=_NUMBERS.index)
            if new != self.kind:
                self.kind = new
                self.widened_at.setdefault(new, line)
            return
        first = min(self.widened_at.values(), default=line)
        raise SpecError(
            f"{where}:{line}: key {key!r} holds {_JSON_NAMES[kind]} where line {first} holds "
            f"{_JSON_NAMES[self.kind]}; a column holds values of one type (give every line "
            "the same type, e.g. quote the numbers as strings)"
        )

    def _fields(self, value: dict[str, Any], line: int, where: str, key: str, depth: int) -> None:
        """Add the fields of `value`, an object: the same fields as the key's other objects
        (the first one's), none null."""
        fields = self.fields
        if fields is None:
            if not value:
                raise SpecError(f"{where}:{line}: key {key!r} holds an empty object ({{}})")
            for name in value:
                if not FIELD_NAME.match(name):
                    raise SpecError(
                        f"{where}:{line}: key {key!r} holds an object with field {name!r}; a "
                        f"field's name must be {FIELD_NAME_WORDS}"
                    )
            fields = self.fields = {name: JsonColumn() for name in value}
        elif value.keys() != fields.keys():
            odd = sorted(set(fields) ^ set(value))[0]
            first = self.widened_at.get("object", line)
            how = "without" if odd in fields else "with"
            raise SpecError(
                f"{where}:{line}: key {key!r} holds an object {how} field {odd!r}, unlike line "
                f"{first}'s; the objects of a key have the same fields (fill them in the file)"
            )
        for name, item in value.items():
            if item is None:
                raise SpecError(
                    f"{where}:{line}: key {key!r}: field {name!r} is null; catalog fills a "
                    "missing value of a whole key (--fill), not one inside an object: fill it "
                    "in the file"
                )
            fields[name].add(item, line, where, f"{key}.{name}", depth + 1)

    def feature(self) -> Feature:
        """The key's feature: as a column's, a Sequence of its lists' elements' (texts when
        every list was empty), or a FeaturesDict of its objects' fields'."""
        if self.kind == "list":
            assert self.items is not None
            return Sequence(self.items.feature())
        if self.kind == "object":
            assert self.fields is not None
            return FeaturesDict({name: column.feature() for name, column in self.fields.items()})
        return super().feature()

    def _integer(self, value: int, line: int, where: str, key: str) -> str:
        """The kind of integer `value`: int64, or uint64 past int64 (as pandas reads it);
        SpecError past uint64, or when the column holds both (no integer type does)."""
        if value < 0 and self.negative_at is None:
            self.negative_at = line
        floats = self.kind == "float64"  # holds any of them (rounded, as pandas)
        if _INT64[0] <= value <= _INT64[1]:
            big = self.widened_at.get("uint64") if value < 0 and not floats else None
            if big is None:
                return "int64"
        elif 0 < value < 1 << 64:
            if self.negative_at is None or floats:
                return "uint64"
            big = line
        else:
            raise SpecError(
                f"{where}:{line}: key {key!r} holds {value}, an integer past 64 bits: no integer "
                "type holds it and float64 would round it (quote it as a string to keep it)"
            )
        raise SpecError(
            f"{where}:{max(big, self.negative_at or 0)}: key {key!r} holds integers past int64 "
            f"(line {big}) and negative ones (line {self.negative_at}): no integer type holds "
            "both (quote them as strings to keep them)"
        )


_NUMBERS = ("int64", "uint64", "float64")
_JSON_NAMES = {
    "bool": "a boolean",
    "int64": "an integer",
    "uint64": "an integer",
    "float64": "a number",
    "text": "a string",
    "list": "a list",
    "object": "an object",
}
