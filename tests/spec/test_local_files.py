"""Builder folders reading their own files (`path:` downloads, catalog.spec.local_files): a
hand-written builder.yaml over a JSON Lines file and a folder, checksums registered under the
path, nothing outside the folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import catalog
from catalog.errors import SpecError
from catalog.spec.load import load_spec

SPEC = """\
name: notes
version: 1.0.0
features:
  text: {type: Text}
  n: {type: Scalar, dtype: int16}
downloads:
  rows: {path: data/rows.jsonl}
splits:
  train:
    format: json_lines
    files: {files: rows}
    options: {columns: {text: t, n: k}}
    num_examples: 3
"""


def _builder(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    rows = [{"t": "one", "k": 1}, {"t": "two", "k": -2}, {"t": "", "k": 300}]
    (root / "data" / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "builder.yaml").write_text(SPEC)
    return root


def test_register_checksums_records_a_path_download_under_its_path(tmp_path: Path) -> None:
    folder = _builder(tmp_path / "notes")
    with pytest.raises(SpecError, match="no size and sha256 registered"):
        catalog.builder(folder, data_dir=tmp_path / "d").download_and_prepare()
    from catalog.download import DownloadConfig

    b = catalog.builder(folder, data_dir=tmp_path / "d")
    b.download_and_prepare(download_config=DownloadConfig(register_checksums=True))
    line = (folder / "checksums.tsv").read_text().splitlines()[0]
    assert line.split("\t")[0] == "data/rows.jsonl"
    assert line.split("\t")[3] == "rows.jsonl"
    ds = catalog.builder(folder, data_dir=tmp_path / "d").as_data_source("train")
    assert [(ds[i]["text"], int(ds[i]["n"])) for i in range(3)] == [
        ("one", 1),
        ("two", -2),
        ("", 300),
    ]


def test_a_value_outside_its_dtype_is_one_error_naming_line_and_key(tmp_path: Path) -> None:
    folder = _builder(tmp_path / "notes")
    with open(folder / "data" / "rows.jsonl", "a") as f:
        f.write(json.dumps({"t": "big", "k": 40000}) + "\n")
    (folder / "builder.yaml").write_text(SPEC.replace("num_examples: 3", "num_examples: 4"))
    from catalog.download import DownloadConfig
    from catalog.errors import SourceFormatError

    b = catalog.builder(folder, data_dir=tmp_path / "d")
    with pytest.raises(SourceFormatError, match=r"rows.jsonl:4: key 'k': 40000 does not fit int16"):
        b.download_and_prepare(download_config=DownloadConfig(register_checksums=True))


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.jsonl", "data/../../outside.jsonl"])
def test_a_path_download_stays_inside_the_builder_folder(tmp_path: Path, path: str) -> None:
    folder = _builder(tmp_path / "notes")
    (tmp_path / "outside.jsonl").write_text("{}\n")
    (folder / "builder.yaml").write_text(SPEC.replace("data/rows.jsonl", path))
    with pytest.raises(SpecError, match="field 'downloads.rows.path'"):
        load_spec(folder)


def test_a_symlink_leading_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    folder = _builder(tmp_path / "notes")
    (tmp_path / "secret.jsonl").write_text("{}\n")
    (folder / "data" / "link.jsonl").symlink_to(tmp_path / "secret.jsonl")
    (folder / "builder.yaml").write_text(SPEC.replace("data/rows.jsonl", "data/link.jsonl"))
    with pytest.raises(SpecError, match="leads outside the builder folder"):
        load_spec(folder)


def test_options_added_later_leave_prepared_copies_alone(tmp_path: Path) -> None:
    """metadata/metadata_columns (image_folder) are newer than prepared tf_flowers copies:
    at their defaults they do not change the spec's fingerprint, set they do."""
    import dataclasses

    spec = catalog.builder("tf_flowers").spec
    split = spec.splits["train"]
    assert split.format == "image_folder" and split.options["metadata"] is None
    older = {k: v for k, v in split.options.items() if not k.startswith("metadata")}
    before = spec.replace(splits={"train": dataclasses.replace(split, options=older)})
    assert before.fingerprint == spec.fingerprint
    given = {**split.options, "metadata": "metadata.csv"}
    changed = spec.replace(splits={"train": dataclasses.replace(split, options=given)})
    assert changed.fingerprint != spec.fingerprint


ROOT = Path(__file__).resolve().parents[2]


def test_a_registered_builders_file_is_read_where_it_is_with_its_checksum(
    tmp_path: Path,
) -> None:
    """``{builder: NAME, path: FILE}``: a file of a registered builder's folder (one copy of
    ImageNet's 500 KB validation_labels.txt for three builders), checked against that
    builder's checksums.tsv; never a file outside that folder."""
    spec = load_spec(ROOT / "builders" / "imagenet2012_subset")
    shared = spec.downloads["validation_labels"]
    own = load_spec(ROOT / "builders" / "imagenet2012").downloads["validation_labels"]
    assert shared.url == own.url and shared.url.endswith("/imagenet2012/validation_labels.txt")
    assert (shared.size, shared.sha256) == (own.size, own.sha256) == (500000, own.sha256)
    assert own.sha256 == "313fc3f23c864dde9183c9a368809065765dd1b657a6904fded44e3e46d34604"
    folder = tmp_path / "b"
    folder.mkdir()
    for entry, field, message in [
        ("{builder: nosuch, path: x.txt}", "builder", "no registered builder 'nosuch'"),
        ("{builder: imagenet2012, path: ../mnist/checksums.tsv}", "path", "inside it"),
        ("{builder: imagenet2012, path: missing.txt}", "path", "cannot read"),
    ]:
        (folder / "builder.yaml").write_text(SPEC.replace("{path: data/rows.jsonl}", entry))
        with pytest.raises(SpecError, match=f"downloads.rows.{field}'.*{message}"):
            load_spec(folder)
