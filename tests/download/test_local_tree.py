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


def _count_hashing(monkeypatch: pytest.MonkeyPatch) -> list[os.PathLike[str]]:
    """The files `Digest.of_file` hashes from now on, in a list that grows."""
    reads: list[os.PathLike[str]] = []
    real = local_tree.Digest.of_file

    def counting(p: os.PathLike[str]) -> local_tree.Digest:
        reads.append(p)
        return real(p)

    monkeypatch.setattr(local_tree.Digest, "of_file", staticmethod(counting))
    return reads


def test_a_file_is_hashed_again_only_when_its_stamp_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"abc")
    reads = _count_hashing(monkeypatch)
    first = file_digest(path)
    again = file_digest(path)
    assert (again.size, again.sha256) == (first.size, first.sha256) and len(reads) == 1
    stat = path.stat()
    path.write_bytes(b"abd")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime put back: ctime still moves
    changed = file_digest(path)
    assert changed.sha256 != first.sha256 and len(reads) == 2


def test_a_file_read_whole_by_a_reader_is_not_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`HashingReader`: a file a reader read to its end unchanged has the digest it hashed
    while reading; read in part, or changed while read, it is hashed again when asked."""
    import hashlib

    reads = _count_hashing(monkeypatch)
    data = os.urandom(3000)
    whole, part, changed = tmp_path / "whole.csv", tmp_path / "part.csv", tmp_path / "changed"
    for path in (whole, part, changed):
        path.write_bytes(data)
    reader = local_tree.HashingReader(whole)
    while reader.read(1000):
        pass
    reader.close()
    digest = file_digest(whole.resolve())
    assert (digest.size, digest.sha256, reads) == (3000, hashlib.sha256(data).hexdigest(), [])
    reader = local_tree.HashingReader(part)
    reader.read(1000)
    reader.close()
    assert file_digest(part.resolve()).sha256 == hashlib.sha256(data).hexdigest()
    assert reads == [part.resolve()]
    reader = local_tree.HashingReader(changed)
    reader.read(1000)
    with open(changed, "r+b") as f:  # rewritten while it is read
        f.write(b"x")
    while reader.read(1000):
        pass
    reader.close()
    assert file_digest(changed.resolve()).sha256 == hashlib.sha256(b"x" + data[1:]).hexdigest()
    assert reads == [part.resolve(), changed.resolve()]


def test_a_csv_prepared_from_files_is_read_once_for_its_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`catalog prepare FILE.csv`: the type scan hashes the file as it reads it; the spec's
    sha256 is the file's, and neither the spec nor the prepare reads it for it again."""
    import hashlib

    import catalog
    from catalog.spec.infer import table_scan

    monkeypatch.setattr(table_scan, "BULK_BYTES_PER_COLUMN", 0)  # this small file in batches
    path = tmp_path / "t.csv"
    path.write_text("a,b\n" + "".join(f"{i},x{i}\n" for i in range(500)), "utf-8")
    reads = []
    real = local_tree.Digest.of_file

    def counting(p: os.PathLike[str]) -> local_tree.Digest:
        reads.append(Path(p))
        return real(p)

    monkeypatch.setattr(local_tree.Digest, "of_file", staticmethod(counting))
    builder = catalog.prepare_files(str(path), "hashed_once", data_dir=str(tmp_path / "data"))
    (download,) = builder.spec.downloads.values()
    assert download.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert path.resolve() not in reads
    assert len(builder.as_data_source("train")) == 500
