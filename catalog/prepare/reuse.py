"""How a spec relates to a prepared copy: the info a spec declares before anything is prepared,
whether a copy on disk was prepared from this spec, and whether it can be reused as it is."""

from __future__ import annotations

from catalog.info.dataset_info import DatasetInfo
from catalog.spec.declared import declared_info
from catalog.spec.model import BuilderSpec, images_max_side
from catalog.storage.data_dir import Location, Opened, Store
from catalog.storage.shards import is_compressed

__all__ = ["declared_info", "foreign_to", "reusable", "serves"]


def foreign_to(info: DatasetInfo, spec: BuilderSpec, folder: Location) -> str | None:
    """Why the copy this info describes (in `folder`) was not prepared from `spec`, or None
    when it was (or an older catalog did not record it)."""
    theirs, ours = images_max_side(info.features), spec.image_max_side
    if theirs != ours:  # checked first: a copy's image size is never taken for another's
        return (
            f"{folder} holds {info.full_name} {info.version} with images {_sized(theirs)}, "
            f"not {_sized(ours)} as asked"
        )
    if info.fingerprint is None or info.fingerprint == spec.fingerprint:
        return None
    here = str(spec.path or "")
    origin = (
        f"another version of the builder in {here} (its features, splits or downloads differ)"
        if info.builder_path == here
        else f"another builder ({info.builder_path or 'not recorded'}), not {here}"
    )
    return f"{folder} holds {info.full_name} {info.version} prepared from {origin}"


def _sized(max_side: int | None) -> str:
    return "at full size" if max_side is None else f"at most {max_side} px on a side"


def reusable(
    spec: BuilderSpec,
    store: Store,
    target: Location,
    max_examples_per_split: int | None = None,
    opened: Opened | None = None,
) -> DatasetInfo | None:
    """The info of the copy prepared in `target` if it holds what is asked for, else None.

    It must have been prepared from `spec` (`BuilderSpec.fingerprint`), in uncompressed shards
    of any group size (copies an older catalog compressed are prepared again: forked readers of
    them crash, `catalog.read.array_record`), with every shard present at its recorded size (all
    read from the one generation `target` names, `catalog.storage.generations`). Its split
    counts tell the rest: a full copy (every split as the spec expects) serves any request; a
    copy prepared with
    ``max_examples_per_split=N`` (min(N, expected) per split) serves only the same limit, so
    preparing without one replaces it. `opened`: the generation, when the caller opened it.
    """
    if opened is None:  # (unless the caller opened it) resolved once, held while checked
        opened = store.open(target)
    if opened is None:
        return None
    return serves(store, opened, spec, target, max_examples_per_split)


def serves(
    store: Store,
    opened: Opened,
    spec: BuilderSpec,
    target: Location,
    max_examples_per_split: int | None = None,
) -> DatasetInfo | None:
    """`reusable` for a generation opened already (`Store.open`)."""
    return _serves(opened.info, spec, target, store.shard_sizes(opened), max_examples_per_split)


def _serves(
    info: DatasetInfo,
    spec: BuilderSpec,
    target: Location,
    sizes: dict[str, int],
    max_examples_per_split: int | None,
) -> DatasetInfo | None:
    """`info` if the copy it describes (its shards of `sizes`) serves the request."""
    # the other writer options (the group size) are how the shards are laid out, not what
    # they hold: every reader reads any group size, so they are no reason to prepare again
    if is_compressed(info.shard_options) or foreign_to(info, spec, target):
        return None
    for split in info.splits.values():
        for shard in split.shards:
            if sizes.get(shard.file) != shard.num_bytes:
                return None
    counts = {name: s.num_examples for name, s in info.splits.items()}
    full = {name: s.num_examples for name, s in spec.splits.items()}
    limit = max_examples_per_split
    if counts == full or (
        limit is not None and counts == {n: min(limit, c) for n, c in full.items()}
    ):
        return info
    return None
