"""Which prepared copies in a data dir a ``name[/config][:version]`` asks for, from the folders
listed under the name (``[<config>/]<version>[-max<side>]``): what the resolver
(`catalog.api.resolve`) answers a dataset no builder describes by."""

from __future__ import annotations

import re

from catalog.errors import DatasetNotFoundError
from catalog.spec.registry import version_matches

__all__ = ["only_config", "safe_part", "versions_asked"]

_VERSION_DIR = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-max(\d+))?$")


def only_config(name: str, listed: list[str], version: str, side: int | None) -> str:
    """The one config `name` was prepared as when it was prepared with configs only ("" when
    it was prepared without one, or not at all); DatasetNotFoundError listing them when
    there are several."""
    if versions_asked(listed, "", version, side) or versions_asked(listed, "", version, None):
        return ""
    configs = sorted({f.rpartition("/")[0] for f in listed if f.count("/") == 1})
    configs = [c for c in configs if versions_asked(listed, c, version, None)]
    if len(configs) > 1:
        raise DatasetNotFoundError(
            f"{name} was prepared as {len(configs)} configs; name one: "
            + ", ".join(f"{name}/{c}" for c in configs)
        )
    return configs[0] if configs else ""


def versions_asked(
    listed: list[str], config: str, version: str, image_max_side: int | None
) -> list[tuple[tuple[int, ...], str]]:
    """(version numbers, folder) of the listed ``[<config>/]<version>`` folders asked for."""
    wanted = []
    for found in listed:
        cfg, _, folder = found.rpartition("/")
        match = _VERSION_DIR.match(folder)
        if match is None or (cfg or "") != (config or ""):
            continue
        number = ".".join(match.group(i) for i in (1, 2, 3))
        side = int(match.group(4)) if match.group(4) else None
        if side != image_max_side or (version and not version_matches(version, number)):
            continue
        wanted.append((tuple(int(match.group(i)) for i in (1, 2, 3)), found))
    return wanted


def safe_part(part: str) -> bool:
    """Whether `part` of a name may name a folder (not empty, hidden, a path or padded)."""
    return bool(part) and not part.startswith(".") and "\\" not in part and part == part.strip()
