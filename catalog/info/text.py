"""A `DatasetInfo` as text for people: metadata, the features tree, splits, sizes, citation.

``print(info)``, ``catalog info`` and the web catalog (`catalog.present.site`) all show it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from catalog._util.units import format_size
from catalog.features import Feature, FeaturesDict, Sequence, SupervisedKeys, supervised_text
from catalog.info.page import Location, Page, render

__all__ = ["FeatureRow", "Location", "feature_rows", "format_info", "info_page"]


_WIDTH = 96  # text is wrapped to this many columns


class DatasetInfo(Protocol):
    """What the text reads of a `catalog.info.dataset_info.DatasetInfo` (which imports this
    module for ``print(info)``: the text names only the attributes it shows)."""

    @property
    def full_name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def config(self) -> str | None: ...
    @property
    def config_description(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def homepage(self) -> str: ...
    @property
    def license(self) -> str: ...
    @property
    def citation(self) -> str: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def supervised_keys(self) -> SupervisedKeys | None: ...
    @property
    def downloads(self) -> dict[str, dict[str, Any]]: ...
    @property
    def download_size(self) -> int: ...
    @property
    def manual_download_size(self) -> int: ...
    @property
    def features(self) -> FeaturesDict: ...
    @property
    def splits(self) -> Mapping[str, Any]: ...


def format_info(
    info: DatasetInfo,
    location: Location | None = None,
    *,
    configs: Mapping[str, str] | None = None,
    default_config: str | None = None,
) -> str:
    """`info` for people: metadata, a features tree, splits, sizes and the citation.

    With `location`, also whether (and where) the dataset is prepared; with `configs` (name ->
    description), the dataset's configs, `default_config` marked. ``print(info)`` and
    ``catalog info`` show this text.
    """
    return render(info_page(info, configs=configs, default_config=default_config), location)


def info_page(
    info: DatasetInfo,
    *,
    configs: Mapping[str, str] | None = None,
    default_config: str | None = None,
) -> Page:
    """`format_info`'s text but where the dataset is prepared, as a `Page` (plain JSON)."""
    head = [f"{info.full_name} {info.version}"]
    paragraphs = info.description.split("\n\n")
    if info.config_description:
        paragraphs.append(f"Config {info.config}: {info.config_description}")
    for paragraph in paragraphs:
        if paragraph.strip():
            text = " ".join(paragraph.split())
            head += ["", textwrap.fill(text, _WIDTH, initial_indent="  ", subsequent_indent="  ")]
    fields = {"homepage": info.homepage, "license": info.license, "tags": ", ".join(info.tags)}
    if info.supervised_keys:
        fields["supervised keys"] = supervised_text(info.supervised_keys)
    if info.downloads:
        # a local folder is one download of many files (its entry's "files")
        files = sum(int(d.get("files") or 1) for d in info.downloads.values())
        unknown = sum(1 for d in info.downloads.values() if not d.get("size"))
        manual = sum(1 for d in info.downloads.values() if d.get("manual") is True)
        by_hand = f"; {format_size(info.manual_download_size)} in {manual} to download by hand"
        fields["download size"] = (
            f"{format_size(info.download_size)} ({files} file{'s' if files != 1 else ''}"
            + (f", {unknown} of unknown size" if unknown else "")
            + (f"{by_hand} into the manual dir" if manual else "")
            + ")"
        )
        placed = [d["manual"] for d in info.downloads.values() if isinstance(d.get("manual"), str)]
        if placed:  # catalog.download.manual: placed by hand, no checksum published
            fields["manual files"] = (
                f"{', '.join(placed)} (placed in the manual dir by hand; unverified: no "
                "published checksum)"
            )
    tree = feature_rows(info.features)
    lines = ["", "features:", *_table(("  " * r.depth + r.name, *r.columns) for r in tree)]
    split_rows = [
        (name, f"{s.num_examples:,} examples", format_size(s.num_bytes) if s.shards else "")
        for name, s in info.splits.items()
    ]
    lines += ["", "splits:", *_table(split_rows)]
    if configs:
        rows = [
            (name, "(default)" if name == default_config else "", description)
            for name, description in configs.items()
        ]
        lines += ["", "configs:", *_table(rows)]
    if info.citation:
        lines += ["", "citation:", textwrap.indent(info.citation, "  ")]
    return {"head": head, "fields": [[k, v] for k, v in fields.items()], "tail": lines}


def _type_label(feature: Feature) -> str:
    """``Image``, ``Sequence(ClassLabel)``; a Sequence of a dict is just ``Sequence``."""
    if isinstance(feature, Sequence) and not isinstance(feature.feature, FeaturesDict):
        return f"Sequence({_type_label(feature.feature)})"
    return feature.type_name


@dataclass(frozen=True)
class FeatureRow:
    """One line of the features tree: a feature `depth` levels deep, named `name`, its type
    label (``Image``, ``Sequence(ClassLabel)``), shape, dtype and details (its describe())."""

    depth: int
    name: str
    type: str
    shape: str
    dtype: str
    details: str

    @property
    def columns(self) -> tuple[str, str, str, str]:
        return self.type, self.shape, self.dtype, self.details


def feature_rows(
    features: Mapping[str, Feature], depth: int = 0, lead: tuple[int | None, ...] = ()
) -> Iterator[FeatureRow]:
    """The features tree, depth first: nested features follow theirs, one level deeper.

    The features of a Sequence of a dict show the shape they decode to (one more dimension).
    ``catalog info`` and ``catalog site`` both show these rows.
    """
    for name, feature in features.items():
        element, dims = feature, lead
        while isinstance(element, Sequence):
            dims = (*dims, element.length)
            element = element.feature
        if isinstance(element, FeaturesDict):
            yield FeatureRow(depth, name, _type_label(feature), "", "", "")
            yield from feature_rows(element, depth + 1, dims)
        else:
            shape = "" if element.shape is None else str((*dims, *element.shape))
            yield FeatureRow(
                depth,
                name,
                _type_label(feature),
                shape,
                element.dtype_name,
                element.describe(),
            )


def _table(rows: Iterable[tuple[str, ...]]) -> list[str]:
    """Rows as left-aligned columns two spaces apart, indented by two."""
    rows = list(rows)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))] if rows else []
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
