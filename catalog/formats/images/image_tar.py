"""Image files in a tar archive, or in a tar of tars, read in place by their offsets.

ImageNet's ``ILSVRC2012_img_train.tar`` (147 GB) is a tar of 1000 tars, one per class
(``n01440764.tar`` holding ``n01440764_10026.JPEG``, ...); its validation tar holds the JPEGs
directly. This format reads such an archive where it is and extracts nothing: an index of the
images (name, offset and size of the bytes in the archive, inner tar) is made once by reading
the tar headers only (a seek per member), kept in the prepare's scratch folder, and a range of
examples is then read by seeking to its images. So each shard of a split is written on its own
(by N processes or Beam workers), and memory does not grow with the archive.

Examples come in archive order (inner tars in the order of the outer one). Member paths are
normalised and hidden or backup files left out as in any archive (`catalog.formats.shards.members`);
directories and links are skipped. The key is the image's path (``n01440764.tar/<path>`` in a
tar of tars). Options:

- ``nested``: the tar holds tars (``<group>.tar``) whose members are the images; any other
  file in the outer tar is an error.
- ``group_label``: the ClassLabel feature given the inner tar's name without ``.tar``.
- ``sorted_labels``: ``{feature: file}``: labels listed in the sorted order of the images'
  paths, as TFDS pairs ImageNet's ``validation_labels.txt`` with the validation tar (line i:
  the class name of the i-th path in sorted order). A ``.json`` file holds a JSON list instead
  (ImageNet-ReaL's ``real.json``: a list of class indices per image, possibly empty).
- ``file_name``: the Text feature given the image's path in its tar (``n01440764_10026.JPEG``).
- ``keep``: ``{<the file_name feature>: file}``: a file listing the paths to keep, one per
  line (the 1% and 10% ImageNet subsets); the other images are left out.
- ``unlabeled``: a ClassLabel feature every image of the tar gets -1, "no label" (ImageNet's
  test tar; the feature needs ``allow_unlabeled``).
- ``rgb_jpeg``: store every image as a JPEG that decodes to RGB or gray as it is: a CMYK JPEG
  or a PNG file (the train tar holds 22 CMYK JPEGs and one PNG named ``.JPEG``, which TFDS
  lists by name and converts) becomes the RGB JPEG TFDS stores for it, byte for byte (TFDS
  converts with TensorFlow; `rgb_jpeg` takes the same libjpeg-turbo steps); every other file
  keeps its bytes.
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np
import simplejpeg

from catalog._util.hashing import regular_file
from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Text
from catalog.features.image_decode import decode, decoder_for
from catalog.formats.base import (
    Examples,
    Option,
    Role,
    Source,
    SourceFormat,
    staged,
    through_ranges,
)
from catalog.formats.shards.members import kept_path

__all__ = ["FORMAT", "RGB_JPEG_QUALITY"]

#: The JPEG quality CMYK and PNG files are re-encoded at with ``rgb_jpeg`` (TFDS's).
RGB_JPEG_QUALITY = 100
_ENTRY = np.dtype([("offset", "<i8"), ("size", "<i8"), ("group", "<i4"), ("name_end", "<i8")])
_CHUNK = 1 << 16  # index entries written at a time
_INDEX = "image_tar-index"


def _headers(f: IO[bytes], where: str, end: int) -> Iterator[tarfile.TarInfo]:
    """The members of the tar starting at `f`'s position and ending by byte `end` of `f`,
    headers only (the data is skipped by seeking); offsets are positions in `f`. The member
    list is not kept. A damaged header block is an error naming the tar and the member
    before it: `tarfile` itself ends the listing there without a word (only a damaged
    first header of a whole file is an error to it), which would silently end a class."""
    last = None
    try:
        with tarfile.open(fileobj=f, mode="r:") as tar:  # leaves `f` open
            while (info := tar.next()) is not None:
                # TarFile keeps every header it read in .members (not in typeshed); only the
                # current one is needed, so memory stays flat over a million members
                tar.members = []  # type: ignore[attr-defined]
                last = info.name
                yield info
            stop: int = tar.offset
    except (tarfile.TarError, EOFError) as error:
        raise SourceFormatError(f"{where}: a damaged tar file ({error})") from None
    if stop < end:  # the listing ended before the tar's end: an end-of-archive block, or not
        f.seek(stop)
        block = f.read(min(tarfile.BLOCKSIZE, end - stop))
        if block.strip(b"\0"):
            after = f"after member {last!r}" if last is not None else "in its first header"
            raise SourceFormatError(
                f"{where}: a damaged tar header at byte {stop} {after}; the tar is corrupt "
                "(get or assemble it again)"
            )


def _scan(
    path: Path, nested: bool, keep: frozenset[str] | None
) -> Iterator[tuple[str, int, int, str | None]]:
    """``(path, offset, size, group)`` of every image in archive order; `group` is the name
    of its inner tar without ``.tar`` (None in a flat tar)."""
    try:
        size = regular_file(path).st_size
    except OSError as error:
        raise SourceFormatError(f"{path}: {error.strerror or error}; expected a tar") from None
    with open(path, "rb") as f:
        for info in _headers(f, str(path), size):
            name = kept_path(info.name) if info.isfile() else None
            if name is None:
                continue
            if not nested:
                if keep is None or name in keep:
                    yield name, info.offset_data, info.size, None
                continue
            if not name.endswith(".tar") or "/" in name:
                raise SourceFormatError(
                    f"{path}: {name!r} is not a tar in the top folder; this is read as a tar "
                    "of tars, one <class>.tar per class as ImageNet's train tar is published "
                    "(ILSVRC2012_img_train.tar), not a folder of images tarred again: use the "
                    "tar as downloaded (options.nested)"
                )
            group, end = name[: -len(".tar")], info.offset_data + info.size
            f.seek(info.offset_data)
            for inner in _headers(f, f"{path}: {name}", end):
                inner_name = kept_path(inner.name) if inner.isfile() else None
                if inner_name is None or (keep is not None and inner_name not in keep):
                    continue
                if inner.offset_data + inner.size > end:
                    raise SourceFormatError(
                        f"{path}/{name}: member {inner.name!r} runs past the end of this tar "
                        "(a truncated inner tar?)"
                    )
                yield inner_name, inner.offset_data, inner.size, group


def _write_index(source: Source, folder: Path) -> None:
    """Scan the archive into `folder`: ``entries`` (`_ENTRY` records), ``names`` (the paths,
    UTF-8, back to back), ``groups.json`` (the inner tars' names, by group index) and, for
    ``sorted_labels``, ``ranks.npy`` (each image's position in sorted path order)."""
    options = source.options
    keep = _keep(next(iter(options["keep"].values()), None))
    groups: dict[str, int] = {}
    chunk: list[tuple[int, int, int, int]] = []
    name_end = 0
    folder.mkdir(parents=True)
    with open(folder / "entries", "wb") as entries, open(folder / "names", "wb") as names:
        for name, offset, size, group in _scan(source.file("archive"), options["nested"], keep):
            encoded = name.encode("utf-8", "surrogateescape")
            names.write(encoded)
            name_end += len(encoded)
            index = -1 if group is None else groups.setdefault(group, len(groups))
            chunk.append((offset, size, index, name_end))
            if len(chunk) == _CHUNK:
                np.array(chunk, dtype=_ENTRY).tofile(entries)
                chunk = []
        np.array(chunk, dtype=_ENTRY).tofile(entries)
    (folder / "groups.json").write_text(json.dumps(list(groups)), "utf-8")
    if options["sorted_labels"]:
        made = _Index(folder)
        order = sorted(range(len(made)), key=made.name)
        ranks = np.empty(len(made), np.int64)
        ranks[order] = np.arange(len(made))
        np.save(folder / "ranks.npy", ranks)


def _keep(path: Path | None) -> frozenset[str] | None:
    if path is None:
        return None
    return frozenset(line.strip() for line in path.read_text("utf-8").splitlines() if line.strip())


class _Index:
    """An index folder `_write_index` made, memory-mapped."""

    def __init__(self, folder: Path) -> None:
        self.entries = _mapped(folder / "entries", _ENTRY)
        self._names = _mapped(folder / "names", np.dtype(np.uint8))
        self.groups: list[str] = json.loads((folder / "groups.json").read_text("utf-8"))
        ranks = folder / "ranks.npy"
        self.ranks = np.load(ranks, mmap_mode="r") if ranks.exists() else None

    def __len__(self) -> int:
        return len(self.entries)

    def name(self, i: int) -> str:
        start = int(self.entries[i - 1]["name_end"]) if i else 0
        data = bytes(self._names[start : int(self.entries[i]["name_end"])])
        return data.decode("utf-8", "surrogateescape")


def _mapped(path: Path, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """The records of `path`, memory-mapped (an empty file: an empty array)."""
    if path.stat().st_size == 0:
        return np.zeros(0, dtype)
    return np.memmap(path, dtype, mode="r")


def _sorted_labels(path: Path, count: int) -> list[Any]:
    """The labels of a ``sorted_labels`` file: text lines, or a JSON list; `count` of them."""
    text = path.read_text("utf-8")
    if path.suffix == ".json":
        try:
            labels: list[Any] = json.loads(text)
        except ValueError as error:
            raise SourceFormatError(f"{path}: not JSON ({error})") from None
        if not isinstance(labels, list):
            raise SourceFormatError(f"{path}: expected a JSON list, got {type(labels).__name__}")
    else:
        labels = text.strip().splitlines()
    if len(labels) != count:
        raise SourceFormatError(
            f"{path}: {len(labels)} labels for the {count} images of the tar; a label per "
            "image, in the sorted order of their paths, is expected"
        )
    return labels


def rgb_jpeg(data: bytes, where: str) -> bytes:
    """`data` itself if it is a JPEG that decodes to RGB or gray as it is; otherwise (a CMYK
    JPEG, a PNG, ...) the RGB JPEG TFDS stores for it, byte for byte: TFDS converts these with
    TensorFlow (``tf.image.decode_jpeg`` / ``decode_png``, then ``tf.image.encode_jpeg`` at
    quality 100), and the same steps are taken here with the same library, libjpeg-turbo
    (checked against the bytes TFDS + TensorFlow stored for ImageNet's dummy CMYK JPEG and PNG,
    tests/fixtures/tf/imagenet_gold.json)."""
    try:
        if decoder_for(data, 3) == "simplejpeg":
            return data
        pixels = _cmyk_as_tensorflow(data) if _cmyk_jpeg(data) else decode(data, 3)
    except SourceFormatError as error:
        raise SourceFormatError(f"{where}: {error}") from None
    from PIL import Image as PILImage

    out = io.BytesIO()
    # tf.image.encode_jpeg's defaults: 4:2:0 chroma, a JFIF header of 300 dots per inch
    PILImage.fromarray(pixels).save(
        out, format="JPEG", quality=RGB_JPEG_QUALITY, subsampling=2, dpi=(300, 300)
    )
    return out.getvalue()


def _cmyk_jpeg(data: bytes) -> bool:
    try:
        return bool(simplejpeg.decode_jpeg_header(data)[2] in ("CMYK", "YCCK"))
    except ValueError:
        return False  # not a JPEG (a PNG named .JPEG): decoded as what it is


def _cmyk_as_tensorflow(data: bytes) -> np.ndarray[Any, Any]:
    """A CMYK (or YCCK) JPEG's RGB pixels as ``tf.image.decode_jpeg`` gives them: libjpeg-turbo's
    fast integer inverse DCT (TensorFlow's default ``dct_method``), then each of R, G, B the
    product of the stored C, M or Y with K, divided by 255 and truncated (the values of
    Adobe's inverted CMYK JPEGs, as ImageNet's are)."""
    try:
        cmyk = simplejpeg.decode_jpeg(data, colorspace="CMYK", fastdct=True, fastupsample=False)
    except ValueError as error:
        raise SourceFormatError(f"a damaged CMYK JPEG of {len(data)} bytes: {error}") from None
    wide = np.asarray(cmyk, dtype=np.uint16)
    rgb: np.ndarray[Any, Any] = (wide[..., :3] * wide[..., 3:4] // 255).astype(np.uint8)
    return rgb


class _Reader:
    """The images of one tar by position (`catalog.formats.base.RandomAccess`)."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._path = source.file("archive")
        folder, self._temp = staged(source, _INDEX, lambda to: _write_index(source, to))
        self._file: IO[bytes] | None = None
        try:
            self._index = _Index(folder)
            self._labels = {
                feature: _sorted_labels(path, len(self._index))
                for feature, path in source.options["sorted_labels"].items()
            }
        except BaseException:
            self.close()
            raise

    @property
    def length(self) -> int:
        return len(self._index)

    def examples(self, start: int, stop: int) -> Examples:
        options, index = self._source.options, self._index
        if self._file is None:
            self._file = open(self._path, "rb")  # noqa: SIM115 (closed by close())
        for i in range(start, min(stop, len(index))):
            entry = index.entries[i]
            name = index.name(i)
            group = index.groups[entry["group"]] if entry["group"] >= 0 else None
            key = name if group is None else f"{group}.tar/{name}"
            self._file.seek(int(entry["offset"]))
            data = self._file.read(int(entry["size"]))
            if len(data) != entry["size"]:
                raise SourceFormatError(f"{self._path}: {key} is cut short (a truncated tar?)")
            if options["rgb_jpeg"]:
                data = rgb_jpeg(data, f"{self._path}: {key}")
            example: dict[str, Any] = {"image": data}
            if options["group_label"] is not None:
                example[options["group_label"]] = group
            if options["file_name"] is not None:
                example[options["file_name"]] = name
            if options["unlabeled"] is not None:
                example[options["unlabeled"]] = -1
            if self._labels:
                assert index.ranks is not None  # made with the index for sorted_labels
                rank = int(index.ranks[i])
                for feature, labels in self._labels.items():
                    example[feature] = labels[rank]
            yield key, example

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._temp is not None:
            self._temp.cleanup()
            self._temp = None


#: Every image of the split's tar, in archive order (see the module docstring).
examples = through_ranges(_Reader)


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    named = [
        options["group_label"],
        options["file_name"],
        options["unlabeled"],
        *options["sorted_labels"],
    ]
    return frozenset({"image", *(n for n in named if n is not None)}), frozenset()


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    label = options["group_label"]
    if label is not None:
        if not options["nested"]:
            return "group_label needs nested: true (a tar of tars)"
        if not isinstance(features[label], ClassLabel):
            return f"group_label: feature {label!r} must be a ClassLabel"
    if options["file_name"] is not None and not isinstance(features[options["file_name"]], Text):
        return f"file_name: feature {options['file_name']!r} must be Text"
    if options["keep"] and list(options["keep"]) != [options["file_name"]]:
        return "keep: give one file, under the file_name feature's name"
    unlabeled = options["unlabeled"]
    if unlabeled is not None:
        target = features[unlabeled]
        if not isinstance(target, ClassLabel) or not target.allow_unlabeled:
            return f"unlabeled: feature {unlabeled!r} must be a ClassLabel with allow_unlabeled"
        if unlabeled in (label, options["file_name"], *options["sorted_labels"]):
            return f"unlabeled: feature {unlabeled!r} is given twice"
    for feature in options["sorted_labels"]:
        if feature in (label, options["file_name"]):
            return f"sorted_labels: feature {feature!r} is given twice"
    return None


FORMAT = SourceFormat(
    name="image_tar",
    description="image files in a tar or a tar of tars (ImageNet's), read in place by offset",
    roles=(Role("archive"),),
    options={
        "nested": Option("bool", False, "a tar of tars: <group>.tar holding the images"),
        "group_label": Option("str", None, "ClassLabel feature <- the inner tar's name"),
        "sorted_labels": Option("file_map", {}, "feature -> labels in sorted path order"),
        "file_name": Option("str", None, "Text feature <- the image's path in its tar"),
        "keep": Option("file_map", {}, "file_name feature -> a file of the paths to keep"),
        "rgb_jpeg": Option("bool", False, "re-encode CMYK JPEGs and PNGs as RGB JPEGs"),
        "unlabeled": Option(
            "str", None, "ClassLabel feature <- -1, no label", counted_at_default=False
        ),
    },
    features=_features,
    examples=examples,
    validate=_validate,
    random_access=_Reader,
)
