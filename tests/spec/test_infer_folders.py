"""Image and audio folders prepared with no builder.yaml (catalog.spec.infer.folders): every
example equals its file (pixels, samples), class names are the sorted folder names, the files'
digests are recorded so a change is noticed, and --write-spec gives a builder folder that
prepares the same dataset."""

from __future__ import annotations

import json
import os
import wave
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog.api.files import files_builder
from catalog.errors import ChecksumError, FeatureError, SourceFormatError, SpecError
from catalog.features import FeaturesDict, Image
from catalog.formats import FORMATS
from catalog.formats.base import Source
from catalog.spec.load import load_spec

from conftest import catalog_cli

RNG = np.random.default_rng(7)


def _image(path: Path, shape: tuple[int, ...], fmt: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = RNG.integers(0, 256, shape, dtype=np.uint8)
    PILImage.fromarray(pixels).save(path, format=fmt)


def photo_folder(root: Path, splits: tuple[str, ...] = ("train", "test")) -> list[Path]:
    """PNG and JPEG files of mixed sizes, one grayscale, in <root>/<split>/<class>/."""
    files = []
    for s, split in enumerate(splits):
        base = root / split if split else root
        for c, label in enumerate(["zebra", "ant", "bee"]):  # sorted: ant, bee, zebra
            for i in range(2 + s):
                fmt = "PNG" if (i + c) % 2 else "JPEG"
                shape: tuple[int, ...] = (9 + i + c, 12 - i, 3) if i != 1 or c else (10, 8)
                name = f"img{i}.{'png' if fmt == 'PNG' else 'jpg'}"
                _image(base / label / name, shape, fmt)
                files.append(base / label / name)
    (root / "notes.txt").write_text("not an image\n")
    return files


def pixels(path: Path) -> np.ndarray:
    with PILImage.open(path) as img:
        return np.array(img.convert("RGB"))


def test_an_image_folder_is_prepared_exactly_with_sorted_class_names(tmp_path: Path) -> None:
    photo_folder(tmp_path / "photos")
    b = catalog.prepare_files(tmp_path / "photos", "photos", data_dir=tmp_path / "data")
    label = b.info.features["label"]
    assert label.names == ["ant", "bee", "zebra"]
    assert list(b.info.splits) == ["train", "test"]
    for split in ("train", "test"):
        ds = b.as_data_source(split)
        files = sorted((tmp_path / "photos" / split).rglob("*.*"), key=lambda p: p.parts)
        assert len(ds) == len(files) == (6 if split == "train" else 9)
        for i, file in enumerate(files):
            example = ds[i]
            assert label.names[example["label"]] == file.parent.name
            np.testing.assert_array_equal(example["image"], pixels(file))
    # Found by name afterwards, in the same data dir; the stored bytes are the files' own.
    ds = catalog.data_source("photos", data_dir=tmp_path / "data", split="test")
    raw = catalog.data_source(
        "photos", data_dir=tmp_path / "data", split="test", decoders={"image": False}
    )
    first = sorted((tmp_path / "photos" / "test").rglob("*.*"), key=lambda p: p.parts)[0]
    assert raw[0]["image"] == first.read_bytes()
    assert len(ds) == 9


def test_no_split_folders_is_one_train_split(tmp_path: Path) -> None:
    photo_folder(tmp_path / "flat", splits=("",))
    spec = files_builder(tmp_path / "flat", "flat").spec
    assert list(spec.splits) == ["train"]
    assert spec.splits["train"].num_examples == 6
    assert spec.features["label"].names == ["ant", "bee", "zebra"]


def test_the_channels_are_what_most_images_have_or_channels(tmp_path: Path) -> None:
    _image(tmp_path / "g" / "a" / "x.png", (4, 5), "PNG")
    _image(tmp_path / "g" / "b" / "y.png", (6, 3), "PNG")
    assert files_builder(tmp_path / "g", "g").spec.features["image"].shape == (None, None, 1)
    _image(tmp_path / "g" / "b" / "z.png", (6, 3, 4), "PNG")
    assert files_builder(tmp_path / "g", "g").spec.features["image"].shape == (None, None, 1)
    four = files_builder(tmp_path / "g", "g", channels=4).spec
    assert four.features["image"].shape == (None, None, 4)


def test_one_rgba_png_among_jpegs_is_converted_not_the_folder(tmp_path: Path) -> None:
    """Finding 6 of issue 37: one RGBA PNG made every image of a folder of JPEGs 4 channels,
    and `info` said png for a folder of JPEGs."""
    for i in range(4):
        _image(tmp_path / "f" / "cat" / f"{i}.jpg", (5, 6, 3), "JPEG")
    _image(tmp_path / "j" / "cat" / "0.jpg", (5, 6, 3), "JPEG")
    assert files_builder(tmp_path / "j", "j").spec.features["image"].encoding == "jpeg"
    rgba = tmp_path / "f" / "dog" / "x.png"
    _image(rgba, (5, 6, 4), "PNG")
    _image(tmp_path / "f" / "dog" / "y.jpg", (5, 6, 3), "JPEG")
    notes: list[str] = []
    b = files_builder(tmp_path / "f", "f", data_dir=tmp_path / "d", note=notes.append)
    assert b.spec.features["image"].shape == (None, None, 3)
    assert notes == [
        f"{tmp_path / 'f'}: images are stored with 3 channel(s): of 6 looked at, 1 with 4 "
        "converted; --channels 1, 3 or 4 chooses otherwise"
    ]
    assert "1 with 4 converted" in b.spec.description
    b.download_and_prepare()
    ds = b.as_data_source("train")
    with PILImage.open(rgba) as img:
        expected = np.array(img.convert("RGB"))
    np.testing.assert_array_equal(ds[4]["image"], expected)
    with PILImage.open(tmp_path / "f" / "cat" / "0.jpg") as img:
        np.testing.assert_array_equal(ds[0]["image"], np.array(img))


def test_images_pillow_reads_are_prepared_and_other_files_are_named(tmp_path: Path) -> None:
    """Finding 7 of issue 50: a GIF and a TIFF in class folders were dropped without a word.
    GIF (its first frame), TIFF, BMP and WebP are read as Pillow reads them, stored as PNG;
    a file that is no image is left out with a note naming it."""
    root = tmp_path / "pics"
    frames = [RNG.integers(0, 256, (6, 5, 3), dtype=np.uint8) for _ in range(2)]
    (root / "cat").mkdir(parents=True)
    first, *rest = [PILImage.fromarray(f).convert("P") for f in frames]
    first.save(root / "cat" / "a.gif", save_all=True, append_images=rest)
    _image(root / "cat" / "b.tiff", (4, 7, 3), "TIFF")
    _image(root / "dog" / "c.BMP", (5, 5, 3), "BMP")
    webp = RNG.integers(0, 256, (3, 8, 3), dtype=np.uint8)
    PILImage.fromarray(webp).save(root / "dog" / "d.webp", lossless=True)
    _image(root / "dog" / "e.png", (2, 2, 3), "PNG")
    (root / "dog" / "notes.txt").write_text("a dog\n")
    notes: list[str] = []
    b = files_builder(root, "pics", data_dir=tmp_path / "d", note=notes.append)
    assert any(
        "left out 1 file(s) in class folders that are not image files" in n and "notes.txt" in n
        for n in notes
    ), notes
    b.download_and_prepare()
    ds = b.as_data_source("train")
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".txt")
    assert len(ds) == len(files) == 5
    for i, file in enumerate(files):
        assert b.info.features["label"].names[ds[i]["label"]] == file.parent.name
        np.testing.assert_array_equal(ds[i]["image"], pixels(file))  # a GIF: its first frame


def test_colour_is_kept_when_most_images_are_colour(tmp_path: Path) -> None:
    """Finding 7 of issue 50: 13 colour images of 25 (8 RGB, 5 RGBA) were stored gray, the
    3- and 4-channel images counted apart; the note names --channels."""
    for i in range(12):
        _image(tmp_path / "m" / "a" / f"g{i}.png", (4, 4), "PNG")
    for i in range(8):
        _image(tmp_path / "m" / "b" / f"c{i}.png", (4, 4, 3), "PNG")
    for i in range(5):
        _image(tmp_path / "m" / "b" / f"t{i}.png", (4, 4, 4), "PNG")
    notes: list[str] = []
    spec = files_builder(tmp_path / "m", "m", note=notes.append).spec
    assert spec.features["image"].shape == (None, None, 3)
    assert notes and "--channels" in notes[-1] and "12 with 1" in notes[-1], notes


def test_images_of_more_than_8_bits_are_refused_not_clipped(tmp_path: Path) -> None:
    """A 16-bit grayscale PNG (depth maps, scans) was converted to 8 bits on the way in,
    every value past 255 clipped to 255, and `info` said "kept as found". Refused instead,
    naming the file, whether the inference looks at it or only the preparing does."""
    root = tmp_path / "scans"
    for label in ("a", "b"):
        _image(root / label / "0.png", (16, 16), "PNG")  # 8-bit gray beside it
    deep = (np.arange(16 * 16).reshape(16, 16) * 200).astype(np.uint16)
    PILImage.fromarray(deep).save(root / "b" / "deep.png")
    with PILImage.open(root / "b" / "deep.png") as img:
        assert img.mode == "I;16"
    why = r"deep.png: a PNG image of more than 8 bits per channel \(Pillow mode I;16\)"
    with pytest.raises(SourceFormatError, match=why):
        files_builder(root, "scans")
    b = files_builder(root, "scans", sample=1, data_dir=tmp_path / "d")  # not looked at
    with pytest.raises(SourceFormatError, match=why):
        b.download_and_prepare()
    assert not list((tmp_path / "d").rglob("*.array_record*"))
    data = (root / "b" / "deep.png").read_bytes()
    with pytest.raises(FeatureError, match="more than 8 bits per channel"):
        Image((None, None, 1), encoding="png").encode(data)


def test_symlinked_class_folders_are_followed_within_the_folder_only(tmp_path: Path) -> None:
    """Issue 41: a class folder that is a symlink was dropped in silence."""
    root = tmp_path / "root"
    _image(root / "dog" / "0.png", (4, 4, 3), "PNG")
    _image(root / "dog" / "1.png", (4, 4, 3), "PNG")
    _image(tmp_path / "elsewhere" / "cat" / "0.png", (4, 4, 3), "PNG")
    (root / "cat").symlink_to(tmp_path / "elsewhere" / "cat")
    with pytest.raises(SourceFormatError, match=r"cat: a symlink to the folder .*outside"):
        files_builder(root, "r")
    (root / "cat").unlink()
    (root / ".store" / "cat").mkdir(parents=True)
    _image(root / ".store" / "cat" / "0.png", (4, 4, 3), "PNG")
    (root / "cat").symlink_to(root / ".store" / "cat")
    b = catalog.prepare_files(root, "r", data_dir=tmp_path / "d")
    assert b.info.features["label"].names == ["cat", "dog"]
    assert b.info.splits["train"].num_examples == 3
    (root / "dog" / "loop").symlink_to(root / "dog")
    with pytest.raises(SourceFormatError, match=r"loop: a symlink to .*a folder it is inside"):
        files_builder(root, "r")


def test_mixed_split_and_class_folders_are_refused(tmp_path: Path) -> None:
    _image(tmp_path / "m" / "train" / "a" / "x.png", (4, 5, 3), "PNG")
    _image(tmp_path / "m" / "cats" / "x.png", (4, 5, 3), "PNG")
    with pytest.raises(SpecError, match=r"some folders are splits \(train\) and some are not"):
        files_builder(tmp_path / "m", "m")


def test_a_changed_file_is_noticed(tmp_path: Path) -> None:
    photo_folder(tmp_path / "photos")
    b = files_builder(tmp_path / "photos", "photos", data_dir=tmp_path / "data")
    victim = next((tmp_path / "photos" / "train" / "ant").iterdir())
    victim.write_bytes(victim.read_bytes() + b"\0")  # changed after the spec recorded it
    with pytest.raises(ChecksumError, match="photos: the folder changed since its size and sha256"):
        b.download_and_prepare()
    assert not (tmp_path / "data" / "photos").exists() or not any(
        (tmp_path / "data" / "photos").glob("1.0.0*/dataset_info.json")
    )


def test_write_spec_gives_a_builder_folder_preparing_the_same_dataset(tmp_path: Path) -> None:
    photo_folder(tmp_path / "photos")
    b = catalog.prepare_files(
        tmp_path / "photos", "photos", data_dir=tmp_path / "a", write_spec=tmp_path / "photos"
    )
    loaded = load_spec(tmp_path / "photos")
    assert loaded.fingerprint == b.spec.fingerprint
    assert "path: ." in (tmp_path / "photos" / "builder.yaml").read_text()
    again = catalog.builder(tmp_path / "photos", data_dir=tmp_path / "b")
    again.download_and_prepare()
    for split in ("train", "test"):
        one, two = b.as_data_source(split), again.as_data_source(split)
        shards = [s.sha256 for s in b.info.splits[split].shards]
        assert shards == [s.sha256 for s in again.info.splits[split].shards]
        assert len(one) == len(two)
    # The builder folder moves with its data: its paths are relative.
    os.rename(tmp_path / "photos", tmp_path / "moved")
    assert load_spec(tmp_path / "moved").splits == loaded.splits


def test_write_spec_outside_the_data_is_refused(tmp_path: Path) -> None:
    photo_folder(tmp_path / "photos")
    with pytest.raises(SpecError, match="outside .*write the spec into the data's folder"):
        catalog.prepare_files(
            tmp_path / "photos", "photos", data_dir=tmp_path / "d", write_spec=tmp_path / "spec"
        )
    assert not (tmp_path / "spec" / "builder.yaml").exists()


def test_a_builder_path_may_not_leave_its_folder(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "secret.csv").write_text("a\n1\n")
    (tmp_path / "b" / "builder.yaml").write_text(
        "name: b\nversion: 1.0.0\nfeatures: {a: {type: Scalar, dtype: int64}}\n"
        "downloads: {d: {path: ../secret.csv}}\n"
        "splits: {train: {format: delimited, files: {file: d}, options: {columns: {a: a}}, "
        "num_examples: 1}}\n"
    )
    with pytest.raises(SpecError, match="field 'downloads.d.path': expected a path relative"):
        load_spec(tmp_path / "b")


def _wav(path: Path, samples: np.ndarray, rate: int = 8000) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.astype("<i2").tobytes())


def test_an_audio_folder_is_prepared_exactly(tmp_path: Path) -> None:
    sounds = {}
    for split in ("train", "validation"):
        for label in ("yes", "no"):
            for i in range(2):
                samples = RNG.integers(-32768, 32767, 100 + 37 * i, dtype=np.int16)
                path = tmp_path / "speech" / split / label / f"{i}.wav"
                _wav(path, samples)
                sounds[path] = samples
    b = catalog.prepare_files(tmp_path / "speech", "speech", data_dir=tmp_path / "data")
    assert b.info.features["audio"].sample_rate == 8000
    assert b.info.features["label"].names == ["no", "yes"]
    for split in ("train", "validation"):
        ds = b.as_data_source(split)
        files = sorted((tmp_path / "speech" / split).rglob("*.wav"))
        assert len(ds) == len(files) == 4
        for i, file in enumerate(files):
            np.testing.assert_array_equal(ds[i]["audio"].reshape(-1), sounds[file])
            assert b.info.features["label"].names[ds[i]["label"]] == file.parent.name


def test_lossy_audio_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "a" / "x").mkdir(parents=True)
    (tmp_path / "a" / "x" / "1.mp3").write_bytes(b"ID3")
    with pytest.raises(SpecError, match="MP3 audio is not supported yet"):
        files_builder(tmp_path / "a", "a")


def test_the_cli_prepares_a_path_and_a_registered_name_wins(tmp_path: Path) -> None:
    photo_folder(tmp_path / "mnist")  # a local folder named like a registered dataset
    data = str(tmp_path / "data")
    done = catalog_cli(
        "prepare", "./mnist", "--name", "digits", "--data-dir", data, "-q", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "digits 1.0.0: prepared" in done.stdout
    ds = catalog.data_source("digits", data_dir=data, split="train")
    assert len(ds) == 6
    # A bare word that is a registered name is that dataset (offline: nothing is fetched).
    bare = catalog_cli("prepare", "mnist", "--data-dir", data, "--offline", "-q", cwd=tmp_path)
    assert "'mnist' is the registered dataset; to prepare the local mnist, write it as ./mnist" in (
        bare.stderr
    )
    wrong = catalog_cli("prepare", "./mnist", "--name", "mnist", "--data-dir", data, cwd=tmp_path)
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines() == [
        "catalog: error: 'mnist' is a registered dataset; give the prepared files another name "
        "(--name)"
    ]


def test_the_cli_refuses_file_flags_for_a_dataset_name(tmp_path: Path) -> None:
    done = catalog_cli("prepare", "mnist", "--label", "x", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "catalog: error: --label is for one PATH of local files (catalog prepare PATH --label ...)"
    )


def test_a_metadata_file_adds_its_columns_as_features(tmp_path: Path) -> None:
    photo_folder(tmp_path / "photos")
    expected = {}
    for split in ("train", "test"):
        folder = tmp_path / "photos" / split
        files = sorted(folder.rglob("*.*"), key=lambda p: p.parts)
        lines = ["file_name,caption,score"]
        for i, file in enumerate(files):
            name = file.relative_to(folder).as_posix()
            caption, score = f'a "{split}" photo, {i}', i / 4
            lines.append(f'{name},"{caption.replace(chr(34), 2 * chr(34))}",{score}')
            expected[file] = (caption, score)
        (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    b = catalog.prepare_files(tmp_path / "photos", "photos", data_dir=tmp_path / "d")
    assert list(b.info.features) == ["image", "label", "caption", "score"]
    for split in ("train", "test"):
        ds = b.as_data_source(split)
        files = sorted((tmp_path / "photos" / split).rglob("*.*g"), key=lambda p: p.parts)
        for i, file in enumerate(files):
            assert (ds[i]["caption"], float(ds[i]["score"])) == expected[file]
            np.testing.assert_array_equal(ds[i]["image"], pixels(file))
    # A file the metadata does not describe is one error naming it.
    lines = (tmp_path / "photos" / "test" / "metadata.csv").read_text().splitlines()
    (tmp_path / "photos" / "test" / "metadata.csv").write_text("\n".join(lines[:-1]) + "\n")
    again = files_builder(tmp_path / "photos", "photos", data_dir=tmp_path / "e")
    with pytest.raises(
        SourceFormatError, match=r"test/zebra/img2\.\w+: no row for this file in metadata.csv"
    ):
        again.download_and_prepare()


def test_an_audio_folder_with_metadata_jsonl(tmp_path: Path) -> None:
    rows = []
    for i, label in enumerate(["up", "down"]):
        _wav(tmp_path / "a" / label / f"{i}.wav", np.arange(50, dtype=np.int16) * (i + 1))
        rows.append({"file_name": f"{label}/{i}.wav", "speaker": f"s{i}", "take": i + 1})
    (tmp_path / "a" / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    b = catalog.prepare_files(tmp_path / "a", "a", data_dir=tmp_path / "d")
    ds = b.as_data_source("train")
    got = [(ds[i]["speaker"], int(ds[i]["take"])) for i in range(2)]
    assert got == [("s1", 2), ("s0", 1)]  # down/1.wav sorts before up/0.wav


def test_a_flac_folder_is_decoded_exactly_and_stored_as_wav(tmp_path: Path) -> None:
    import soundfile

    sounds = {}
    for label in ("hi", "lo"):
        for i in range(2):
            samples = RNG.integers(-32768, 32767, (80 + 11 * i, 2), dtype=np.int16)
            path = tmp_path / "f" / label / f"{i}.flac"
            path.parent.mkdir(parents=True, exist_ok=True)
            soundfile.write(path, samples, 22050, subtype="PCM_16")
            sounds[path] = samples
    b = catalog.prepare_files(tmp_path / "f", "f", data_dir=tmp_path / "d")
    feature = b.info.features["audio"]
    assert (feature.sample_rate, feature.dtype.name, feature.shape) == (22050, "int16", (None, 2))
    ds = b.as_data_source("train")
    for i, file in enumerate(sorted(sounds)):
        np.testing.assert_array_equal(ds[i]["audio"], sounds[file])
    stored = b.as_data_source("train", decoders={"audio": False})[0]["audio"]
    assert stored[:4] == b"RIFF"  # stored as WAV


def test_a_path_that_names_nothing_is_one_line(tmp_path: Path) -> None:
    for arg in ("./nope", "nope.csv", "data/*.parquet"):
        done = catalog_cli("prepare", arg, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            f"catalog: error: {arg}: no such file or folder (and no glob match)"
        ]
    (tmp_path / "notes.txt").write_text("hello\n")
    done = catalog_cli("prepare", "./notes.txt", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("catalog: error: ./notes.txt: not a kind of data catalog can")
    assert len(done.stderr.strip().splitlines()) == 1


def _loose_images(folder: Path, count: int) -> list[Path]:
    files = []
    for i in range(count):
        fmt = "PNG" if i % 2 else "JPEG"
        path = folder / f"p{i}.{'png' if fmt == 'PNG' else 'jpg'}"
        _image(path, (7 + i, 9, 3), fmt)
        files.append(path)
    return files


def test_images_without_class_folders_are_unlabelled_with_their_metadata(tmp_path: Path) -> None:
    # Hugging Face's imagefolder layout for captions: images directly in the (split) folder,
    # metadata.csv beside them; no label feature, every pixel and caption as in the files.
    expected = {}
    for split, count in (("train", 5), ("test", 3)):
        folder = tmp_path / "captions" / split
        files = _loose_images(folder, count)
        lines = ["file_name,text"] + [f"{f.name},caption of {split} {f.stem}" for f in files]
        (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
        expected[split] = [(f, f"caption of {split} {f.stem}") for f in sorted(files)]
    b = catalog.prepare_files(tmp_path / "captions", "captions", data_dir=tmp_path / "d")
    assert list(b.info.features) == ["image", "text"]
    assert b.info.supervised_keys is None
    for split, wanted in expected.items():
        ds = b.as_data_source(split)
        assert len(ds) == len(wanted)
        for i, (file, text) in enumerate(wanted):
            assert ds[i]["text"] == text
            np.testing.assert_array_equal(ds[i]["image"], pixels(file))
    # With no split folders and no metadata: one train split of images only; --write-spec
    # gives a builder folder that prepares the same shards.
    _loose_images(tmp_path / "plain", 4)
    one = catalog.prepare_files(
        tmp_path / "plain", "plain", data_dir=tmp_path / "e", write_spec=tmp_path / "plain"
    )
    assert list(one.info.features) == ["image"] and list(one.info.splits) == ["train"]
    again = catalog.builder(tmp_path / "plain", data_dir=tmp_path / "f")
    again.download_and_prepare()
    assert [s.sha256 for s in again.info.splits["train"].shards] == [
        s.sha256 for s in one.info.splits["train"].shards
    ]


def test_images_both_loose_and_in_class_folders_are_refused(tmp_path: Path) -> None:
    _loose_images(tmp_path / "mix", 2)
    _image(tmp_path / "mix" / "cats" / "x.png", (4, 5, 3), "PNG")
    with pytest.raises(
        SpecError, match=r"image files lie both directly in .*mix and in class folders"
    ):
        files_builder(tmp_path / "mix", "mix")


def test_the_unlabelled_image_folder_format_without_a_match(tmp_path: Path) -> None:
    # As a hand-written builder.yaml may use it: every file directly in the root, no label;
    # a folder inside is one error naming it.
    files = _loose_images(tmp_path / "imgs", 3)
    features = FeaturesDict({"image": Image((None, None, 3))})
    fmt = FORMATS["image_folder"]
    options = {name: option.default for name, option in fmt.options.items()}
    options["labelled"] = False
    assert fmt.problem(options, features) is None
    source = Source("train", {"root": (tmp_path / "imgs",)}, options, features)
    got = list(fmt.examples(source))
    assert [key for key, _ in got] == sorted(f.name for f in files)
    assert all(list(example) == ["image"] for _, example in got)
    assert "no feature 'label'" in str(fmt.problem({**options, "labelled": True}, features))
    _image(tmp_path / "imgs" / "sub" / "y.png", (4, 5, 3), "PNG")
    with pytest.raises(SourceFormatError, match=r"imgs/sub: a folder in a folder of unlabelled"):
        list(fmt.examples(source))


def test_audio_files_without_class_folders_are_unlabelled(tmp_path: Path) -> None:
    # Hugging Face's audiofolder for transcripts: WAV files directly in the folder,
    # metadata.jsonl beside them; no label, every sample and text as in the files.
    sounds, rows = {}, []
    for i in range(3):
        samples = RNG.integers(-32768, 32767, 80 + 11 * i, dtype=np.int16)
        _wav(tmp_path / "talk" / f"clip{i}.wav", samples)
        sounds[f"clip{i}.wav"] = samples
        rows.append({"file_name": f"clip{i}.wav", "transcription": f"words {i}"})
    (tmp_path / "talk" / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    b = catalog.prepare_files(tmp_path / "talk", "talk", data_dir=tmp_path / "d")
    assert list(b.info.features) == ["audio", "transcription"]
    ds = b.as_data_source("train")
    assert len(ds) == 3
    for i, name in enumerate(sorted(sounds)):
        np.testing.assert_array_equal(ds[i]["audio"].reshape(-1), sounds[name])
        assert ds[i]["transcription"] == f"words {name[4]}"
    # A WAV file beside class folders is one error naming the folder.
    _wav(tmp_path / "talk" / "yes" / "x.wav", np.zeros(10, dtype=np.int16))
    with pytest.raises(SpecError, match=r"audio files lie both directly in .*talk and in class"):
        files_builder(tmp_path / "talk", "talk2")


def _signature(data: bytes) -> str:
    return "png" if data.startswith(b"\x89PNG") else "jpeg" if data[:3] == b"\xff\xd8\xff" else "?"


def test_info_shows_the_files_as_stored_and_a_folder_s_number_of_files(tmp_path: Path) -> None:
    """Finding 6 of issue 37: `info` said one encoding (png) for a folder mixing JPEG and PNG
    files, stored as found, and "1 file" of download for a folder of many."""
    for i in range(6):
        _image(tmp_path / "f" / "cat" / f"{i}.jpg", (5, 6, 3), "JPEG")
        _image(tmp_path / "f" / "dog" / f"{i}.jpeg", (6, 5, 3), "JPEG")
    for i in range(3):
        _image(tmp_path / "f" / "dog" / f"p{i}.png", (4, 4, 3), "PNG")
    _image(tmp_path / "f" / "cat" / "named-wrongly.jpg", (4, 4, 3), "PNG")  # its bytes say PNG
    _image(tmp_path / "f" / "cat" / "alpha.png", (4, 4, 4), "PNG")  # converted: re-encoded
    data = str(tmp_path / "data")
    done = catalog_cli("prepare", str(tmp_path / "f"), "--name", "mix", "--data-dir", data, "-q")
    assert done.returncode == 0, done.stderr
    info = catalog_cli("info", "mix", "--data-dir", data)
    assert info.returncode == 0, info.stderr
    assert "kept as found: jpeg 12, png 4; re-encoded: 1" in info.stdout
    assert "(17 files)" in info.stdout
    # what it says is what the records hold
    raw = catalog.data_source("mix", data_dir=data, split="train", decoders={"image": False})
    stored = sorted(_signature(raw[i]["image"]) for i in range(len(raw)))
    assert stored == ["jpeg"] * 12 + ["png"] * 5
    saved = json.loads((tmp_path / "data" / "mix" / "1.0.0" / "dataset_info.json").read_text())
    assert saved["downloads"]["folder"]["files"] == 17
    image = saved["features"]["features"]["image"]
    assert image["files"] == {"jpeg": 12, "png": 4, "reencoded": 1}
    assert Image.from_json(image).describe() == "kept as found: jpeg 12, png 4; re-encoded: 1"
    smaller = Image.from_json({**image, "max_side": 4}).describe()
    assert smaller.startswith("files found: jpeg 12, png 4; re-encoded: 1; those larger than 4")
    site = catalog_cli("site", "-o", str(tmp_path / "site"), "mix", "--data-dir", data)
    assert site.returncode == 0, site.stderr
    page = (tmp_path / "site" / "datasets" / "mix.html").read_text()
    assert "kept as found: jpeg 12, png 4; re-encoded: 1" in page and " in 17 files" in page
