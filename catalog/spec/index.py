"""The registry's index: what `catalog list` shows of each builder, without loading its spec.

Loading a spec parses its builder.yaml (PyYAML), builds its features (NumPy) and checks every
field: right for preparing one dataset, too slow to list a thousand. So the listing reads a
`Summary` of each builder folder instead: every line `catalog list` prints (name/config,
version, splits, download size, the default config) with the tags and text it searches, and
the entry of `catalog list --json`. A summary is made from the fully loaded (and so fully
checked) spec the first time, then kept in a JSON file in the user's cache dir
(``$XDG_CACHE_HOME/catalog``, ``~/.cache/catalog`` by default; ``~/Library/Caches/catalog``
on macOS, ``%LOCALAPPDATA%\\catalog`` on Windows), one per registry file. The text `catalog
info` shows of each config (a `catalog.info.page.Page`, all but where it is prepared: `page`)
is kept the same way, in a file of its own.

A summary is reused only while the (mtime_ns, size) of its folder's builder.yaml and
checksums.tsv are the ones it was made from, and catalog's version and spec loader are the
same: editing either file (or upgrading catalog) makes that one summary again, from the full
spec. The registry file's names -> folders are kept the same way. A builder whose spec does
not load is never kept: it fails every listing, naming its problem. The index file is only a
cache: one that is missing, damaged or of another format is rebuilt, one that cannot be
written is skipped (the listing still comes out), and it is replaced whole (written beside
itself, then renamed), so a reader never sees half of one.
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from catalog._util.cache_dir import cache_dir
from catalog._version import __version__
from catalog.errors import CatalogError
from catalog.info.page import Page, is_page
from catalog.spec import registry
from catalog.spec.files import CHECKSUMS_FILE, SPEC_FILE

__all__ = [
    "CONFIG_DESCRIPTION",
    "DEFAULT",
    "DOWNLOAD_SIZE",
    "FULL_NAME",
    "MANUAL_DOWNLOADS",
    "MANUAL_SIZE",
    "SPLITS",
    "VERSION",
    "Declared",
    "Summary",
    "cache_dir",
    "index_file",
    "page",
    "pages",
    "registered",
    "summaries",
    "summarize",
]

#: The layout of the index file; another one is rebuilt.
INDEX_FORMAT = 4
_LOADER = Path(__file__).resolve().parent  # catalog/spec: the code that decides what a spec is

#: One builder folder as `catalog list` shows it: ``{"entry": <its --json entry>,
#: "description": ..., "rows": [[full_name, version, [[split, count], ...], download_size,
#: is_default_config, config_description, manual_download_size, manual_downloads], one per
#: config (or one)]}`` (manual_download_size: the bytes of download_size the user downloads by
#: hand; manual_downloads: the files a user places by hand, with no published checksum). Lists,
#: not dicts: the index of a thousand builders is read on every listing.
Summary = dict[str, Any]
#: The fields of a row of a `Summary`, by position.
(
    FULL_NAME,
    VERSION,
    SPLITS,
    DOWNLOAD_SIZE,
    DEFAULT,
    CONFIG_DESCRIPTION,
    MANUAL_SIZE,
    MANUAL_DOWNLOADS,
) = range(8)


def index_file(registry_path: Path, kind: str = "list") -> Path:
    """The index of the registry at `registry_path` (one file per registry): ``list`` the
    summaries, ``info`` the pages (a file of its own: a listing never reads them)."""
    return cache_dir() / f"{kind}-index-{zlib.crc32(str(registry_path).encode()):08x}.json"


def _stat(path: str | Path) -> list[int] | None:
    """[mtime_ns, size] of `path`, None when it cannot be stat'ed."""
    try:
        st = os.stat(path)  # noqa: PTH116 (a str: a thousand Path objects cost a listing 10%)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def _code_key() -> list[Any]:
    """What else decides a summary: catalog's version and its spec loader's files."""
    return [INDEX_FORMAT, __version__, _stat(_LOADER / "load.py"), _stat(_LOADER / "model.py")]


def summarize(folder: Path) -> Summary:
    """The summary of the builder folder `folder`, from its fully loaded spec (and every
    config's). Raises the CatalogError that loading raises."""
    from catalog.spec.load import load_spec  # YAML, the features and NumPy: only here

    spec = load_spec(folder)
    specs = [load_spec(folder, config) for config in spec.configs] or [spec]

    def download_size(s: Any, by_hand: bool = False) -> int:
        return sum(d.size or 0 for d in s.downloads.values() if d.by_hand or not by_hand)

    entry = {
        "name": spec.name,
        "version": spec.version,
        "tags": list(spec.tags),
        "configs": list(spec.configs),
        "default_config": spec.default_config,
        "splits": {name: s.num_examples for name, s in spec.splits.items()},
        "download_size": download_size(spec),
        "num_downloads": len(spec.downloads),
    }
    rows = [
        [
            s.full_name,
            s.version,
            [[name, split.num_examples] for name, split in s.splits.items()],
            download_size(s),
            bool(s.configs) and s.config == s.default_config,
            s.config_description,
            download_size(s, by_hand=True),
            sum(d.manual for d in s.downloads.values()),
        ]
        for s in specs
    ]  # tags and the description are the dataset's, the same in every config
    return {"entry": entry, "description": spec.description, "rows": rows}


def _well_formed(cached: Any, key: list[Any]) -> bool:
    """Whether `cached` is an index entry made for `key` holding a summary of the right
    shape (the index file is read back, so a hand-edited one must not break a listing)."""
    if not (isinstance(cached, dict) and cached.get("key") == key):
        return False
    summary = cached.get("summary")
    if not (isinstance(summary, dict) and isinstance(summary.get("entry"), dict)):
        return False
    rows, tags = summary.get("rows"), summary["entry"].get("tags")
    return (
        isinstance(summary.get("description"), str)
        and isinstance(tags, list)
        and all(isinstance(t, str) for t in tags)
        and isinstance(rows, list)
        and all(isinstance(r, list) and len(r) == _ROW_TYPES_LEN and all(
            isinstance(v, t) for v, t in zip(r, _ROW_TYPES, strict=True)) for r in rows)
    )  # fmt: skip


#: The types of a row's fields (see `Summary`).
_ROW_TYPES = (str, str, list, int, bool, str, int, int)
_ROW_TYPES_LEN = len(_ROW_TYPES)


def _read_index(path: Path | None, code: list[Any]) -> dict[str, Any]:
    """The index at `path` if it is one this catalog wrote, else an empty one."""
    empty: dict[str, Any] = {"code": code, "registry": None, "builders": {}}
    if path is None:
        return empty
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError, RecursionError):
        return empty
    ok = (
        isinstance(data, dict)
        and data.get("code") == code
        and isinstance(data.get("builders"), dict)
        and isinstance(data.get("registry"), (dict, type(None)))
    )
    return data if ok else empty


def _write_index(path: Path | None, data: dict[str, Any]) -> None:
    """Replace the index at `path` whole; a cache that cannot be written is skipped."""
    if path is None:
        return
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, separators=(",", ":"))  # dumps: the C encoder, not dump's
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _registered(index: dict[str, Any], registry_path: Path) -> tuple[dict[str, str], bool]:
    """The registry's names -> folders (from the index while the file is unchanged), and
    whether the index changed."""
    key = [str(registry_path), _stat(registry_path)]
    cached = index.get("registry")
    if (
        isinstance(cached, dict)
        and cached.get("key") == key
        and isinstance(cached.get("datasets"), dict)
    ):
        return cached["datasets"], False
    datasets = {name: str(folder) for name, folder in registry.registered().items()}
    index["registry"] = {"key": key, "datasets": datasets}
    return datasets, True


def _key(folder: str) -> list[Any]:
    """What a builder folder's summary is made from: its spec's and checksums' stats."""
    join = os.path.join  # not pathlib: a thousand folders are stat'ed on every listing
    return [_stat(join(folder, SPEC_FILE)), _stat(join(folder, CHECKSUMS_FILE))]


def _open_index(kind: str = "list") -> tuple[Path | None, dict[str, Any]]:
    """The index file of the registry in use (None without a cache dir) and its content."""
    try:
        path: Path | None = index_file(registry.registry_file(), kind)
    except RuntimeError:  # no home directory: no cache dir, every spec loaded
        path = None
    return path, _read_index(path, _code_key())


def registered() -> dict[str, str]:
    """The registry's names -> builder folders, from the index while registry.yaml is
    unchanged (else read again, and the index written): no YAML parse."""
    path, index = _open_index()
    datasets, changed = _registered(index, registry.registry_file())
    if changed:
        _write_index(path, index)
    return datasets


class Declared(NamedTuple):
    """What `catalog info` shows of a registered dataset (or config) not prepared: the text
    (`page`) and where it would be prepared (``<data dir>/<full_name>/<version_dir>``)."""

    full_name: str
    version: str
    version_dir: str
    page: Page


#: The pages of a builder folder: ``{config ("" without configs): [full_name, version,
#: version_dir, its `Page`], "": the default config's when it has configs}``.
Pages = dict[str, list[Any]]


def pages(folder: Path) -> Pages:
    """The `catalog info` pages of the builder folder `folder`, one per config (and its
    default config's under ""), from its fully loaded specs. Raises what loading raises."""
    from catalog.info.text import info_page  # the features' text: NumPy
    from catalog.spec.declared import declared_info
    from catalog.spec.load import load_spec

    spec = load_spec(folder)
    specs = {c: load_spec(folder, c) for c in spec.configs} or {"": spec}
    found: Pages = {
        config: [
            s.full_name,
            s.version,
            s.version_dir,
            info_page(declared_info(s), configs=s.configs, default_config=s.default_config),
        ]
        for config, s in specs.items()
    }
    if spec.default_config is not None:
        found[""] = found[spec.default_config]
    return found


def _pages_well_formed(cached: Any, key: list[Any]) -> bool:
    """Whether `cached` is an info index entry made for `key` with pages of the right shape."""
    if not (isinstance(cached, dict) and cached.get("key") == key):
        return False
    found = cached.get("pages")
    return isinstance(found, dict) and all(
        isinstance(p, list) and len(p) == 4 and all(isinstance(v, str) for v in p[:3])
        and is_page(p[3]) for p in found.values()
    )  # fmt: skip


def page(folder: Path, config: str | None) -> Declared | None:
    """`Declared` of the builder in `folder` (`config`, or its default), from the info index
    while its files are unchanged (else loaded again and the index written, the way the
    listing's summaries are); None when its spec does not load or has no such config (loading
    it again says why)."""
    path, index = _open_index("info")
    builders: dict[str, Any] = index["builders"]
    name, key = str(folder), _key(str(folder))
    cached = builders.get(name)
    if cached is None or not _pages_well_formed(cached, key):
        try:
            cached = {"key": key, "pages": pages(folder)}
        except CatalogError:
            return None
        builders[name] = cached
        _write_index(path, index)
    found = cached["pages"].get(config or "")
    return None if found is None else Declared(*found)


def summaries() -> Iterator[tuple[str, Summary | CatalogError]]:
    """Every registered dataset, by sorted name, with its summary (or the CatalogError its
    spec raises). Specs are loaded only for folders whose files changed since the index
    was written; the index is written again when anything in it changed."""
    path, index = _open_index()
    datasets, changed = _registered(index, registry.registry_file())
    builders: dict[str, Any] = index["builders"]
    kept: dict[str, Any] = {}
    results: list[tuple[str, Summary | CatalogError]] = []
    for name in sorted(datasets):
        folder = datasets[name]
        key = _key(folder)
        cached = builders.get(folder)
        if cached is not None and _well_formed(cached, key):
            kept[folder] = cached
            results.append((name, cached["summary"]))
            continue
        try:
            summary = summarize(Path(folder))
        except CatalogError as error:
            results.append((name, error))
            continue
        kept[folder] = {"key": key, "summary": summary}
        results.append((name, summary))
        changed = True
    if changed or kept.keys() != builders.keys():
        index["builders"] = kept
        _write_index(path, index)
    yield from results
