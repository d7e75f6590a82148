"""Folders of images or audio files -> a spec of ``image`` (or ``audio``) + ``label``. The layout
is Hugging Face's imagefolder/audiofolder: ``<root>/<split>/<class>/<file>``, where the split
folders are named as `catalog.spec.infer.layout` says (train, validation, test...); without
split folders, ``<root>/<class>/<file>`` is one ``train`` split. Files that lie directly in the
split folders (or the root), with no class folders, are unlabelled: ``image`` (or ``audio``)
only, plus their metadata columns, as Hugging Face's imagefolder and audiofolder do. The class
names are the class folders' names over every split, sorted (``label`` 0 is the first); other
files (notes, hidden files) are left out, those in class folders named in a note. Images are PNG
or JPEG files of any size, stored byte for byte, or files Pillow reads (a GIF's first frame,
TIFF, BMP, WebP), stored losslessly as PNG; the channels (1, 3 or 4) are the dataset's, chosen
as `catalog.spec.infer.image_channels` says (``--channels``, else what most images have; the
others converted, the conversion recorded in the description). Audio is WAV: the sample rate,
channels and sample type come from the first file, and every other file must match (the Audio
feature checks each one's header). A ``metadata.csv`` or ``metadata.jsonl`` in a split folder
(Hugging Face's convention: a ``file_name`` column, the file's path under that folder, e.g.
``cat/1.png``) adds its other columns as features, typed as `catalog.spec.infer.tables` types a
table's columns; every split then needs one, with the same columns. The whole folder is one
download, recorded file by file (`catalog.download.local_tree`). Folders are walked by
`catalog.storage.tree_walk`: symlinked folders within the root are followed, one leaving it (or
a loop) is an error.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from catalog.errors import FeatureError, SourceFormatError, SpecError
from catalog.features import Audio, ClassLabel, Feature, Image
from catalog.features.wav import read_header
from catalog.spec.infer.common import InferOptions, complete_options, feature_names, make_spec
from catalog.spec.infer.image_channels import folder_images
from catalog.spec.infer.layout import SPLIT_NAMES
from catalog.spec.local_files import measured_download
from catalog.spec.model import BuilderSpec, FileRef, SplitSpec
from catalog.storage.tree_walk import files_under

_METADATA = ("metadata.csv", "metadata.jsonl")  # catalog.formats.tables.folder_metadata's names

__all__ = ["AUDIO_SUFFIXES", "IMAGE_SUFFIXES", "infer_folder", "media_kind"]

#: Image files a folder's spec reads: PNG and JPEG stored byte for byte, the others Pillow
#: reads (a GIF's first frame, TIFF, BMP, WebP) decoded and stored losslessly as PNG.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".tif", ".tiff", ".bmp", ".webp")
#: The `image_folder` pattern of the same files (case-insensitive, as the suffixes are).
_IMAGE_MATCH = r"[^/]+\.(?i:png|jpe?g|gif|tiff?|bmp|webp)"
AUDIO_SUFFIXES = (".wav", ".flac")
#: Audio files catalog does not store yet (lossy: no exact samples to keep), named in the error.
_OTHER_AUDIO = (".mp3", ".ogg", ".m4a")
_LIMIT_SCAN = 10_000  # files looked at to tell images from audio


def _visible(path: Path, root: Path) -> bool:
    return not any(p.startswith(".") for p in path.relative_to(root).parts)


def media_kind(root: Path) -> str | None:
    """``"image"`` or ``"audio"`` for a folder holding such files (looking at the first
    files found), else None."""
    for file in itertools.islice(files_under(root, hidden=False), _LIMIT_SCAN):
        suffix = file.suffix.lower()
        if not file.is_file() or not _visible(file, root):
            continue
        if suffix in IMAGE_SUFFIXES:
            return "image"
        if suffix in AUDIO_SUFFIXES:
            return "audio"
        if suffix in _OTHER_AUDIO:
            raise SpecError(
                f"{file}: {suffix[1:].upper()} audio is not supported yet: the Audio feature "
                "stores WAV and FLAC files (convert them, e.g. with ffmpeg)"
            )
    return None


def _split_roots(root: Path) -> dict[str, Path]:
    """``{split: folder}``: the split folders (named exactly ``train``, ``val``, ...), or the
    root as the one ``train`` split when no folder is named so."""
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    named = {p: SPLIT_NAMES.get(p.name.lower()) for p in folders}
    if not any(named.values()):
        return {"train": root}
    others = [p.name for p, split in named.items() if split is None]
    if others:
        splits = ", ".join(p.name for p, split in named.items() if split)
        raise SpecError(
            f"{root}: some folders are splits ({splits}) and some are not ({', '.join(others)}); "
            "use <root>/<split>/<class>/<file>, or <root>/<class>/<file> for one split"
        )
    out: dict[str, Path] = {}
    for folder, split in named.items():
        assert split is not None
        if split in out:
            raise SpecError(
                f"{root}: {out[split].name} and {folder.name} both hold split {split!r}"
            )
        out[split] = folder
    return {s: out[s] for s in ("train", "validation", "test") if s in out}


def _files(
    split_root: Path, suffixes: tuple[str, ...], skipped: list[Path] | None = None
) -> dict[str, list[Path]]:
    """``{class: files}`` of one split folder, files lying directly in it under the class
    ``""`` (files without classes); SpecError for a media file deeper inside a class folder.
    Files in class folders that are not of `suffixes` go to `skipped` (to be said)."""
    classes: dict[str, list[Path]] = {}
    for file in files_under(split_root, hidden=False):
        suffix = file.suffix.lower() if suffixes == IMAGE_SUFFIXES else file.suffix
        if suffix not in suffixes:  # the wav_folder reader's pattern is case-sensitive
            depth = len(file.relative_to(split_root).parts)
            if skipped is not None and depth == 2:
                skipped.append(file)
            continue
        parts = file.relative_to(split_root).parts
        if len(parts) == 1:
            classes.setdefault("", []).append(file)
            continue
        if len(parts) != 2:
            raise SpecError(
                f"{file}: expected <split>/<class>/<file> (a file directly in a class folder) "
                f"or <split>/<file> (no classes), but this one is {len(parts) - 1} folders deep"
            )
        classes.setdefault(parts[0], []).append(file)
    return classes


def infer_folder(text: str, options: InferOptions) -> BuilderSpec:
    """The spec of an image or audio folder (see the module docstring)."""
    root = Path(text).expanduser()
    kind = media_kind(root)
    if kind is None:
        raise SpecError(f"{root}: no image (PNG, JPEG, GIF, TIFF, BMP, WebP) or WAV files here")
    suffixes = IMAGE_SUFFIXES if kind == "image" else AUDIO_SUFFIXES
    roots = _split_roots(root)
    skipped: list[Path] = []
    per_split = {split: _files(folder, suffixes, skipped) for split, folder in roots.items()}
    if skipped and options.note is not None:
        shown = ", ".join(str(f.relative_to(root)) for f in skipped[:3])
        more = ", ..." if len(skipped) > 3 else ""
        readable = "PNG, JPEG, GIF, TIFF, BMP, WebP" if kind == "image" else "WAV, FLAC"
        options.note(
            f"{root}: left out {len(skipped)} file(s) in class folders that are not {kind} "
            f"files catalog reads ({readable}): {shown}{more}"
        )
    for split, classes in per_split.items():
        if not classes:
            raise SpecError(f"{roots[split]}: no {kind} files in class folders (<class>/<file>)")
    names = sorted({name for classes in per_split.values() for name in classes})
    labelled = "" not in names
    if not labelled and len(names) > 1:
        loose = next(classes[""][0] for classes in per_split.values() if "" in classes)
        raise SpecError(
            f"{loose}: {kind} files lie both directly in {loose.parent} and in class folders; "
            f"put every file in a class folder (<class>/<file>), or none (unlabelled {kind})"
        )
    metadata, extra = _metadata(root, roots, options)
    everything = [f for classes in per_split.values() for files in classes.values() for f in files]
    features: dict[str, Feature]
    record = ""
    if kind == "image":
        images = folder_images(everything, options.sample, options.channels)
        features = {
            "image": Image(
                (None, None, images.channels), encoding=images.encoding, files=images.files
            )
        }
        record = images.record()
        if record and options.note is not None:
            options.note(f"{root}:{record[1:]}; --channels 1, 3 or 4 chooses otherwise")
    else:
        kinds = sorted({f.suffix for f in everything})
        if len(kinds) > 1:
            raise SpecError(f"{root}: holds both {' and '.join(kinds)} files; use one kind")
        features = {"audio": _audio(everything[0])}
    if labelled:
        features["label"] = ClassLabel(names=names)
    for name, feature in extra.items():
        if name in features:
            raise SpecError(
                f"{root}: the metadata column {name!r} is also the folder's own feature; rename it"
            )
        features[name] = feature
    download = measured_download("folder", root)
    splits = {}
    for split, folder in roots.items():
        member = "." if folder == root else folder.name
        count = sum(len(files) for files in per_split[split].values())
        given: dict[str, object]
        if kind == "image":
            folder_part = r"(?P<label>[^/]+)/" if labelled else ""
            given = {"match": folder_part + _IMAGE_MATCH, "reencode_invalid": True}
            fmt = "image_folder"
        else:
            flac = everything[0].suffix == ".flac"
            pattern = ("*/" if labelled else "") + ("*.flac" if flac else "*.wav")
            given = {"pattern": pattern, **({"soundfile": True} if flac else {})}
            fmt = "wav_folder"
        if not labelled:
            given = {**given, "labelled": False}
        if metadata:
            given = {**given, "metadata": metadata, "metadata_columns": {n: n for n in extra}}
        splits[split] = SplitSpec(
            split, fmt, {"root": FileRef("folder", member)}, count, complete_options(fmt, given)
        )
    return make_spec(
        options, text, features, {"folder": download}, splits,
        description=(
            f"{kind.capitalize()} files in {len(names)} class folders"
            if labelled
            else f"{kind.capitalize()} files without classes"
        ) + record,
        supervised=(kind, "label") if labelled else None,
        tags=(kind, f"{kind}-classification") if labelled else (kind,),
    )  # fmt: skip


def _audio(file: Path) -> Audio:
    if file.suffix == ".flac":
        from catalog.formats.audio.sound_files import read_info

        rate, channels, subtype = read_info(file)
        dtypes = {"PCM_S8": "int16", "PCM_U8": "int16", "PCM_16": "int16", "PCM_24": "int32"}
        if subtype not in dtypes:
            raise SpecError(f"{file}: FLAC samples of type {subtype} are not supported yet")
        return Audio(rate, dtypes[subtype], (None,) if channels == 1 else (None, channels))
    try:
        header = read_header(file.read_bytes(), str(file))
    except FeatureError as error:
        raise SourceFormatError(f"{file}: not a WAV file catalog can read ({error})") from None
    dtype = "float32" if header.is_float else ("int16" if header.bits <= 16 else "int32")
    shape: tuple[int | None, ...] = (None,) if header.channels == 1 else (None, header.channels)
    return Audio(header.sample_rate, dtype, shape)


def _metadata(
    root: Path, roots: dict[str, Path], options: InferOptions
) -> tuple[str | None, dict[str, Feature]]:
    """The metadata file's name (the same in every split folder) and the features its
    columns add, or (None, {}) when there is none."""
    from catalog.spec.infer.tables import sample_types

    found = {s: [f / n for n in _METADATA if (f / n).is_file()] for s, f in roots.items()}
    if not any(found.values()):
        if any((root / n).is_file() for n in _METADATA):
            raise SpecError(
                f"{root}: a metadata file at the top of a folder with split folders; put one "
                "into each split folder, its file_name relative to that folder"
            )
        return None, {}
    chosen: dict[str, Feature] | None = None
    name = None
    for split, files in found.items():
        if len(files) != 1:
            problem = "no metadata file" if not files else "both metadata.csv and metadata.jsonl"
            raise SpecError(f"{roots[split]}: {problem}; every split folder needs one")
        path = files[0]
        if name is not None and path.name != name:
            raise SpecError(f"{path}: the other split folders hold {name}; use one kind")
        name = path.name
        kind = "jsonl" if path.suffix == ".jsonl" else "csv"
        columns, types = sample_types(kind, path, options.sample)
        if "file_name" not in columns:
            raise SpecError(f"{path}: no file_name column (each row's file, e.g. cat/1.png)")
        names = feature_names([c for c in columns if c != "file_name"], str(path))
        for n, c in names.items():
            if n != c:
                raise SpecError(f"{path}: column {c!r} is no feature name; rename it, e.g. {n!r}")
        these = {n: types[n] for n in names}
        if chosen is not None and these != chosen:
            raise SpecError(f"{path}: its columns differ from another split folder's metadata")
        chosen = these
    return name, chosen or {}
