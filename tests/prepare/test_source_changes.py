"""What catalog read is what it hashed (`catalog.download.watch`): a source file rewritten
while a prepare reads it (between two units, same size) is one error naming it and nothing
is published, whatever kind of file it is; a killed prepare's finished shards are kept only
for the same bytes of an unverified manual file, not for another file copied over it with
its size and mtime (``cp -p``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from catalog.api.builder import DatasetBuilder
from catalog.api.files import files_builder
from catalog.download.config import DownloadConfig
from catalog.errors import ChecksumError
from catalog.prepare.options import PrepareOptions
from catalog.prepare.progress import PrepareProgress
from catalog.prepare.work_unit import Outcome
from catalog.spec.load import load_spec

from dummy_images import png, tar_bytes

ROWS = 40


class After(PrepareProgress):
    """Runs `action` once `units` units are written (serial runs: between two units)."""

    def __init__(self, name: str, units: int, action: Callable[[], None]) -> None:
        super().__init__(name, "none")
        self.units, self.action = units, action

    def unit_done(self, outcome: Outcome, *, ticked: int = 0) -> None:
        super().unit_done(outcome, ticked=ticked)
        if self.written == self.units:
            self.action()


def table(flip: bool = False) -> str:
    """A CSV of `ROWS` rows; `flip`: the same size, other labels."""
    labels = "ba" if flip else "ab"
    return "x,label\n" + "".join(f"{i},{labels[i % 2]}\n" for i in range(ROWS))


def images() -> dict[str, bytes]:
    """Six small PNGs (each under one 512-byte tar block)."""
    colours = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (9, 9, 9), (250, 250, 0), (0, 0, 0)]
    return {f"img{i}.png": png(4, 4, c) for i, c in enumerate(colours)}


def rotated(members: dict[str, bytes]) -> dict[str, bytes]:
    """The same names, each holding the next one's bytes: a tar of the same size and layout."""
    names, data = list(members), list(members.values())
    return dict(zip(names, data[1:] + data[:1], strict=True))


TAR_SPEC = """\
name: tarred
version: 1.0.0
features:
  image: {type: Image, shape: [null, null, 3], encoding: png}
  file_name: {type: Text}
downloads:
  photos: {manual: photos.tar}
splits:
  train:
    format: image_tar
    files: {archive: photos}
    options: {file_name: file_name}
    num_examples: 6
"""

CSV_SPEC = f"""\
name: by_hand
version: 1.0.0
features:
  x: {{type: Scalar, dtype: int64}}
  label: {{type: ClassLabel, names: [a, b]}}
downloads:
  table: {{manual: table.csv}}
splits:
  train:
    format: delimited
    files: {{file: table}}
    options: {{columns: {{x: x, label: label}}}}
    num_examples: {ROWS}
"""


def manual_builder(tmp_path: Path, spec: str) -> DatasetBuilder:
    folder = tmp_path / "builder"
    folder.mkdir()
    (folder / "builder.yaml").write_text(spec)
    return DatasetBuilder(load_spec(folder), data_dir=tmp_path / "data")


def manual_config(tmp_path: Path) -> DownloadConfig:
    return DownloadConfig(
        manual_dir=tmp_path / "manual", download_dir=tmp_path / "downloads", progress="none"
    )


def rewrite(path: Path, data: bytes) -> None:
    """`path` rewritten in place (same inode) with `data`."""
    with path.open("r+b") as f:
        f.write(data)
        f.truncate()


def own_table(tmp_path: Path) -> tuple[DatasetBuilder, Path, Callable[[], None]]:
    path = tmp_path / "own" / "table.csv"
    path.parent.mkdir()
    path.write_text(table())
    b = files_builder(path, "table", data_dir=tmp_path / "data")
    return b, path, lambda: rewrite(path, table(flip=True).encode())


def manual_tar(tmp_path: Path) -> tuple[DatasetBuilder, Path, Callable[[], None]]:
    (tmp_path / "manual").mkdir()
    path = tmp_path / "manual" / "photos.tar"
    path.write_bytes(tar_bytes(images()))
    other = tar_bytes(rotated(images()))
    assert len(other) == path.stat().st_size
    return manual_builder(tmp_path, TAR_SPEC), path, lambda: rewrite(path, other)


def image_folder(tmp_path: Path) -> tuple[DatasetBuilder, Path, Callable[[], None]]:
    root = tmp_path / "photos"
    for i, (name, data) in enumerate(images().items()):
        (root / "ab"[i % 2]).mkdir(parents=True, exist_ok=True)
        (root / "ab"[i % 2] / name).write_bytes(data)
    path = root / "a" / "img0.png"
    b = files_builder(root, "photos", data_dir=tmp_path / "data")
    return b, path, lambda: rewrite(path, png(4, 4, (1, 2, 3)))


@pytest.mark.parametrize("make", [own_table, manual_tar, image_folder])
def test_a_file_changed_while_it_is_read_is_named_and_nothing_is_published(
    tmp_path: Path, make: Callable[[Path], tuple[DatasetBuilder, Path, Callable[[], None]]]
) -> None:
    b, path, change = make(tmp_path)
    options = PrepareOptions(shard_bytes=1)  # one example per unit
    with pytest.raises(ChecksumError) as raised:
        b.prepare(
            options,
            progress=After(b.full_name, 1, change),
            download_config=manual_config(tmp_path),
        )
    message = str(raised.value)
    assert str(path) in message and "changed while" in message, message
    assert "nothing is published" in message
    assert not list((tmp_path / "data").rglob("dataset_info.json"))
    assert not list((tmp_path / "data").rglob("*.array_record-*"))


def test_a_touched_file_with_the_same_bytes_is_prepared(tmp_path: Path) -> None:
    b, path, _ = own_table(tmp_path)
    b.prepare(
        PrepareOptions(shard_bytes=1),
        progress=After(b.full_name, 1, lambda: os.utime(path, ns=(1, 1))),
    )
    rows = b.as_data_source("train")
    assert [int(rows[i]["x"]) for i in range(len(rows))] == list(range(ROWS))


def test_a_manual_file_copied_over_with_its_size_and_mtime_is_not_resumed(
    tmp_path: Path,
) -> None:
    b = manual_builder(tmp_path, CSV_SPEC)
    (tmp_path / "manual").mkdir()
    path = tmp_path / "manual" / "table.csv"
    path.write_text(table())
    os.utime(path, ns=(10**18, 10**18))

    def interrupt() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        b.prepare(
            PrepareOptions(shard_bytes=1),
            progress=After(b.full_name, 2, interrupt),
            download_config=manual_config(tmp_path),
        )
    assert list((tmp_path / "data").glob("by_hand/1.0.0.incomplete-*/*.array_record-*"))
    # `cp -p` of another file: the same size, the mtime set back (only the ctime differs)
    replacement = tmp_path / "replacement.csv"
    replacement.write_text(table(flip=True))
    rewrite(path, replacement.read_bytes())
    os.utime(path, ns=(10**18, 10**18))
    done = b.prepare(PrepareOptions(shard_bytes=1), download_config=manual_config(tmp_path))
    assert done.units_kept == 0
    rows = b.as_data_source("train")
    labels = [int(rows[i]["label"]) for i in range(len(rows))]
    assert labels == [(i + 1) % 2 for i in range(ROWS)]  # all of the new file's


def test_the_same_manual_file_is_resumed(tmp_path: Path) -> None:
    b = manual_builder(tmp_path, CSV_SPEC)
    (tmp_path / "manual").mkdir()
    (tmp_path / "manual" / "table.csv").write_text(table())

    def interrupt() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        b.prepare(
            PrepareOptions(shard_bytes=1),
            progress=After(b.full_name, 2, interrupt),
            download_config=manual_config(tmp_path),
        )
    done = b.prepare(PrepareOptions(shard_bytes=1), download_config=manual_config(tmp_path))
    assert done.units_kept == 2


class AtStart(PrepareProgress):
    """Runs `action` once the plan is made, after the files were hashed, before any unit."""

    def __init__(self, name: str, action: Callable[[], None]) -> None:
        super().__init__(name, "none")
        self.action = action

    def start(self, plan: Any) -> None:
        super().start(plan)
        self.action()


def test_worker_processes_check_what_they_read(tmp_path: Path) -> None:
    """Units run in spawned processes check their files there (the watched files travel
    with each task): a file rewritten after it was hashed fails the prepare."""
    b, path, change = own_table(tmp_path)
    with pytest.raises(ChecksumError, match="changed while unit") as raised:
        b.prepare(PrepareOptions(shard_bytes=1, num_proc=2), progress=AtStart(b.full_name, change))
    assert str(path) in str(raised.value)
    assert not list((tmp_path / "data").rglob("dataset_info.json"))
