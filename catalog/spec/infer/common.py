"""What every kind of local data shares: the options, feature names from column names, and
the spec the inference ends with."""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from catalog.errors import SpecError
from catalog.features import Feature, FeaturesDict
from catalog.formats import FORMATS
from catalog.formats.tables.compressed import compression
from catalog.formats.tables.delimited import QUOTING
from catalog.spec.load import FEATURE_NAME_RULE
from catalog.spec.model import BuilderSpec, DownloadSpec, SplitSpec

__all__ = ["LOCAL_VERSION", "InferOptions", "column_feature_names", "feature_names", "make_spec"]

#: The version of a dataset prepared from local files (`catalog.data_source(name)` finds it).
LOCAL_VERSION = "1.0.0"
_NAME = re.compile(r"^[a-z][a-z0-9_]*\Z")
_FEATURE_NAME = re.compile(f"^{FEATURE_NAME_RULE}\\Z")


@dataclass(frozen=True)
class InferOptions:
    """What the user says about local files: the dataset's `name`; `label`, a text column to
    make a ClassLabel (its distinct values, sorted, are the class names); `fill`, ``{column:
    text}`` standing in for missing values of a column (else a missing value is an error);
    `sample`, how many files (images, shards) are read to decide their features (a table's
    types come from every row); `dtypes`, ``{column: type}`` setting a table column's type
    (``int64``, ``float32``, ``bool``, ``text``, ...: `catalog.spec.infer.tables.DTYPES`);
    `delimiter` and `encoding` of CSV/TSV files (default: found from the file); `missing`,
    the texts that are missing values in CSV/TSV fields besides the empty field (pandas'
    ``na_values``, e.g. ``("NA",)``); `channels` of an image folder's images (default: what
    most of them have); `skip_rows` and `no_header` (CSV/TSV) as pandas' ``skiprows`` and
    ``header=None``; `quoting` (CSV/TSV): ``minimal`` (a field may be quoted, a quote in it
    written twice) or ``none`` (quotes are text, as pandas' ``quoting=csv.QUOTE_NONE``)."""

    name: str
    label: str | None = None
    fill: Mapping[str, str] = field(default_factory=dict)
    sample: int = 1000
    dtypes: Mapping[str, str] = field(default_factory=dict)
    delimiter: str | None = None
    encoding: str | None = None
    channels: int | None = None
    missing: tuple[str, ...] = ()
    #: CSV/TSV: lines skipped at each file's start (pandas' ``skiprows=N``), and whether the
    #: files have no header row (pandas' ``header=None``: the columns are ``0``, ``1``...)
    skip_rows: int = 0
    no_header: bool = False
    quoting: str = "minimal"
    #: Where notes go (a text column that looks like a label, ...); None: nowhere.
    note: Callable[[str], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise SpecError(
                f"dataset name {self.name!r} must match [a-z][a-z0-9_]* (lower-case letters, "
                "digits and _, starting with a letter)"
            )
        if self.sample < 1:
            raise SpecError(f"sample must be >= 1, got {self.sample}")
        if self.delimiter is not None and len(self.delimiter) != 1:
            raise SpecError(
                f"delimiter must be one character, got {self.delimiter!r} (a tab: $'\\t' in "
                "a shell, or the word tab)"
            )
        if not all(isinstance(m, str) for m in self.missing):
            raise SpecError(f"missing must be a list of texts, got {self.missing!r}")
        if not isinstance(self.skip_rows, int) or self.skip_rows < 0:
            raise SpecError(f"skip_rows must be a whole number >= 0, got {self.skip_rows!r}")
        if self.quoting not in QUOTING:
            raise SpecError(f"quoting must be one of {', '.join(QUOTING)}, got {self.quoting!r}")
        if self.channels not in (None, 1, 3, 4):
            raise SpecError(f"channels must be 1, 3 or 4, got {self.channels}")
        if self.encoding is not None:
            import codecs

            try:
                codecs.lookup(self.encoding)
            except LookupError:
                raise SpecError(f"encoding {self.encoding!r}: no such text encoding") from None


def name_from_path(text: str) -> str:
    """A dataset name made from a path's last part (a glob's folder): ``My Photos/`` ->
    ``my_photos``.

    >>> name_from_path("data/My Photos/"), name_from_path("2024-train.csv")
    ('my_photos', 'data_2024_train')
    >>> name_from_path("shards/*.tar"), name_from_path("iris.csv.gz")
    ('shards', 'iris')
    """
    path = Path(text.rstrip("/") or "/").expanduser()
    if glob.has_magic(path.name):
        path = path.parent
    named = path if path.name not in ("", ".", "..") else path.resolve()
    stem = (Path(named.stem) if compression(named) else named).stem or "data"
    words = re.findall(r"[a-z0-9]+", stem.lower())
    name = "_".join(words) or "data"
    return name if name[0].isalpha() else f"data_{name}"


def feature_names(columns: list[str], where: str) -> dict[str, str]:
    """``{feature name: column}``: each column's name if it is a valid feature name, else its
    words joined by ``_``; SpecError when two columns would get the same name."""
    out: dict[str, str] = {}
    for column in columns:
        name = column
        if not _FEATURE_NAME.match(name):
            words = "_".join(re.findall(r"[A-Za-z0-9_]+", column)).strip("_")
            name = words if words[:1].isalpha() else f"column_{words}".rstrip("_")
        if name in out:
            raise SpecError(
                f"{where}: columns {out[name]!r} and {column!r} both become feature {name!r}; "
                "rename one of them"
            )
        out[name] = column
    return out


def column_feature_names(
    columns: list[str], where: str, note: Callable[[str], None] | None = None
) -> dict[str, str]:
    """``{feature name: column}`` for a table's columns as pandas names them: each keeps its
    name (``1960``, ``'popul'``, ``Unnamed: 0``) unless a feature path cannot hold it (``[``,
    a ``/`` not between words), which becomes ``_`` and is announced to `note`.

    >>> column_feature_names(["1960", "'popul'", "km/h", "a/", "x[0]"], "t.csv")
    {'1960': '1960', "'popul'": "'popul'", 'km/h': 'km/h', 'a_': 'a/', 'x_0]': 'x[0]'}
    """
    out: dict[str, str] = {}
    held = set(columns)
    for column in columns:
        name = column
        if not _holdable(name):
            name = column.replace("[", "_").replace("/", "_")
            while name in held or name in out:
                name = f"{name}_"
            if note is not None:
                note(
                    f"{where}: column {column!r} is feature {name!r} ('[' and a '/' not "
                    "between words cannot name a feature); options name it as the file does"
                )
        out[name] = column
    return out


def _holdable(name: str) -> bool:
    """Whether a feature may be named `name` (see `catalog.features.FeaturesDict`)."""
    return bool(name) and "[" not in name and "" not in name.split("/")


def make_spec(
    options: InferOptions,
    source: str,
    features: Mapping[str, Feature],
    downloads: dict[str, DownloadSpec],
    splits: dict[str, SplitSpec],
    *,
    description: str,
    supervised: tuple[str, str] | None = None,
    tags: tuple[str, ...] = (),
) -> BuilderSpec:
    """The spec, checked the way a loaded builder.yaml is: each split's options and features
    against its format."""
    features_dict = FeaturesDict(dict(features))
    for split in splits.values():
        problem = FORMATS[split.format].problem(split.options, features_dict)
        if problem:  # a bug of the inference, not of the user's files
            raise SpecError(f"{source}: the inferred spec of split {split.name!r}: {problem}")
    return BuilderSpec(
        name=options.name,
        version=LOCAL_VERSION,
        features=features_dict,
        downloads=downloads,
        splits=splits,
        description=f"{description}, from {source} (inferred by catalog prepare).",
        supervised_keys=supervised,
        tags=tags,
    )


def complete_options(format_name: str, given: Mapping[str, object]) -> dict[str, object]:
    """Every option of the format: `given`, the others at their defaults (as load gives)."""
    import copy

    fmt = FORMATS[format_name]
    return {
        name: given[name] if name in given else copy.deepcopy(option.default)
        for name, option in fmt.options.items()
    }
