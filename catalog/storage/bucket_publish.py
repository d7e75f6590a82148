"""Generations in a bucket: the publish protocol of `catalog.storage.generations` for object
storage (s3://, gs://), which has no rename, no symlink and no flock.

In ``<data dir>/<name>[/<config>]/`` (the layout `catalog.storage.remote` reads)::

    <version>.gen-<id>/              shards, then dataset_info.json; never changed once complete
    <version>.pointer                {"generation": "<version>.gen-<id>", "previous": ...}: last
    <version>.incomplete-<plan key>  {"generation": "<version>.gen-<id>"}: a prepare under way
    <version>.lock                   the preparers' lock (`catalog.storage.bucket_lock`)

- `begin` (under the lock): the generation a prepare of one plan uploads into. A marker names
  it, so that a prepare killed mid-upload is resumed by the next one with the same plan, on
  any host: the shards already there are kept when their size, sha256 and example count match
  (`stored_shards`; each shard is one PUT carrying its sha256 and count as object metadata, and
  a PUT is atomic, so an object with that metadata is the whole shard that was hashed).
  Markers of other plans (or every marker, with ``fresh``) are dropped with their generations.
- `publish`: every shard of the dataset_info checked in the bucket, dataset_info.json uploaded
  into the generation (the last object of it), the pointer written, the marker removed. A
  reader resolves the pointer, so it sees the old generation or the new one, never a mix, and
  never a generation without its dataset_info.json.
- `collect`, the grace rule (readers of a bucket cannot hold a lock): the generation the
  pointer names and the one published before it (which the pointer names as ``previous``:
  object timestamps are too coarse to order two prepares within a second) are kept, so a
  reader that resolved the pointer just before an overwrite reads on through it; older
  complete generations, and unfinished ones no marker names, are removed. A reader still on
  a generation two overwrites old finds its objects gone and says the dataset was prepared
  again (the read side's error).
"""

from __future__ import annotations

import functools
import json
import secrets
from dataclasses import dataclass
from typing import Any

from catalog.errors import StorageError
from catalog.info.dataset_info import INFO_FILE, DatasetInfo, ShardInfo
from catalog.storage.bucket_io import (
    delete,
    put_bytes,
    put_file,
    read_bytes,
    retrying,
    write_filesystem,
)
from catalog.storage.generations import GENERATION
from catalog.storage.locking import INCOMPLETE
from catalog.storage.remote import (
    RemoteDir,
    no_such_bucket,
    pointer_name,
    pointer_record,
    read_pointer,
    write_pointer,
)
from catalog.storage.schemes import scheme

__all__ = [
    "Listing",
    "begin",
    "collect",
    "discard",
    "generation_sizes",
    "listing",
    "markers",
    "pointers",
    "prepared",
    "publish",
    "published",
    "put_shard",
    "remove",
    "stored_shard",
    "stored_shards",
]

_SHA256, _EXAMPLES = "catalog-sha256", "catalog-examples"  # the object metadata of a shard


# -- shards ----------------------------------------------------------------------------------
def put_shard(local: str, generation: RemoteDir, shard: ShardInfo) -> None:
    """Upload the finished shard file `local` into `generation`, its sha256 and example count
    as the object's metadata."""
    from pathlib import Path

    meta = {_SHA256: shard.sha256, _EXAMPLES: str(shard.num_examples)}
    put_file(Path(local), generation / shard.file, meta)


def stored_shard(generation: RemoteDir, file: str) -> ShardInfo | None:
    """The shard `file` as uploaded into `generation` (size from the server, sha256 and count
    from its metadata), or None when it is not there whole."""
    where = generation / file
    fs = write_filesystem(where)

    def head() -> tuple[int, dict[str, str]] | None:
        try:
            return scheme(where.protocol).head(fs, where.path)
        except FileNotFoundError as error:
            if no_such_bucket(error):
                raise
            return None

    found = retrying(where, "checking", head)
    if found is None:
        return None
    size, meta = found
    sha256, examples = meta.get(_SHA256), meta.get(_EXAMPLES)
    if not sha256 or not (examples or "").isdigit():
        return None  # not uploaded by catalog (or its metadata lost): upload it again
    return ShardInfo(file, int(examples or 0), size, sha256)


def stored_shards(generation: RemoteDir) -> dict[str, ShardInfo]:
    """Every shard uploaded whole into `generation`, by file name."""
    files = [name for name in listing(generation) if "/" not in name and name != INFO_FILE]
    found = {name: stored_shard(generation, name) for name in files}
    return {name: shard for name, shard in found.items() if shard is not None}


# -- listing ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Listing:
    """An object under a folder: its size and when it was last written (epoch seconds)."""

    size: int
    modified: float


def listing(folder: RemoteDir) -> dict[str, Listing]:
    """Every object under `folder`, by its path relative to it."""
    fs = write_filesystem(folder)

    def find() -> dict[str, Any]:
        fs.invalidate_cache(folder.path)
        try:
            found: dict[str, Any] = fs.find(folder.path, detail=True)
        except FileNotFoundError as error:
            if no_such_bucket(error):
                raise
            return {}
        return found

    prefix = folder.path.rstrip("/") + "/"
    out = {}
    for name, entry in retrying(folder, "listing", find).items():
        if not name.startswith(prefix) or entry.get("type") == "directory":
            continue
        modified = entry.get("LastModified") or entry.get("updated") or entry.get("mtime")
        stamp = modified.timestamp() if hasattr(modified, "timestamp") else 0.0
        out[name[len(prefix) :]] = Listing(int(entry.get("size") or 0), stamp)
    return out


def pointers(folder: RemoteDir) -> list[str]:
    """``<version>`` and ``<config>/<version>`` of the pointers directly under `folder` and
    one level down (a dataset's configs), by listing those two levels only: a dataset's
    shards, in its generations, are never listed (`listing` would list every one of them)."""
    fs = write_filesystem(folder)
    suffix = pointer_name("")

    def level(path: str) -> list[dict[str, Any]]:
        fs.invalidate_cache(path)
        try:
            found: list[dict[str, Any]] = fs.ls(path, detail=True)
        except FileNotFoundError as error:
            if no_such_bucket(error):
                raise
            return []
        return found

    out: list[str] = []
    prefixes = [("", folder.path.rstrip("/"))]
    while prefixes:
        relative, path = prefixes.pop()
        for entry in retrying(folder, "listing", functools.partial(level, path)):
            name = entry["name"].rstrip("/").rpartition("/")[2]
            if entry.get("type") == "directory":
                if not relative and GENERATION not in name and not name.startswith("."):
                    prefixes.append((name, f"{path}/{name}"))
            elif name.endswith(suffix):
                out.append(f"{relative}/{name[: -len(suffix)]}".lstrip("/"))
    return sorted(out)


def _generations(dataset: RemoteDir, version: str) -> dict[str, dict[str, Listing]]:
    """The generations of `version` in the bucket: name -> {object in it: listing}."""
    found: dict[str, dict[str, Listing]] = {}
    start = f"{version}{GENERATION}"
    for name, entry in listing(dataset).items():
        top, _, rest = name.partition("/")
        if top.startswith(start) and rest:
            found.setdefault(top, {})[rest] = entry
    return found


def _markers(dataset: RemoteDir, version: str) -> dict[str, str | None]:
    """The markers of prepares under way: marker name -> the generation it names."""
    return {name: note.get("generation") for name, note in markers(dataset, version).items()}


def markers(dataset: RemoteDir, version: str) -> dict[str, dict[str, Any]]:
    """The markers of prepares under way, by name: what `begin` wrote in them (its generation,
    plan key and shard size); ``generation`` is None in a marker that is not readable."""
    out: dict[str, dict[str, Any]] = {}
    start = f"{version}{INCOMPLETE}"
    for name in listing(dataset):
        if name.startswith(start) and "/" not in name:
            try:
                note = json.loads(read_bytes(dataset / name) or b"")
                generation = note["generation"]
            except (ValueError, KeyError, TypeError):
                note, generation = {}, None
            ok = isinstance(generation, str) and generation.startswith(f"{version}{GENERATION}")
            out[name] = {**note, "generation": generation if ok and "/" not in generation else None}
    return out


def _pointer(dataset: RemoteDir, version: str) -> str | None:
    return retrying(dataset, "reading the pointer", lambda: read_pointer(dataset, version))


def _pointer_record(dataset: RemoteDir, version: str) -> dict[str, Any]:
    """The pointer's record ({} without one)."""
    record = retrying(dataset, "reading the pointer", lambda: pointer_record(dataset, version))
    return record or {}


# -- the publisher (under the lock) ----------------------------------------------------------
def begin(
    dataset: RemoteDir, version: str, key: str, shard_bytes: int, *, fresh: bool = False
) -> RemoteDir:
    """The generation a prepare of plan `key` (shards of about `shard_bytes`) uploads into:
    the one a killed prepare of the same plan left (unless `fresh`), else a new one, its
    marker written first. The generation the pointer names is never resumed nor removed (a
    prepare killed after publishing, before removing its marker); one with its
    dataset_info.json that no pointer names (killed just before publishing) is resumed: no
    reader has seen it, and the same plan writes the same bytes."""
    ours = f"{version}{INCOMPLETE}{key}"
    generations = _generations(dataset, version)
    current = _pointer(dataset, version)
    resumed = None
    for marker, generation in _markers(dataset, version).items():
        if marker == ours and not fresh and generation is not None and generation != current:
            resumed = dataset / generation
            continue
        if generation is not None and generation != current:
            objects = sorted(generations.get(generation, {}), key=lambda n: n != INFO_FILE)
            delete([dataset / generation / n for n in objects])  # dataset_info.json first
        delete([dataset / marker])
    if resumed is not None:
        return resumed
    while True:
        name = f"{version}{GENERATION}{secrets.token_hex(6)}"
        if name not in generations:
            break
    note = {"generation": name, "plan": key, "shard_bytes": shard_bytes}
    put_bytes(json.dumps(note).encode(), dataset / ours)
    return dataset / name


def discard(dataset: RemoteDir, version: str, key: str, generation: RemoteDir) -> None:
    """Remove an unfinished generation (unless a pointer names it) and its marker (a prepare
    that failed)."""
    if _pointer(dataset, version) != generation.name:
        objects = sorted(listing(generation), key=lambda n: n != INFO_FILE)
        delete([generation / name for name in objects])  # dataset_info.json first
    delete([dataset / f"{version}{INCOMPLETE}{key}"])


def publish(
    dataset: RemoteDir, version: str, key: str, generation: RemoteDir, info: DatasetInfo
) -> list[str]:
    """Check every shard of `info` in `generation`, upload its dataset_info.json, move the
    pointer to it and drop the marker; then `collect`. The generations removed."""
    stored = stored_shards(generation)
    for split in info.splits.values():
        for shard in split.shards:
            got = stored.get(shard.file)
            if got is None or (got.num_bytes, got.sha256) != (shard.num_bytes, shard.sha256):
                found = "missing" if got is None else f"{got.num_bytes} bytes, sha256 {got.sha256}"
                raise StorageError(
                    f"{generation / shard.file}: {found} in the bucket, but it was written as "
                    f"{shard.num_bytes} bytes, sha256 {shard.sha256}; prepare again"
                )
    body = (json.dumps(info.to_json(), indent=2) + "\n").encode()
    put_bytes(body, generation / INFO_FILE)
    previous = _pointer(dataset, version)
    if previous == generation.name:  # published already, by a prepare killed after that
        previous = _pointer_record(dataset, version).get("previous")
    retrying(
        dataset,
        "publishing",
        lambda: write_pointer(dataset, version, generation.name, previous),
    )
    delete([dataset / f"{version}{INCOMPLETE}{key}"])
    return collect(dataset, version)


def collect(dataset: RemoteDir, version: str) -> list[str]:
    """Remove the generations the grace rule (module docstring) does not keep; their names."""
    record = _pointer_record(dataset, version)
    current = record.get("generation")
    generations = _generations(dataset, version)
    markers = _markers(dataset, version)
    keep = {current, *markers.values()}
    if record.get("previous"):
        keep.add(record["previous"])
    complete = {g: objects[INFO_FILE].modified for g, objects in generations.items()
                if INFO_FILE in objects}  # fmt: skip
    older = sorted((g for g in complete if g not in keep), key=lambda g: complete[g])
    if current is not None and older and "previous" not in record:  # an older catalog's pointer
        keep.add(older[-1])  # the one published before the current one
    doomed = [g for g in generations if g not in keep]
    for generation in doomed:  # dataset_info.json first: a half-removed one is no dataset
        objects = sorted(generations[generation], key=lambda n: n != INFO_FILE)
        delete([dataset / generation / name for name in objects])
    return doomed


def generation_sizes(dataset: RemoteDir, version: str) -> dict[str, int]:
    """Every generation of `version` in the bucket (published or not) and its size in bytes."""
    return {
        name: sum(entry.size for entry in objects.values())
        for name, objects in _generations(dataset, version).items()
    }


def remove(dataset: RemoteDir, version: str) -> tuple[list[str], int]:
    """Remove the dataset: the pointer first (it is then no longer prepared), every
    generation and marker; the names of what was there and its size in bytes."""
    generations = _generations(dataset, version)
    markers = _markers(dataset, version)
    pointer = dataset / pointer_name(version)
    present = pointer_name(version) in listing(dataset)
    size = sum(e.size for objects in generations.values() for e in objects.values())
    delete([pointer])
    for generation, objects in generations.items():
        ordered = sorted(objects, key=lambda n: n != INFO_FILE)
        delete([dataset / generation / name for name in ordered])
    delete([dataset / marker for marker in markers])
    names = ([pointer.name] if present else []) + sorted(generations) + sorted(markers)
    return names, size


def prepared(data_dir: RemoteDir) -> list[tuple[str, str, str]]:
    """Every dataset published under `data_dir`: (``name[/config]``, version, generation)."""
    found = []
    suffix = pointer_name("")
    for name in sorted(listing(data_dir)):
        folder, _, file = name.rpartition("/")
        if not folder or not file.endswith(suffix) or GENERATION in folder:
            continue
        version = file[: -len(suffix)]
        generation = _pointer(data_dir / folder, version)
        if generation is not None:
            found.append((folder, version, generation))
    return found


def published(dataset: RemoteDir, version: str) -> tuple[RemoteDir, dict[str, Any]] | None:
    """The generation the pointer names and its dataset_info.json (as JSON), or None."""
    name = _pointer(dataset, version)
    if name is None:
        return None
    data = read_bytes(dataset / name / INFO_FILE)
    if data is None:
        return None
    try:
        info = json.loads(data)
    except ValueError as error:
        raise StorageError(f"{dataset / name / INFO_FILE} is unreadable ({error})") from None
    return dataset / name, info
