"""What each split's reader gets: the file references of a builder spec (a download, or a
member or glob inside its archive) resolved to paths, in natural order (``batch_2`` before
``batch_10``), with the split's options; and the check that the class names the source files
declare are the spec's."""

from __future__ import annotations

import glob
import re
import zipfile
from pathlib import Path

from catalog.download import CachedFile, DownloadManager
from catalog.download.extract import archive_format
from catalog.errors import SourceFormatError
from catalog.features import ClassLabel
from catalog.features.class_label import abbreviate
from catalog.formats import FORMATS, Source, SourceFile
from catalog.spec.model import BuilderSpec, FileRef, SplitSpec

__all__ = ["check_class_names", "split_sources"]


def _natural_order(path: Path) -> list[str | int]:
    """Sort key putting ``batch_2`` before ``batch_10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.as_posix())]


def _zip_member(file: CachedFile, member: str, where: str) -> zipfile.Path | None:
    """`member` of a zip download, to read in place; None if the download is not a zip or
    `member` is a glob."""
    if glob.has_magic(member) or file.path.is_dir() or archive_format(file.path) != "zip":
        return None
    found = zipfile.Path(file.path, member)
    if found.is_file():
        return found
    if zipfile.Path(file.path, member.rstrip("/") + "/").exists():
        return None  # a directory: extracted as usual
    raise SourceFormatError(f"{where}: {member!r} in {file.filename} is not a file in the zip")


def _resolve(
    ref: FileRef,
    files: dict[str, CachedFile],
    manager: DownloadManager,
    where: str,
    many: bool,
    stream: bool = False,
) -> tuple[SourceFile, ...]:
    """The paths a file reference names: the download itself, or the members of its archive
    (extracted once, into the download dir) its path or glob matches, in natural order. For a
    role that streams, a zip's member is read in place instead (the zip is not extracted)."""
    file = files[ref.download]
    if ref.member is None:
        return (file.path,)
    member = _zip_member(file, ref.member, where) if stream else None
    if member is not None:
        return (member,)
    root = manager.extract(file)
    if ref.member == ".":  # the extracted archive's top folder itself
        return (root,)
    found = sorted(root.glob(ref.member), key=_natural_order)
    if found and (many or len(found) == 1):
        return tuple(found)
    where = f"{where}: {ref.member!r} in {file.filename} ({root})"
    if not found:
        held = ", ".join(sorted(p.name for p in root.iterdir())[:10])
        raise SourceFormatError(f"{where} matches no file; the archive holds {held}")
    shown = ", ".join(str(p.relative_to(root)) for p in found[:5])
    raise SourceFormatError(f"{where} must match one file, matches {shown}")


def split_sources(
    spec: BuilderSpec, files: dict[str, CachedFile], manager: DownloadManager, scratch: Path
) -> dict[str, Source]:
    """What each split's reader gets: its files and its options, file references resolved
    against the downloaded `files` (archives extracted once, into the download dir). Also used
    for a spec made in memory that reads its files before it is complete (a Croissant file's,
    whose example counts are found by reading)."""
    sources = {}
    for split in spec.splits.values():
        where = f"{spec.full_name}: splits.{split.name}"
        fmt = FORMATS[split.format]
        roles = {role.name: role for role in fmt.roles}
        paths = {
            name: _resolve(
                ref, files, manager, f"{where}.files.{name}", roles[name].many, roles[name].stream
            )
            for name, ref in split.files.items()
        }
        options = {
            name: {
                key: _resolve(ref, files, manager, f"{where}.options.{name}.{key}", False)[0]
                for key, ref in value.items()
            }
            if fmt.options[name].kind == "file_map"
            else value
            for name, value in split.options.items()
        }
        sources[split.name] = Source(
            split.name, paths, options, spec.features, scratch / split.name
        )
    return sources


def check_class_names(spec: BuilderSpec, split: SplitSpec, source: Source) -> None:
    """The class names the source files declare must be the spec's, in the same order."""
    declared = FORMATS[split.format].class_names
    for feature, (path, names) in (declared(source) if declared else {}).items():
        label = spec.features[feature]
        assert isinstance(label, ClassLabel)  # checked when the spec was loaded
        if names != label.names:
            where = spec.path / "builder.yaml" if spec.path else "the builder spec"
            first = next(
                (i for i, (a, b) in enumerate(zip(names, label.names, strict=False)) if a != b),
                min(len(names), len(label.names)),
            )
            got = names[first] if first < len(names) else "(end)"
            want = label.names[first] if first < len(label.names) else "(end)"
            raise SourceFormatError(
                f"{path} names {len(names)} classes ({abbreviate(names)}) but {where} gives "
                f"feature {feature!r} {len(label.names)} ({abbreviate(label.names)}); first "
                f"difference at index {first}: {got!r} in the file, {want!r} in the spec"
            )
