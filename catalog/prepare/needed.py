"""Which downloads a spec's splits read, and the spec without the splits whose optional
manual file is absent (as TFDS prepares ImageNet without its test tar)."""

from __future__ import annotations

import sys
from pathlib import Path

from catalog.spec.model import BuilderSpec, FileRef, SplitSpec

__all__ = ["needed_downloads", "split_downloads", "without_absent"]


def without_absent(spec: BuilderSpec, manual_dir: Path, *, say: bool = True) -> BuilderSpec:
    """`spec` without the splits that read an optional manual file (``optional: true``) not
    in `manual_dir`, said on stderr (as TFDS prepares ImageNet without its test tar). It
    keeps the whole spec's fingerprint (`BuilderSpec.whole`): its copy is the builder's, read
    as usual, and reused while the file is absent; once the file is placed, the whole spec
    asks for a split the copy lacks, and the dataset is prepared again with it."""
    absent = {
        d.name
        for d in spec.downloads.values()
        if d.optional and not (manual_dir / d.filename).exists()
    }
    left_out = [s.name for s in spec.splits.values() if split_downloads(s) & absent]
    if not left_out or len(left_out) == len(spec.splits):
        return spec  # nothing absent, or nothing left to prepare: the usual error says what
    if say:
        files = ", ".join(sorted(spec.downloads[n].filename for n in absent))
        names = ", ".join(repr(s) for s in left_out)
        print(
            f"{spec.full_name}: {files} is not in the manual dir ({manual_dir}): preparing "
            f"without split {names}; place it there and prepare again to add it",
            file=sys.stderr,
        )
    splits = {n: s for n, s in spec.splits.items() if n not in left_out}
    kept = {name for split in splits.values() for name in split_downloads(split)}
    downloads = {n: d for n, d in spec.downloads.items() if n in kept or n not in absent}
    return spec.replace(splits=splits, downloads=downloads, whole=spec.fingerprint)


def needed_downloads(spec: BuilderSpec) -> set[str]:
    """The downloads the spec's splits read: those their `files` and file-valued `options`
    (a file reference, or a map of them) name."""
    return {name for split in spec.splits.values() for name in split_downloads(split)}


def split_downloads(split: SplitSpec) -> set[str]:
    """The downloads one split reads (`needed_downloads`)."""
    needed = {ref.download for ref in split.files.values()}
    for value in split.options.values():
        refs = value.values() if isinstance(value, dict) else (value,)
        needed.update(ref.download for ref in refs if isinstance(ref, FileRef))
    return needed
