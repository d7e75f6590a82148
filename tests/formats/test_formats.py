"""The source-format readers: bad source files are named (file, line, member), nothing
downloaded is unpickled, a missing optional library names its extra, archives stream."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import textwrap
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.io as scipy_io

from catalog.api.builder import DatasetBuilder
from catalog.errors import FeatureError, MissingDependencyError, SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Text
from catalog.formats import FORMATS, Source
from catalog.spec.load import load_spec
from catalog.testing.harness import dummy_spec, run_builder
from catalog.testing.http_server import LoopbackServer

from make_dummy_data import cifar_images, cifar_records, write_tar_gz

ROOT = Path(__file__).resolve().parents[2]
IMAGE_LABEL = FeaturesDict({"image": Image((32, 32, 3)), "label": ClassLabel(num_classes=10)})


def read(fmt: str, files: dict[str, Any], features: FeaturesDict, **options: Any) -> list[Any]:
    defaults = {name: option.default for name, option in FORMATS[fmt].options.items()}
    files = {role: tuple(p) if isinstance(p, list) else (p,) for role, p in files.items()}
    source = Source("train", files, {**defaults, **options}, features)
    return list(FORMATS[fmt].examples(source))


def copy_builder(name: str, tmp_path: Path, old: str = "", new: str = "") -> Path:
    folder = shutil.copytree(ROOT / "builders" / name, tmp_path / name)
    text = (folder / "builder.yaml").read_text()
    assert old in text, old
    (folder / "builder.yaml").write_text(text.replace(old, new))
    return folder


# cifar_bin


def test_cifar_records_must_be_whole(tmp_path: Path) -> None:
    path = tmp_path / "data_batch_1.bin"
    path.write_bytes(cifar_records([np.array([1, 2])], cifar_images(2, seed=0))[:-1])
    features = FeaturesDict({**IMAGE_LABEL, "id": Text()})
    with pytest.raises(SourceFormatError, match="6145 bytes is not a whole number of 3073-byte"):
        read("cifar_bin", {"records": [path]}, features)


def test_cifar_class_names_must_match_the_spec(tmp_path: Path) -> None:
    folder = copy_builder(
        "cifar10", tmp_path, "bird, cat, deer, dog, frog", "bird, dog, deer, cat, frog"
    )
    with pytest.raises(SourceFormatError) as info:
        run_builder(folder, tmp_path, num_examples={"train": 10, "test": 3})
    message = str(info.value)
    assert message.startswith(f"{tmp_path}/") and "batches.meta.txt names 10 classes" in message
    assert message.endswith("first difference at index 3: 'cat' in the file, 'dog' in the spec"), (
        message
    )
    assert not (tmp_path / "data" / "cifar10" / "3.0.2").exists()


@pytest.mark.parametrize(
    ("builder", "old", "new", "message"),
    [
        (
            "cifar10",
            "data_batch_*.bin",
            "batch_*.bin",
            "cifar10: splits.train.files.records: 'cifar-10-batches-bin/batch_\\*.bin' in "
            "cifar-10-binary.tar.gz .* matches no file; the archive holds cifar-10-batches-bin",
        ),
        (
            "tf_flowers",
            "member: flower_photos}",
            "member: flower_photos/*}",
            "tf_flowers: splits.train.files.root: 'flower_photos/\\*' in flower_photos.tgz .* "
            "must match one file, matches flower_photos/LICENSE.txt, flower_photos/daisy",
        ),
    ],
)
def test_members_must_match(tmp_path: Path, builder: str, old: str, new: str, message: str) -> None:
    folder = copy_builder(builder, tmp_path, old, new)
    counts = dict.fromkeys(load_spec(folder).splits, 1)
    with pytest.raises(SourceFormatError, match=message):
        run_builder(folder, tmp_path, num_examples=counts)


# npz


def npz_file(path: Path, **arrays: Any) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, array in arrays.items():
            out = io.BytesIO()
            np.lib.format.write_array(out, np.asarray(array), allow_pickle=True)
            zf.writestr(f"{name}.npy", out.getvalue())
    return path


def test_npz_is_never_unpickled(tmp_path: Path) -> None:
    images = np.empty(2, dtype=object)
    images[:] = [np.zeros((32, 32, 3), np.uint8)] * 2
    path = npz_file(tmp_path / "evil.npz", images=images, labels=np.arange(2))
    with pytest.raises(SourceFormatError, match="evil.npz: not an .npz file NumPy can read "):
        read("npz", {"arrays": path}, IMAGE_LABEL)


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"images": np.zeros((2, 32, 32, 3), np.uint8)}, "no array 'labels'; it holds images"),
        (
            {"images": np.zeros((2, 32, 32, 3), np.uint8), "labels": np.arange(3)},
            "the arrays differ in length along axis 0: images 2, labels 3",
        ),
    ],
)
def test_npz_arrays_must_be_there_and_agree(
    tmp_path: Path, arrays: dict[str, Any], message: str
) -> None:
    path = npz_file(tmp_path / "x.npz", **arrays)
    with pytest.raises(SourceFormatError, match=message):
        read("npz", {"arrays": path}, IMAGE_LABEL)


# image_folder


def flowers_root(tmp_path: Path, *extra: str) -> Path:
    root = tmp_path / "photos"
    for name in ("b/2.png", "b/1.png", "a/9.png", "LICENSE.txt", *extra):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"")
    return root


def test_image_folder_order_keys_and_skips(tmp_path: Path) -> None:
    root = flowers_root(tmp_path, "b/.DS_Store")
    features = FeaturesDict({"image": Image(), "label": ClassLabel(names=["b", "a"])})
    got = read("image_folder", {"root": root}, features, skip=["LICENSE.txt", "*/.DS_Store"])
    assert [(key, e["label"], e["image"]) for key, e in got] == [
        ("a/9.png", "a", root / "a" / "9.png"),
        ("b/1.png", "b", root / "b" / "1.png"),
        ("b/2.png", "b", root / "b" / "2.png"),
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), "LICENSE.txt: a file outside the class directories; if it is not an example, add "
         "a pattern for it to the split's options.skip"),
        (("a/deeper/x.png",), "a/deeper: not a file, inside a class directory"),
    ],
)  # fmt: skip
def test_image_folder_refuses_an_unexpected_layout(
    tmp_path: Path, extra: tuple[str, ...], message: str
) -> None:
    root = flowers_root(tmp_path, *extra)
    features = FeaturesDict({"image": Image(), "label": ClassLabel(names=["a", "b"])})
    skip = ["LICENSE.txt"] if extra else []
    with pytest.raises(SourceFormatError, match=message):
        read("image_folder", {"root": root}, features, skip=skip)


def test_an_unknown_class_directory_names_the_example(tmp_path: Path) -> None:
    folder = copy_builder("tf_flowers", tmp_path, "sunflowers, roses]", "roses, sunflower]")
    with pytest.raises(FeatureError) as info:
        run_builder(folder, tmp_path, num_examples={"train": 6})
    assert str(info.value).startswith(
        "split 'train', example 4 (key 'sunflowers/6953297_8576bf4ea3.jpg'): feature 'label': "
        "ClassLabel(names=['dandelion', 'daisy', 'tulips', 'roses', 'sunflower']): unknown "
        "class name 'sunflowers'"
    ), str(info.value)


# amat


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("0 1 " * 391 + "1", r"x.amat:2: expected 784 values \(0 or 1\) for an image of shape "
         r"\(28, 28, 1\), got 783"),
        ("0 1 " * 391 + "1 2", "x.amat:2: value '2' is not 0 or 1"),
        ("0 1 " * 391 + "1 0.5", "x.amat:2: value '0.5' is not 0 or 1"),
        ("0 1 " * 391 + "1 10", "x.amat:2: value '10' is not 0 or 1"),
        ("", r"x.amat:2: expected 784 values \(0 or 1\) for an image of shape \(28, 28, 1\), "
         "got 0"),
    ],
)  # fmt: skip
def test_amat_lines_are_checked(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "x.amat"
    path.write_text("1 " * 784 + "\n" + line + "\n")
    features = FeaturesDict({"image": Image((28, 28, 1))})
    with pytest.raises(SourceFormatError, match=message):
        read("amat", {"lines": path}, features)


# mat


def test_mat_labels_may_be_floats_and_examples_lie_on_the_last_axis(tmp_path: Path) -> None:
    images = cifar_images(3, seed=4)
    path = tmp_path / "x.mat"
    scipy_io.savemat(path, {"X": images.transpose(1, 2, 3, 0), "y": [[10.0], [1.0], [3.0]]})
    got = read("mat", {"mat": path}, IMAGE_LABEL, label_modulo=10)
    assert [key for key, _ in got] == ["train_00000", "train_00001", "train_00002"]
    assert [e["label"] for _, e in got] == [0, 1, 3]
    for (_, example), image in zip(got, images, strict=True):
        np.testing.assert_array_equal(example["image"], image)
    scipy_io.savemat(path, {"X": images.transpose(1, 2, 3, 0), "y": [[1.5], [1.0], [3.0]]})
    with pytest.raises(SourceFormatError, match="x.mat: labels: value 1.5 at index 0 is not"):
        read("mat", {"mat": path}, IMAGE_LABEL)
    with pytest.raises(SourceFormatError, match="x.mat: no array 'Y'; it holds "):
        read("mat", {"mat": path}, IMAGE_LABEL, labels="Y")


def test_without_scipy_the_error_names_the_extra_before_any_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "scipy", None)  # `import scipy` now fails
    monkeypatch.setitem(sys.modules, "scipy.io", None)
    spec = load_spec(ROOT / "builders" / "svhn_cropped")
    with LoopbackServer() as server:
        counts = {"train": 4, "test": 3, "extra": 2}
        test_spec = dummy_spec(spec, server, ROOT / "builders/svhn_cropped/dummy_data", counts)
        b = DatasetBuilder(test_spec, data_dir=tmp_path)
        with pytest.raises(MissingDependencyError) as info:
            b.download_and_prepare()
        assert server.requests == []  # nothing was downloaded
    assert isinstance(info.value, ImportError)
    assert str(info.value) == (
        "reading .mat files (source format 'mat') needs scipy, an optional extra: "
        "pip install 'catalog[mat]'"
    )


def test_without_scipy_the_cli_prints_one_line(tmp_path: Path) -> None:
    code = textwrap.dedent("""\
        import sys
        sys.modules["scipy"] = sys.modules["scipy.io"] = None
        from catalog.cli import main
        raise SystemExit(main(sys.argv[1:]))
    """)
    result = subprocess.run(
        [sys.executable, "-c", code, "prepare", "svhn_cropped", "--offline", "--data-dir",
         str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result  # a missing optional library
    assert "Traceback" not in result.stderr
    assert "needs scipy, an optional extra: pip install 'catalog[mat]'" in result.stderr
    assert not list(tmp_path.glob("downloads/*.mat"))


# streaming


def test_preparing_a_big_archive_holds_a_few_blocks_in_memory(tmp_path: Path) -> None:
    # A CIFAR-10-shaped archive of 6 x 4000 records (74 MB inside the tar.gz, 0.9 MB
    # compressed): the download, the extraction (a tar stream) and the reader (a block of
    # records at a time) each hold a few MB whatever the archive's size (measured: 16.7 MB
    # at this size and at twice it).
    spec = load_spec(ROOT / "builders" / "cifar10")
    names = spec.features["label"].names  # type: ignore[attr-defined]
    records = cifar_records([np.arange(4000) % 10], np.repeat(cifar_images(1, seed=0), 4000, 0))
    members = {"cifar-10-batches-bin/batches.meta.txt": "\n".join(names).encode()}
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        members[f"cifar-10-batches-bin/{name}"] = records
    write_tar_gz(tmp_path / "cifar-10-binary.tar.gz", members)
    archive_bytes = 6 * len(records)
    del records, members
    with LoopbackServer() as server:
        test_spec = dummy_spec(spec, server, tmp_path, {"train": 20000, "test": 4000})
        b = DatasetBuilder(test_spec, data_dir=tmp_path / "data")
        tracemalloc.start()
        try:
            info = b.download_and_prepare()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert info.splits["train"].num_examples == 20000
    assert peak < archive_bytes / 3, (peak, archive_bytes)
