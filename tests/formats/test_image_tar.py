"""`image_tar`: images in a tar or a tar of tars (ImageNet's layout), indexed once by their
headers and read in place by offset; labels by inner tar or by a list in sorted path order."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Sequence, Text
from catalog.features.image_decode import decode, decoder_for
from catalog.formats import FORMATS, Source

from dummy_images import jpeg, png, tar_bytes

FMT = FORMATS["image_tar"]
NAMES = ["n01", "n02", "n03"]
FEATURES = FeaturesDict({"image": Image(), "label": ClassLabel(names=NAMES), "file_name": Text()})


def source(
    archive: Path, scratch: Path | None, features: FeaturesDict = FEATURES, **options: Any
) -> Source:
    defaults = {name: option.default for name, option in FMT.options.items()}
    return Source("train", {"archive": (archive,)}, {**defaults, **options}, features, scratch)


def cmyk_jpeg() -> bytes:
    out = io.BytesIO()
    PILImage.new("CMYK", (5, 4), (0, 255, 255, 0)).save(out, format="JPEG", quality=95)
    return out.getvalue()


def train_tar(tmp_path: Path) -> tuple[Path, list[tuple[str, str, bytes]]]:
    """A tar of per-class tars; the (class, path, bytes) of its images in archive order."""
    images = [
        ("n02", "n02_7.JPEG", jpeg(4, 5, (200, 10, 10))),
        ("n02", "n02_1.JPEG", jpeg(6, 3, (10, 200, 10))),
        ("n01", "n01_3.JPEG", jpeg(3, 3, (10, 10, 200))),
        ("n03", "n03_2.JPEG", jpeg(2, 7, (90, 90, 90))),
        ("n03", "n03_9.JPEG", jpeg(5, 5, (250, 250, 0))),
    ]
    inner: dict[str, dict[str, bytes]] = {}
    for label, name, data in images:
        inner.setdefault(label, {})[name] = data
    inner["n03"]["._n03_2.JPEG"] = b"macOS metadata"  # left out, as in any archive
    outer = {f"{label}.tar": tar_bytes(files) for label, files in inner.items()}
    path = tmp_path / "ILSVRC2012_img_train.tar"
    path.write_bytes(tar_bytes(outer))
    return path, images


def test_a_tar_of_tars_gives_each_image_with_its_inner_tar_as_label(tmp_path: Path) -> None:
    path, images = train_tar(tmp_path)
    src = source(
        path, tmp_path / "scratch", nested=True, group_label="label", file_name="file_name"
    )
    got = list(FMT.examples(src))
    assert [key for key, _ in got] == [f"{lab}.tar/{name}" for lab, name, _ in images]
    for (_, example), (label, name, data) in zip(got, images, strict=True):
        assert example == {"image": data, "label": label, "file_name": name}  # bytes as they are
    # random access: any range, the same examples, nothing extracted (only the index staged)
    reader = FMT.random_access(src)  # type: ignore[misc]
    assert reader.length == 5
    assert list(reader.examples(2, 4)) == got[2:4]
    assert list(reader.examples(4, 99)) == got[4:]
    reader.close()
    staged = sum(p.stat().st_size for p in (tmp_path / "scratch").rglob("*") if p.is_file())
    assert staged < 300 < sum(len(d) for _, _, d in images) // 4  # 28 bytes an image + names


def test_keep_lists_the_paths_of_a_subset(tmp_path: Path) -> None:
    path, _ = train_tar(tmp_path)
    (tmp_path / "1percent.txt").write_text("n03_9.JPEG\nn02_7.JPEG\nnot_there.JPEG\n")
    src = source(path, None, nested=True, group_label="label", file_name="file_name",
                 keep={"file_name": tmp_path / "1percent.txt"})  # fmt: skip
    assert [e["file_name"] for _, e in FMT.examples(src)] == ["n02_7.JPEG", "n03_9.JPEG"]


def test_a_flat_tar_is_labelled_by_lists_in_sorted_path_order(tmp_path: Path) -> None:
    # archive order differs from sorted order: labels follow the sorted names (TFDS's rule)
    names = ["val_3.JPEG", "val_1.JPEG", "val_2.JPEG"]
    files = {name: jpeg(3, 3, (i * 60, 0, 0)) for i, name in enumerate(names)}
    path = tmp_path / "ILSVRC2012_img_val.tar"
    path.write_bytes(tar_bytes(files))
    (tmp_path / "labels.txt").write_text("n03\nn01\nn02\n")  # val_1, val_2, val_3
    (tmp_path / "real.json").write_text(json.dumps([[2, 0], [], [1]]))
    features = FeaturesDict({
        "image": Image(), "original_label": ClassLabel(names=NAMES), "file_name": Text(),
        "real_label": Sequence(ClassLabel(names=NAMES)),
    })  # fmt: skip
    labels = {"original_label": tmp_path / "labels.txt", "real_label": tmp_path / "real.json"}
    src = source(path, tmp_path / "s", features, file_name="file_name", sorted_labels=labels)
    assert FMT.problem(src.options, features) is None
    got = {e["file_name"]: (e["original_label"], e["real_label"]) for _, e in FMT.examples(src)}
    assert got == {"val_1.JPEG": ("n03", [2, 0]), "val_2.JPEG": ("n01", []),
                   "val_3.JPEG": ("n02", [1])}  # fmt: skip
    (tmp_path / "labels.txt").write_text("n03\nn01\n")
    with pytest.raises(SourceFormatError, match="2 labels for the 3 images of the tar"):
        list(
            FMT.examples(source(path, None, features, file_name="file_name", sorted_labels=labels))
        )


def test_rgb_jpeg_converts_cmyk_jpegs_and_pngs_only(tmp_path: Path) -> None:
    rgb, cmyk, png_file = jpeg(4, 5, (30, 60, 90)), cmyk_jpeg(), png(4, 5, (1, 2, 3))
    gray = io.BytesIO()
    PILImage.new("L", (5, 4), 77).save(gray, format="JPEG")
    files = {"a.JPEG": rgb, "b.JPEG": cmyk, "c.JPEG": png_file, "d.JPEG": gray.getvalue()}
    path = tmp_path / "x.tar"
    path.write_bytes(tar_bytes({f"n01/{k}": v for k, v in files.items()}))
    (tmp_path / "n01.tar").write_bytes(tar_bytes(files))
    outer = tmp_path / "outer.tar"
    outer.write_bytes(tar_bytes({"n01.tar": (tmp_path / "n01.tar").read_bytes()}))
    src = source(
        outer, None, nested=True, group_label="label", file_name="file_name", rgb_jpeg=True
    )
    got = {e["file_name"]: e["image"] for _, e in FMT.examples(src)}
    assert got["a.JPEG"] == rgb and got["d.JPEG"] == gray.getvalue()  # kept byte for byte
    for name, original in (("b.JPEG", cmyk), ("c.JPEG", png_file)):
        assert got[name] != original and decoder_for(got[name]) == "simplejpeg", name
        with PILImage.open(io.BytesIO(got[name])) as img:
            assert (img.format, img.mode, img.size) == ("JPEG", "RGB", (5, 4))
        want = decode(original, 3).astype(int)
        assert np.abs(decode(got[name], 3).astype(int) - want).max() <= 2, name


def test_a_nested_tar_holding_other_files_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.tar"
    path.write_bytes(tar_bytes({"n01.tar": tar_bytes({"a.JPEG": b"x"}), "README": b"hi"}))
    with pytest.raises(SourceFormatError, match="'README' is not a tar in the top folder"):
        list(FMT.examples(source(path, None, nested=True, group_label="label")))


def test_a_truncated_tar_is_named(tmp_path: Path) -> None:
    path, _ = train_tar(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceFormatError, match="ILSVRC2012_img_train.tar"):
        list(FMT.examples(source(path, None, nested=True, group_label="label")))


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"group_label": "label"}, "group_label needs nested: true"),
        ({"nested": True, "group_label": "file_name"}, "must be a ClassLabel"),
        ({"file_name": "label", "nested": True, "group_label": "label"}, "must be Text"),
        ({"file_name": "file_name", "keep": {"label": Path("x")}}, "under the file_name"),
        ({"unlabeled": "label"}, "must be a ClassLabel with allow_unlabeled"),
    ],
)
def test_options_are_checked_against_the_features(options: dict[str, Any], problem: str) -> None:
    features = FeaturesDict(
        {"image": Image(), "label": ClassLabel(names=NAMES), "file_name": Text()}
    )
    defaults = {name: option.default for name, option in FMT.options.items()}
    assert FMT.validate is not None
    found = FMT.validate({**defaults, **options}, features)
    assert found is not None and problem in found


def damaged_inner_header(tmp_path: Path, member: int) -> Path:
    """The train tar with the header of image `member` (0: the first) of class n02's tar
    overwritten by text: not a valid header, not an end-of-archive block."""
    path, _ = train_tar(tmp_path)
    data = bytearray(path.read_bytes())
    # the outer header of n02.tar, then its data: the inner tar (headers of n02_7 then n02_1)
    start = data.index(b"n02_7.JPEG" if member == 0 else b"n02_1.JPEG")
    data[start : start + 100] = b"#" * 100  # the name field; the header checksum then fails
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(("member", "where"), [(1, "after member 'n02_7.JPEG'"), (0, "first")])
def test_a_damaged_header_in_an_inner_tar_is_named_not_the_end_of_its_class(
    tmp_path: Path, member: int, where: str
) -> None:
    """tarfile ends a listing at a bad header without a word; a class would then silently
    lose its images (even reading only the first examples, which builds the whole index)."""
    path = damaged_inner_header(tmp_path, member)
    reader = FMT.random_access
    assert reader is not None
    with pytest.raises(SourceFormatError) as raised:
        reader(source(path, tmp_path / "scratch", nested=True, group_label="label"))
    message = str(raised.value)
    assert "ILSVRC2012_img_train.tar: n02.tar: a damaged tar header" in message, message
    assert where in message


def test_a_damaged_header_in_a_flat_tar_is_named(tmp_path: Path) -> None:
    path = tmp_path / "val.tar"
    path.write_bytes(tar_bytes({"a.JPEG": jpeg(2, 2, (1, 2, 3)), "b.JPEG": jpeg(2, 2, (3, 2, 1))}))
    data = bytearray(path.read_bytes())
    start = data.index(b"b.JPEG")
    data[start : start + 100] = b"#" * 100
    path.write_bytes(bytes(data))
    with pytest.raises(SourceFormatError, match="val.tar: a damaged tar header .* after member"):
        list(FMT.examples(source(path, None)))


def test_a_directory_where_the_tar_belongs_is_named(tmp_path: Path) -> None:
    (tmp_path / "x.tar").mkdir()
    with pytest.raises(SourceFormatError, match=r"x.tar: is a directory, not a regular file"):
        list(FMT.examples(source(tmp_path / "x.tar", None)))
