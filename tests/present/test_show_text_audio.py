"""`catalog show` for datasets without images: waveforms for audio, text excerpts, tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from catalog.features import Audio, ClassLabel, FeaturesDict, Image, Scalar, Text
from catalog.present.show import BACKGROUND, LETTERBOX, TEXT, show_kind, waveform
from catalog.testing.harness import run_builder

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env=os.environ,
    )  # fmt: skip


def prepared(name: str, tmp_path: Path, counts: dict[str, int]) -> list[str]:
    """The CLI arguments naming the dummy copy prepared: a builder folder of the dummy spec."""
    folder = tmp_path / "builders" / name
    run_builder(ROOT / "builders" / name, tmp_path, num_examples=counts, spec_folder=folder)
    return [str(folder), "--data-dir", str(tmp_path / "data")]


def test_show_kind_dispatches_on_the_features() -> None:
    text = FeaturesDict({"text": Text(), "label": ClassLabel(num_classes=2)})
    assert show_kind(text) == "text"
    assert show_kind(text, tags=("tabular",)) == "table"
    assert show_kind(FeaturesDict({"x": Scalar("float32")})) == "table"
    assert show_kind(FeaturesDict({"a": Audio(8000), "t": Text()})) == "audio"
    assert show_kind(FeaturesDict({"i": Image((2, 2, 1)), "a": Audio(8000)})) == "image"
    assert show_kind(text, image_key="text") == "image"  # and pick_features says why not


def test_waveform_pixels() -> None:
    silent = waveform(np.zeros(10, np.int16), (8, 4))
    assert (silent[4] == LETTERBOX).all() and (np.delete(silent, 4, axis=0) == BACKGROUND).all()
    # A clip going from its loudest negative to its loudest positive sample: the first column
    # spans 0..-1 (the mid line, row 4, to one row inside the bottom), the last the top.
    picture = waveform(np.array([0, -100, 0, 100], np.int16), (9, 4))
    dark = picture == TEXT
    assert dark[:, 0].nonzero()[0].tolist() == [4, 5, 6, 7]
    assert dark[:, 1].nonzero()[0].tolist() == [4, 5, 6, 7]
    assert dark[:, 2].nonzero()[0].tolist() == [1, 2, 3, 4]
    assert dark[:, 3].nonzero()[0].tolist() == [1]
    stereo = waveform(np.array([[100, -100], [50, 50]]), (5, 2))  # channels mixed: 0, then 50
    assert (stereo[:, 1] == TEXT).nonzero()[0].tolist() == [1]


def test_show_audio_draws_waveforms_captioned_with_labels(tmp_path: Path) -> None:
    args = prepared("speech_commands", tmp_path, {"train": 5, "validation": 4, "test": 3})
    out = tmp_path / "sc.png"
    result = run("show", *args, "--split", "test", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out}: 3 examples of speech_commands test")
    with PILImage.open(out) as image:
        picture = np.asarray(image)
    assert picture.ndim == 2  # grayscale: waveforms are gray pictures
    # Two cells per row; each 96 px box holds a 48x96 waveform between gray bands.
    box = picture[4:100, 4:100]
    assert (box[:24] == LETTERBOX).all() and (box[72:] == LETTERBOX).all()
    assert (box[24:72] == TEXT).any() and (box[24:72] == BACKGROUND).any()


def test_show_text_prints_the_first_lines(tmp_path: Path) -> None:
    args = prepared("imdb_reviews", tmp_path, {"train": 3, "test": 3, "unsupervised": 2})
    result = run("show", *args, "-n", "2", "--split", "unsupervised")
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout == "[0] -1\n  text: Saw it on a plane.\n\n[1] -1\n  text: No opinion yet.\n"
    )
    out = tmp_path / "imdb.txt"
    result = run("show", *args, "--split", "test", "--seed", "0", "-n", "1", "-o", str(out))
    assert result.returncode == 0 and out.read_text().startswith("[")


def test_show_tabular_prints_a_table(tmp_path: Path) -> None:
    args = prepared("titanic", tmp_path, {"train": 3})
    result = run("show", *args, "-n", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "#", "pclass", "survived", "name", "sex", "age", "sibsp", "parch", "ticket", "fare",
        "cabin", "embarked", "boat", "body", "home.dest",
    ]  # fmt: skip
    assert lines[1].startswith("0  1st_class  survived  Allen, Miss. Elisabet...  female  29 ")
    assert lines[2].split()[-3:] == ["Unknown", "190", "Unknown"]
    assert len(lines) == 3


@pytest.mark.parametrize("lines", [1, 5])
def test_show_text_lines_option(tmp_path: Path, lines: int) -> None:
    args = prepared("tiny_shakespeare", tmp_path, {"train": 1, "validation": 1, "test": 1})
    result = run("show", *args, "--lines", str(lines))
    assert result.returncode == 0, result.stderr
    shown = result.stdout.splitlines()
    assert shown[0] == "[0]" and shown[1] == "  text: First Citizen:"
    if lines == 1:
        assert shown[2] == "        ... (7 more lines)"
    else:
        assert shown[2:6] == ["        Before we proceed any further, hear me speak.", "        ",
                              "        All:", "        Speak, speak."]  # fmt: skip
