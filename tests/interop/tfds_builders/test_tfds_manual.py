"""``tfds:NAME`` builders whose files a user places by hand (TFDS's
``MANUAL_DOWNLOAD_INSTRUCTIONS``, ``dl_manager.manual_dir``): prepared from ``--manual-dir``
with TFDS's own builder (samsum: train.json, val.json and test.json in its layout), and a
missing or empty manual dir is one line with TFDS's instructions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tfds_files import SKIP_REASON

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

import catalog

from conftest import catalog_cli

#: samsum's files as its corpus.7z holds them (a JSON list of dialogues with their summary).
SAMSUM = {
    "train.json": [
        {"id": "13818513", "summary": "Amanda baked cookies.",
         "dialogue": "Amanda: I baked cookies. Do you want some?\r\nJerry: Sure!"},
        {"id": "13728867", "summary": "Olivia votes for liberals.",
         "dialogue": "Olivia: Who are you voting for?\r\nOliver: Liberals \u2764"},
    ],
    "val.json": [{"id": "13817023", "summary": "A will buy a hat.", "dialogue": "A: Hat?"}],
    "test.json": [{"id": "13862856", "summary": "Hannah asks.", "dialogue": "Hannah: Hey"},
                  {"id": "13729565", "summary": "Eric laughs.", "dialogue": "Eric: :D"},
                  {"id": "13680171", "summary": "Wilson ok.", "dialogue": "Wilson: ok"}],
}  # fmt: skip


def _manual(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, examples in SAMSUM.items():
        (folder / name).write_text(json.dumps(examples), "utf-8")
    return folder


def test_a_manual_dir_builder_prepares_from_the_files_placed_by_hand(tmp_path: Path) -> None:
    manual, data = _manual(tmp_path / "manual"), tmp_path / "data"
    result = catalog_cli(
        "prepare", "tfds:samsum", "--manual-dir", str(manual), "--data-dir", str(data),
        "--download-dir", str(tmp_path / "dl"), "--offline", "--num-proc", "2",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "train 2, validation 1, test 3 examples" in result.stdout, result.stdout
    sources = catalog.data_source("tfds:samsum", data_dir=data, download=False)
    assert isinstance(sources, dict)
    got = {split: sorted((ds[i]["id"], ds[i]["summary"], ds[i]["dialogue"])
                         for i in range(len(ds))) for split, ds in sources.items()}  # fmt: skip
    wanted = {split: sorted((e["id"], e["summary"], e["dialogue"]) for e in SAMSUM[file])
              for split, file in [("train", "train.json"), ("validation", "val.json"),
                                  ("test", "test.json")]}  # fmt: skip
    assert got == wanted
    assert sources["train"].features.keys() == {"id", "summary", "dialogue"}


@pytest.mark.parametrize("state", ["missing", "empty"])
def test_a_missing_or_empty_manual_dir_is_one_line_with_tfds_instructions(
    tmp_path: Path, state: str
) -> None:
    manual = tmp_path / "manual"
    if state == "empty":
        manual.mkdir()
    result = catalog_cli(
        "prepare", "tfds:samsum", "--manual-dir", str(manual), "--data-dir",
        str(tmp_path / "data"), "--download-dir", str(tmp_path / "dl"), "--offline",
    )  # fmt: skip
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    wanted = "does not exist" if state == "missing" else "is empty"
    assert f"tfds:samsum needs files placed by hand, and its manual dir {manual} {wanted}" in (
        result.stderr
    )
    assert (
        "TFDS's instructions: Download https://arxiv.org/src/1911.12237v2/anc/corpus.7z, "
        "decompress and place train.json, val.json and test.json in the manual follder."
    ) in result.stderr
    assert not (tmp_path / "data" / "tfds.samsum").exists()
