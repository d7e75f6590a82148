"""A local folder's digest (catalog.download.local_tree): any changed, added, removed or
renamed file changes it; hidden files and a builder's own files at the top do not; a file
hashed before is not read again unless its stamp changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from catalog.download import local_tree
from catalog.download.local_tree import file_digest, tree_digest


def _folder(root: Path) -> Path:
    (root / "a").mkdir(parents=True)
    (root / "a" / "1.png").write_bytes(b"one")
    (root / "b.csv").write_bytes(b"x,y\n")
    return root


def test_every_change_changes_the_digest(tmp_path: Path) -> None:
    root = _folder(tmp_path / "f")
    first = tree_digest(root)
    assert first.size == 7
    seen = {first.sha256}
    (root / "a" / "1.png").write_bytes(b"One")  # same size, other bytes
    seen.add(tree_digest(root).sha256)
    (root / "a" / "1.png").rename(root / "a" / "2.png")
    seen.add(tree_digest(root).sha256)
    (root / "c.txt").write_bytes(b"")
    seen.add(tree_digest(root).sha256)
    (root / "b.csv").unlink()
    seen.add(tree_digest(root).sha256)
    assert len(seen) == 5


def test_hidden_files_and_builder_files_do_not_count(tmp_path: Path) -> None:
    root = _folder(tmp_path / "f")
    before = tree_digest(root).sha256
    (root / ".DS_Store").write_bytes(b"junk")
    (root / "a" / ".hidden").write_bytes(b"junk")
    (root / "builder.yaml").write_text("name: f\n")
    (root / "checksums.tsv").write_text(".\t7\t" + "0" * 64 + "\tf\n")
    assert tree_digest(root).sha256 == before
    (root / "a" / "builder.yaml").write_text("inside a data folder it is data\n")
    assert tree_digest(root).sha256 != before


def test_the_same_files_elsewhere_give_the_same_digest(tmp_path: Path) -> None:
    assert (
        tree_digest(_folder(tmp_path / "x")).sha256 == tree_digest(_folder(tmp_path / "y")).sha256
    )


def test_a_file_is_hashed_again_only_when_its_stamp_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"abc")
    reads = []
    real = local_tree.Digest.of_file

    def counting(p: os.PathLike[str]) -> local_tree.Digest:
        reads.append(p)
        return real(p)

    monkeypatch.setattr(local_tree.Digest, "of_file", staticmethod(counting))
    first = file_digest(path)
    again = file_digest(path)
    assert (again.size, again.sha256) == (first.size, first.sha256) and len(reads) == 1
    stat = path.stat()
    path.write_bytes(b"abd")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime put back: ctime still moves
    changed = file_digest(path)
    assert changed.sha256 != first.sha256 and len(reads) == 2
