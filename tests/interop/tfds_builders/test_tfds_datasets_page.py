"""The docs page of every TFDS dataset and its status (docs/guides/tfds-datasets.md, made by
tools/tfds_datasets_page.py): it lists every name TFDS registers, it is what the tool makes
now (CI's tfds stage runs this), and it joins the comparison with TFDS + TensorFlow
(tests/tfds_gold/repo/STATUS.json) as a column when that file exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tfds_files import SKIP_REASON

from conftest import ROOT, load_module

tool = load_module(ROOT / "tools" / "tfds_datasets_page.py")


class _Entry:
    def __init__(self, name: str, status: str, configs: int = 0) -> None:
        self.name, self.version, self.configs, self.status = name, "1.0.0", configs, status


def test_the_compared_column_comes_from_status_json_and_the_page_works_without_it(
    tmp_path: Path,
) -> None:
    entries = [_Entry("mnist", "prepares"), _Entry("glue", "untested", 2),
               _Entry("c4", "not yet: it generates with Apache Beam inside TFDS | x")]  # fmt: skip
    assert tool.compared(tmp_path / "STATUS.json") is None
    plain = tool.render(entries, "4.9.10", None)
    assert "| `tfds:mnist` | 1.0.0 |  | prepares |" in plain
    assert "compared with TFDS+TF" not in plain
    assert "Apache Beam inside TFDS \\| x |" in plain  # a | in a status does not split the row
    status = tmp_path / "STATUS.json"
    status.write_text(json.dumps({
        "mnist": "equal", "glue/cola": "equal", "glue/sst2": "differs",
        "c4": {"status": "not run: Apache Beam"},
    }))  # fmt: skip
    gold = tool.compared(status)
    assert gold == {"mnist": "equal", "glue": "cola: equal; sst2: differs",
                    "c4": "not run: Apache Beam"}  # fmt: skip
    page = tool.render(entries, "4.9.10", gold)
    assert "| dataset | version | configs | status | compared with TFDS+TF |" in page
    assert "| `tfds:mnist` | 1.0.0 |  | prepares | equal |" in page
    assert "| `tfds:glue` | 1.0.0 | 2 | untested | cola: equal; sst2: differs |" in page
    assert "| equal | 1 |" in page and "| not run | 1 |" in page


def test_the_page_lists_every_registered_name_and_is_current() -> None:
    """The committed page is what the tool makes now, and has a row per registered name
    (else: run python tools/tfds_datasets_page.py and commit the page)."""
    pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)
    from catalog.formats.tfds.runtime import builder_class, import_tfds

    import_tfds()
    builder_class("imdb_reviews")  # a builder of TFDS's datasets/ folder imported: TFDS then
    # lists those names twice, the page once
    from tensorflow_datasets.core import registered

    page = tool.PAGE.read_text("utf-8")
    names = registered.list_imported_builders()
    assert len(names) > 400
    missing = [n for n in names if f"| `tfds:{n}` |" not in page]
    assert not missing, missing
    assert page == tool.page(), "run python tools/tfds_datasets_page.py and commit the page"
