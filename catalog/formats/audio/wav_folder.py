"""WAV files under a folder (an extracted archive), labelled by their path; optional listing
files choosing a split's files, and long recordings cut into windows.

Which files: every file under the root whose path relative to it matches option
``pattern`` (a glob, ``*`` also matching ``/``; default ``*.wav``), except hidden ones (a
part starting with ``.``, as TFDS skips them). Then, if option ``include`` names listing files
(text files in the archive, one relative path per line) or ``include_paths`` gives paths,
only those; paths in ``exclude`` listing files or in ``exclude_paths`` are left out. Listed
paths are normalised (``./a//b.wav`` is ``a/b.wav``); an included path that is not there is
an error naming the listing file and line.

The label: option ``label``, a regular expression searched in the relative path whose group
``label`` is the label text (default ``^(?P<label>[^/]+)/``: the first folder). Option
``labels`` maps label texts to class names (``_background_noise_: _silence_``); a text that is
no class name then takes option ``other`` (``_unknown_``), and without it is an error.
With ``labelled: false`` the files have no class (Hugging Face's audiofolder without class
folders): no ``label`` feature.

Windows: files matching a glob of option ``windows`` are decoded and cut into clips of
``window`` samples starting at 0, ``hop``, 2 * ``hop``, ... for every start < length -
``window`` (as TFDS cuts speech_commands' background noise: the tail is dropped); each clip is
an example keyed ``<path>@<start>`` and stored as a new WAV file. Every other file is stored as
it is (the Audio feature checks its header), keyed by its path. The optional ``filename`` or
``audio/filename`` (TFDS's name) feature gets the file's name. Option ``metadata`` names a
``metadata.csv`` or ``metadata.jsonl`` file in the root, a row per file (``file_name``: its path
under the root), and ``metadata_columns`` (``{feature: column}``) the columns each example gets
from its row (`catalog.formats.tables.folder_metadata`; a file without a row is an error). With
option
``soundfile``, files are decoded with soundfile (FLAC and other formats it reads; see
`catalog.formats.audio.sound_files`) and their samples stored as WAV. Files are read one at a time,
in
path order.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from catalog.errors import FeatureError, SourceFormatError
from catalog.features import Audio, ClassLabel, FeaturesDict
from catalog.features.wav import read_header, read_samples
from catalog.formats.audio.sound_files import decode_sound
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.formats.tables.folder_metadata import load_metadata, unused_rows
from catalog.storage.tree_walk import files_under

__all__ = ["FORMAT", "examples", "window_starts"]


#: The Text features that get the file's name (``audio/filename``: TFDS's spoken_digit).
_NAME_FEATURES = ("filename", "audio/filename")


def window_starts(length: int, window: int, hop: int) -> range:
    """Where the windows of a recording of `length` samples start.

    >>> list(window_starts(40000, 16000, 8000)), list(window_starts(16000, 16000, 8000))
    ([0, 8000, 16000], [])
    """
    return range(0, max(length - window, 0), hop)


def _listed(lists: Mapping[str, Path], *, check: set[str] | None) -> set[str]:
    """The normalised paths the listing files give; with `check`, each must be in it."""
    paths = set()
    for file in lists.values():
        try:
            lines = file.read_text("utf-8").splitlines()
        except UnicodeDecodeError:
            raise SourceFormatError(f"{file}: a listing file must be UTF-8 text") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            path = posixpath.normpath(line.strip())
            if check is not None and path not in check:
                raise SourceFormatError(f"{file}:{number}: {line.strip()!r} is not in the folder")
            paths.add(path)
    return paths


def _files(root: Path, pattern: str) -> dict[str, Path]:
    found = {}
    for file in files_under(root, hidden=False):
        relative = file.relative_to(root).as_posix()
        if fnmatch.fnmatchcase(relative, pattern):
            found[relative] = file
    return dict(sorted(found.items()))


def examples(source: Source) -> Examples:
    """Yield ``(path or path@start, {"audio": ..., "label": ...})`` as the module says."""
    root, options = source.file("root"), source.options
    if not root.is_dir():
        raise SourceFormatError(f"{root}: expected a directory of WAV files")
    files = _files(root, options["pattern"])
    chosen = set(files)
    if options["include"] or options["include_paths"]:
        chosen = _listed(options["include"], check=chosen)
        for path in options["include_paths"]:
            if path not in files:
                raise SourceFormatError(f"{root}: options.include_paths: no file {path!r}")
            chosen.add(path)
    chosen -= _listed(options["exclude"], check=None) | set(options["exclude_paths"])
    label_of = _labeller(source)
    named = [name for name in _NAME_FEATURES if name in source.features]
    rows = None
    if options["metadata"]:
        rows = load_metadata(
            root / options["metadata"], options["metadata_columns"], source.features
        )
    for relative in sorted(chosen):
        extra: dict[str, Any] = {name: posixpath.basename(relative) for name in named}
        if label_of is not None:
            extra["label"] = label_of(relative)
        if rows is not None:
            if relative not in rows:
                raise SourceFormatError(
                    f"{root / relative}: no row for this file in {options['metadata']}"
                )
            extra.update(rows[relative])
        if any(fnmatch.fnmatchcase(relative, p) for p in options["windows"]):
            for start, clip in _windows(files[relative], options["window"], options["hop"]):
                yield f"{relative}@{start}", {"audio": clip, **extra}
        else:
            audio: Any = files[relative]
            if options["soundfile"]:
                feature = source.features["audio"]
                assert isinstance(feature, Audio)  # checked when the spec was loaded
                audio = decode_sound(audio, feature)
            yield relative, {"audio": audio, **extra}
    if rows is not None:
        unused_rows(root / options["metadata"], rows, chosen)


def _windows(path: Path, window: int, hop: int) -> Iterator[tuple[int, Any]]:
    data = bytearray(path.read_bytes())
    try:
        samples = read_samples(data, read_header(data, str(path)))
    except FeatureError as error:
        raise SourceFormatError(error.reason) from None
    if samples.shape[1] == 1:
        samples = samples[:, 0]
    for start in window_starts(len(samples), window, hop):
        yield start, samples[start : start + window]


def _labeller(source: Source) -> Any:
    """The function giving a file's class name, or None for unlabelled files."""
    if not source.options["labelled"]:
        return None
    options, feature = source.options, source.features["label"]
    assert isinstance(feature, ClassLabel)  # checked when the spec was loaded
    pattern, mapping, other = re.compile(options["label"]), options["labels"], options["other"]
    names = set(feature.names)

    def label(relative: str) -> str:
        match = pattern.search(relative)
        if match is None:
            raise SourceFormatError(
                f"{source.file('root') / relative}: options.label {pattern.pattern!r} finds no "
                "label in this path"
            )
        text: str = mapping.get(match["label"], match["label"])
        if text in names:
            return text
        if other:
            return str(other)
        raise SourceFormatError(
            f"{source.file('root') / relative}: label {text!r} is no class name of feature "
            "'label'; map it with options.labels, or give options.other"
        )

    return label


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if not isinstance(features["audio"], Audio):
        return f"feature 'audio' must be Audio, got {features['audio']!r}"
    if not options["labelled"]:
        if options["labels"] or options["other"]:
            return "options.labels and options.other need labelled files"
        return _validate_windows(options)
    label = features["label"]
    if not isinstance(label, ClassLabel):
        return f"feature 'label' must be a ClassLabel, got {label!r}"
    try:
        if "label" not in re.compile(options["label"]).groupindex:
            return f"options.label {options['label']!r} needs a group (?P<label>...)"
    except re.error as error:
        return f"options.label {options['label']!r} is not a regular expression: {error}"
    for text in [*options["labels"].values(), *([options["other"]] if options["other"] else [])]:
        if text not in label.names:
            return f"{text!r} (options.labels/other) is no class name of feature 'label'"
    return _validate_windows(options)


def _validate_windows(options: Mapping[str, Any]) -> str | None:
    if options["windows"] and (options["window"] < 1 or options["hop"] < 1):
        return "options.windows needs options.window and options.hop (in samples, >= 1)"
    return None


FORMAT = SourceFormat(
    name="wav_folder",
    description="WAV files in a folder, labelled by path; listing files; windows of long files",
    roles=(Role("root"),),
    options={
        "pattern": Option("str", "*.wav", "glob of the files that are examples"),
        "label": Option("str", r"^(?P<label>[^/]+)/", "regex; group 'label' is the label"),
        "labels": Option("str_map", {}, "label text -> class name"),
        "other": Option("str", "", "class of label texts that are no class name"),
        "include": Option("file_map", {}, "listing files of the split's files"),
        "include_paths": Option("strs", [], "more files of the split"),
        "exclude": Option("file_map", {}, "listing files of files to leave out"),
        "exclude_paths": Option("strs", [], "more files to leave out"),
        "windows": Option("strs", [], "globs of files cut into windows"),
        "window": Option("int", 0, "window length, in samples"),
        "hop": Option("int", 0, "samples from one window's start to the next"),
        # Added later: left out of fingerprints at their defaults (see Option).
        "metadata": Option(
            "str", "", "metadata.csv/.jsonl in the root: a row per file", counted_at_default=False
        ),
        "soundfile": Option(
            "bool",
            False,
            "decode files with soundfile (FLAC...), store WAV",
            counted_at_default=False,
        ),
        "metadata_columns": Option(
            "str_map", {}, "feature -> a column of the metadata file", counted_at_default=False
        ),
        "labelled": Option(
            "bool", True, "false: files without classes, no label", counted_at_default=False
        ),
    },
    features=lambda options: (
        frozenset(
            {"audio", *(["label"] if options["labelled"] else []), *options["metadata_columns"]}
        ),
        frozenset(_NAME_FEATURES),
    ),
    examples=examples,
    validate=_validate,
)
