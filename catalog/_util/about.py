"""The fields that say what a dataset is, as a dataset_info.json and a stored spec hold them
(`catalog.info.dataset_info.DatasetInfo.from_json`, `catalog.spec.stored`): read in one place."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["about_fields"]


def about_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """``description``, ``homepage``, ``citation``, ``license`` (empty when absent),
    ``supervised_keys`` (an ``(input, target)`` pair, or None) and ``tags`` (a tuple) of the
    JSON document `data`: keyword arguments of `DatasetInfo` and `BuilderSpec` alike."""
    keys = data.get("supervised_keys")
    return {
        "description": data.get("description", ""),
        "homepage": data.get("homepage", ""),
        "citation": data.get("citation", ""),
        "license": data.get("license", ""),
        "supervised_keys": (keys[0], keys[1]) if keys else None,
        "tags": tuple(data.get("tags", ())),
    }
