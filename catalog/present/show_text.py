"""Text views of a dataset whose examples are text or table rows: what `catalog show` prints.

- :func:`text_excerpts`: for each example, ``[index] class name`` then, for each Text feature
  (top level), its name and its first `lines` lines, each cut to `width` characters with
  ``...``; the other features follow on one line (``idx=3``).
- :func:`table`: one row per example, one column per leaf feature (``features/pH``): class
  names for ClassLabels, numbers with up to 6 significant digits, text and arrays cut to
  ``cell`` characters; columns padded to their widest cell.

Examples are chosen as `catalog.present.show.sample` says: the first N, or N drawn with a seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from catalog.features import ClassLabel, Feature, FeaturesDict, Text
from catalog.present.show import label_key, sample
from catalog.present.strings import no_surrogates, one_line

if TYPE_CHECKING:
    from catalog.read.data_source import DataSource

__all__ = ["format_value", "table", "text_excerpts"]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 3, 0)] + "..."


def format_value(feature: Feature, value: Any, width: int = 24) -> str:
    """One value as a table cell or a ``name=value`` pair shows it: on one line, at most
    `width` characters."""
    if isinstance(feature, ClassLabel):
        return one_line(_cut(feature.int2str(int(value)), width))
    if isinstance(value, str):
        return one_line(_cut(value.replace("\n", "\\n"), width))
    if isinstance(value, np.generic) and value.dtype.kind == "f":
        return f"{float(value):.6g}"
    if isinstance(value, np.ndarray):
        return _cut(np.array2string(value, precision=4, separator=" ", threshold=8), width)
    if isinstance(value, dict):  # a Sequence of dicts: a dict of lists
        plain = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in value.items()}
        return _cut(" ".join(f"{k}={v!r}" for k, v in plain.items()), width)
    return _cut(str(value), width)


def _leaves(features: FeaturesDict, example: dict[str, Any]) -> list[tuple[str, Feature, Any]]:
    out: list[tuple[str, Feature, Any]] = []
    for name, feature in features.items():
        if isinstance(feature, FeaturesDict):
            out += [(f"{name}/{p}", f, v) for p, f, v in _leaves(feature, example[name])]
        else:
            out.append((name, feature, example[name]))
    return out


def text_excerpts(
    ds: DataSource,
    *,
    num_examples: int = 4,
    seed: int | None = None,
    lines: int = 3,
    width: int = 100,
) -> str:
    """The first `lines` lines of each chosen example's Text features (module docstring)."""
    features = ds.features
    label = label_key(features, ds.info.supervised_keys)
    rows = sample(len(ds), num_examples, seed)
    blocks = []
    for row, example in zip(rows, ds[rows], strict=True):
        head = f"[{row}]"
        if label is not None:
            head += f" {format_value(features[label], example[label], width)}"
        out = [head]
        others = []
        for name, feature in features.items():
            if name == label:
                continue
            if isinstance(feature, Text):
                text = example[name].splitlines() or [""]
                shown = [_cut(line, width) for line in text[:lines]]
                if len(text) > lines:
                    shown.append(f"... ({len(text) - lines} more lines)")
                out.append(f"  {name}: {shown[0]}")
                out += [f"  {' ' * len(name)}  {line}" for line in shown[1:]]
            else:
                others.append(f"{name}: {format_value(feature, example[name], width)}")
        if others:
            out.append("  " + "  ".join(others))
        blocks.append("\n".join(out))
    return no_surrogates("\n\n".join(blocks) + "\n")  # printable, and writable as UTF-8


def table(
    ds: DataSource, *, num_examples: int = 16, seed: int | None = None, cell: int = 24
) -> str:
    """A text table of the chosen examples, one column per leaf feature (module docstring)."""
    rows = sample(len(ds), num_examples, seed)
    cells: list[Sequence[str]] = []
    header: list[str] = []
    for row, example in zip(rows, ds[rows], strict=True):
        leaves = _leaves(ds.features, example)
        header = ["#", *(path for path, _, _ in leaves)]
        cells.append([str(row), *(format_value(f, v, cell) for _, f, v in leaves)])
    widths = [max(len(line[i]) for line in [header, *cells]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
             for line in [header, *cells]]  # fmt: skip
    return no_surrogates("\n".join(lines) + "\n")  # printable, and writable as UTF-8
