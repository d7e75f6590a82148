"""The text of `catalog info` as parts that need no features to lay out: a `Page`.

`catalog.info.text.info_page` makes a page from a `DatasetInfo` (its features tree, splits,
configs and citation already laid out); `render` adds where the dataset is prepared, or would
be. A page is plain JSON, so the registry's index (`catalog.spec.index`) keeps one for every
registered dataset and config, and ``catalog info NAME`` of one not prepared is shown from it
without loading the spec or importing NumPy.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from catalog._util.units import format_size

__all__ = ["Location", "Page", "is_page", "render"]

#: ``{"head": [lines before the fields], "fields": [[name, value], ...] (without
#: ``prepared``), "tail": [lines after the fields]}``.
Page = dict[str, Any]


class Location(NamedTuple):
    """Where a dataset version is prepared, or would be, and how much it takes on disk. (A
    NamedTuple: no dataclasses import for `catalog list` and `catalog info`.)"""

    path: Path | os.PathLike[str]  # a URL's RemoteDir for a remote data dir
    prepared: bool
    num_bytes: int = 0


def render(page: Page, location: Location | None = None) -> str:
    """The text of `page`; with `location`, also whether (and where) it is prepared."""
    fields = dict(page["fields"])
    if location is not None:
        fields["prepared"] = (
            f"yes, {format_size(location.num_bytes)} in {location.path}"
            if location.prepared
            else f"no (would be at {location.path})"
        )
    fields = {name: value for name, value in fields.items() if value}
    width = max(map(len, fields), default=0) + 2
    lines = [*page["head"], ""]
    lines += [f"{f'{name}:':<{width}}{value}" for name, value in fields.items()]
    lines += page["tail"]
    return "\n".join(lines) + "\n"


def is_page(value: Any) -> bool:
    """Whether `value` (read back from a cache file) has the shape of a `Page`."""

    def strings(items: Any) -> bool:
        return isinstance(items, list) and all(isinstance(i, str) for i in items)

    return (
        isinstance(value, dict)
        and strings(value.get("head"))
        and strings(value.get("tail"))
        and isinstance(value.get("fields"), list)
        and all(isinstance(f, list) and len(f) == 2 and strings(f) for f in value["fields"])
    )
