"""The image_tables source format on its own: whitespace tables keyed by file name (headed
or not), a partition list, images in a zip or a folder; what does not fit is named."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict, Image, Scalar
from catalog.formats import FORMATS, Source

FEATURES = FeaturesDict(
    {
        "image": Image((None, None, 3)),
        "flags": FeaturesDict({"Smiling": Scalar("bool"), "2_eyes": Scalar("bool")}),
        "who": FeaturesDict({"Identity_No": Scalar("int64")}),
    }
)


def files(tmp_path: Path, flags: str = "2\nSmiling 2_eyes\na.jpg 1 -1\nb.jpg -1 1\n") -> Source:
    (tmp_path / "part.txt").write_text("b.jpg 0\na.jpg 0\nc.jpg 1\n")
    (tmp_path / "flags.txt").write_text(flags)
    (tmp_path / "who.txt").write_text("a.jpg 7\nb.jpg 9\nc.jpg 3\n")
    with zipfile.ZipFile(tmp_path / "img.zip", "w") as zf:
        for name in ("a.jpg", "b.jpg", "c.jpg"):
            zf.writestr(f"img/{name}", name.encode())
    fmt = FORMATS["image_tables"]
    options: dict[str, Any] = {
        **{n: o.default for n, o in fmt.options.items()},
        "tables": {"flags": tmp_path / "flags.txt", "who": tmp_path / "who.txt"},
        "columns": {"who": ["Identity_No"]},
    }
    assert fmt.problem(options, FEATURES) is None
    roles = {"images": (tmp_path / "img.zip",), "partition": (tmp_path / "part.txt",)}
    return Source("train", roles, options, FEATURES)


def test_a_partition_in_sorted_order_with_its_rows(tmp_path: Path) -> None:
    examples = list(FORMATS["image_tables"].examples(files(tmp_path)))
    assert [key for key, _ in examples] == ["a.jpg", "b.jpg"]  # partition 0, sorted
    a = examples[0][1]
    assert a["image"] == b"a.jpg"  # the member's bytes, found by base name
    assert a["flags"] == {"Smiling": np.True_, "2_eyes": np.False_} and a["who"] == {
        "Identity_No": 7
    }


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("2\nSmiling eyes\na.jpg 1 -1\nb.jpg 1 1\n", r"flags.txt: its columns and feature 'flags'"),
        ("2\nSmiling 2_eyes\na.jpg 1\n", r"flags.txt:3: 1 values, expected 2"),
        ("2\nSmiling 2_eyes\na.jpg 1 -1\n", r"flags.txt: no row for 'b.jpg'"),
        ("2\nSmiling 2_eyes\na.jpg 1 x\n", r"flags.txt:3: not whole numbers"),
    ],
)
def test_tables_that_do_not_fit_are_named(tmp_path: Path, flags: str, message: str) -> None:
    with pytest.raises(SourceFormatError, match=message):
        list(FORMATS["image_tables"].examples(files(tmp_path, flags)))
