"""`catalog.formats.shards.members.walk`: a directory, a zip and a tar stream give the same files,
with the reference catalog's rules for names, and nothing extracted."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from catalog.errors import SourceFormatError
from catalog.formats.shards.members import paths, walk

from dummy_images import tar_bytes, write_zip

FILES = {"b/2.png": b"two", "a/1.png": b"one", "a/sub/3.png": b"three"}
LEFT_OUT = {"a/._1.png": b"mac", ".git/x": b"hidden", "a/backup.png~": b"old", "a/.DS_Store": b""}


def roots(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "dir"
    for name, data in {**FILES, **LEFT_OUT}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    write_zip(tmp_path / "x.zip", {**FILES, **LEFT_OUT})
    members = {f"./{name}": data for name, data in {**FILES, **LEFT_OUT}.items()}
    (tmp_path / "x.tar.gz").write_bytes(tar_bytes(members, "gz"))
    return {"dir": folder, "zip": tmp_path / "x.zip", "tar": tmp_path / "x.tar.gz"}


@pytest.mark.parametrize("kind", ["dir", "zip", "tar"])
def test_walk_gives_every_file_once_with_normalised_paths(kind: str, tmp_path: Path) -> None:
    root = roots(tmp_path)[kind]
    got = {m.path: m.read() for m in walk(root)}
    assert got == FILES
    assert sorted(paths(root)) == sorted(FILES)
    if kind != "tar":  # sorted order; a tar stream keeps the archive's order
        assert [m.path for m in walk(root)] == ["a/1.png", "a/sub/3.png", "b/2.png"]


def test_walk_refuses_a_file_that_is_no_archive(tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"not an archive")
    with pytest.raises(SourceFormatError, match="expected a directory, a zip or a tar"):
        list(walk(tmp_path / "x.bin"))


def test_walk_reads_an_archive_inside_a_zip_in_place(tmp_path: Path) -> None:
    inner = roots(tmp_path)
    write_zip(tmp_path / "outer.zip", {"in/x.tar.gz": inner["tar"].read_bytes(),
                                       "in/x.zip": inner["zip"].read_bytes()})  # fmt: skip
    for name in ("in/x.tar.gz", "in/x.zip"):
        member = zipfile.Path(tmp_path / "outer.zip", name)
        assert {m.path: m.read() for m in walk(member)} == FILES
        assert sorted(paths(member)) == sorted(FILES)
