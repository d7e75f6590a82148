"""Which files make which split: split names from folder and file names, and the download
and file reference a split's files are read through.

Split names follow Hugging Face's folder-based builders: a folder named, or a file whose
name holds the word (words parted by ``-``, ``_``, ``.``, spaces and digits, as Hugging Face's
file patterns part them), ``train``/``training`` is the ``train`` split,
``validation``/``valid``/``val``/``dev`` the ``validation`` split,
``test``/``testing``/``eval``/``evaluation`` the ``test`` split: ``mnist_test.csv`` is
``test``. Without such names there is one split, ``train``; files of which some name a split
and others do not are refused (one of them would be read into the wrong split).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from catalog.errors import SpecError
from catalog.formats.tables.compressed import compression, inner_suffix
from catalog.spec.local_files import measured_download
from catalog.spec.model import DownloadSpec, FileRef

__all__ = [
    "SPLIT_NAMES",
    "SplitFiles",
    "expand",
    "glob_of",
    "split_files",
    "split_of",
    "split_refs",
]

#: A folder or file name (its first word) -> the split it holds.
SPLIT_NAMES = {
    **dict.fromkeys(["train", "training"], "train"),
    **dict.fromkeys(["validation", "valid", "val", "dev"], "validation"),
    **dict.fromkeys(["test", "testing", "eval", "evaluation"], "test"),
}
_SPLIT_ORDER = ("train", "validation", "test")
_WORDS = re.compile(r"[-._ 0-9]+")  # what parts the words of a file name (Hugging Face's)


def split_of(name: str) -> str | None:
    """The split a file or folder name says it holds, or None (no word of it names a split,
    or words name two: ``train_test.csv``).

    >>> split_of("train.csv"), split_of("val"), split_of("test-00001.tar"), split_of("data.csv")
    ('train', 'validation', 'test', None)
    >>> split_of("fashion-mnist_test.csv"), split_of("contest.csv"), split_of("train_test.csv")
    ('test', None, None)
    """
    found = {SPLIT_NAMES.get(word) for word in _WORDS.split(name.lower())} - {None}
    return found.pop() if len(found) == 1 else None


@dataclass(frozen=True)
class SplitFiles:
    """The files of one split: in the folder `base`, those the glob `pattern` (relative to
    `base`) matches."""

    files: tuple[Path, ...]
    base: Path
    pattern: str


def expand(text: str, suffixes: Sequence[str]) -> tuple[list[Path], Path, str]:
    """The files a path argument names (a file, a folder's files with one of `suffixes`, or a
    glob), the folder they are in and the glob relative to it; SpecError when none."""
    path = Path(text).expanduser()
    if glob.has_magic(text):
        base = Path(text).expanduser().parent
        if glob.has_magic(str(base)):
            raise SpecError(f"{text}: a glob may have patterns in its last part only")
        pattern = path.name
        files = sorted(p for p in base.glob(pattern) if p.is_file())
    elif path.is_dir():
        base = path
        files = sorted(
            p for p in path.iterdir() if p.is_file() and _kind_suffix(p, suffixes) is not None
        )
        kinds = sorted({str(_kind_suffix(p, suffixes)) for p in files})
        if len(kinds) > 1:
            raise SpecError(
                f"{text}: holds {', '.join(kinds)} files; name the ones to read (a file or a "
                "quoted glob such as 'data/*.csv')"
            )
        pattern = f"*{kinds[0]}" if kinds else "*"
    else:
        return [path], path.parent, path.name
    files = [f for f in files if not f.name.startswith(".")]
    if not files:
        raise SpecError(f"{text}: no files to read ({', '.join(suffixes)})")
    return files, base, pattern


def _kind_suffix(path: Path, suffixes: Sequence[str]) -> str | None:
    """The suffix that makes `path` one of `suffixes`' kind, as written: ``.csv``, or
    ``.csv.gz`` for a compressed one (`catalog.formats.tables.compressed`); None: another kind."""
    if path.suffix.lower() in suffixes:
        return path.suffix
    if compression(path) is not None and inner_suffix(path) in suffixes:
        return Path(path.stem).suffix + path.suffix
    return None


def glob_of(paths: Sequence[str]) -> str:
    """One glob matching exactly the files `paths` name, all in one folder (what a shell made
    of an unquoted glob): their names' common start, ``*``, their common end; SpecError when
    they are in several folders, are not files, or no such glob names exactly them.

    A split is then taken from each file's name as for a folder (`split_files`).
    """
    files = [Path(p).expanduser() for p in paths]
    if not all(f.is_file() for f in files):
        other = next(p for p, f in zip(paths, files, strict=True) if not f.is_file())
        raise SpecError(
            f"{other}: several paths are one dataset only as files of one folder (a folder "
            "is one dataset by itself: give it alone)"
        )
    folders = {f.resolve().parent for f in files}
    if len(folders) > 1:
        raise SpecError(
            f"the paths are in {len(folders)} folders; several paths are one dataset when they "
            "are files of one folder: move them into one, or prepare a folder of them"
        )
    names = sorted({f.name for f in files})
    start = os.path.commonprefix(names)  # noqa: RUF071 (characters are meant)
    end = os.path.commonprefix([n[len(start) :][::-1] for n in names])[::-1]  # noqa: RUF071
    pattern = glob.escape(start) + "*" + glob.escape(end)
    base = files[0].parent
    matched = {p.name for p in base.glob(pattern) if p.is_file() and not p.name.startswith(".")}
    if matched != set(names):
        extra = sorted(matched - set(names))
        raise SpecError(
            f"{base}: the files given are not all that {pattern} matches ({extra[0]} too); "
            "quote the glob you meant (catalog prepare 'DIR/*.csv'), or move the others away"
        )
    return str(base / pattern)


def split_files(files: list[Path], base: Path, pattern: str) -> dict[str, SplitFiles]:
    """The files grouped by split: by their names when every file names one, else all in
    ``train``."""
    named = {f: split_of(f.name) for f in files}
    if len(files) == 1 or not any(named.values()):
        return {"train": SplitFiles(tuple(files), base, pattern)}
    unnamed = [f for f, split in named.items() if split is None]
    if unnamed:
        some = next(f for f, split in named.items() if split is not None)
        raise SpecError(
            f"{base}: {some.name} is of split {named[some]!r} by its name, but "
            f"{unnamed[0].name} names no split (train, validation or test); name every file's "
            "split, or give the files of one split alone (a file, or a quoted glob)"
        )
    groups: dict[str, list[Path]] = {}
    for file, split in named.items():
        assert split is not None
        groups.setdefault(split, []).append(file)
    out = {}
    for split in sorted(groups, key=_SPLIT_ORDER.index):
        chosen = groups[split]
        if len(chosen) == 1:
            out[split] = SplitFiles((chosen[0],), base, chosen[0].name)
            continue
        try:  # their names' common start, *, their common end: matching them only
            glob_ = Path(glob_of([str(f) for f in chosen])).name
        except SpecError:
            raise SpecError(
                f"{base}: no one pattern matches the files of split {split!r} "
                f"({', '.join(f.name for f in chosen)}) and no others; give one folder per "
                "split, or name the files of a split alike (train-1.csv, train-2.csv)"
            ) from None
        out[split] = SplitFiles(tuple(chosen), base, glob_)
    return out


def split_refs(splits: dict[str, SplitFiles]) -> tuple[dict[str, DownloadSpec], dict[str, FileRef]]:
    """The downloads the splits read and each split's file reference: a split of one file
    reads that file (its own download); a split of several files reads them by glob from their
    folder (one download of the folder, its every file recorded)."""
    downloads: dict[str, DownloadSpec] = {}
    refs: dict[str, FileRef] = {}
    for split, group in splits.items():
        if len(group.files) == 1:
            name = f"{split}_file"
            downloads[name] = measured_download(name, group.files[0])
            refs[split] = FileRef(name)
        else:
            matched = sorted(p for p in group.base.glob(group.pattern) if p.is_file())
            if matched != sorted(group.files):
                other = sorted(set(matched) - set(group.files))
                raise SpecError(
                    f"{group.base}: {group.pattern} also matches {other[0].name}, which is "
                    "not read (a hidden file?); move it away or name the files to read"
                )
            if "folder" not in downloads:
                downloads["folder"] = measured_download("folder", group.base)
            refs[split] = FileRef("folder", group.pattern)
    return downloads, refs
