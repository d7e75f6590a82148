"""catalog.download.extract: every format by content, extracted once, and unsafe archives refused.

Archives are generated here (no committed binaries), including hostile ones: ``..`` and
absolute members, links pointing out, device files and FIFOs.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from catalog._util.hashing import sha256_file
from catalog.download.extract import archive_format, extract
from catalog.errors import SourceFormatError

FILES = {"top.txt": b"top level\n", "nested/deep/data.bin": bytes(range(256)) * 8}


def make_tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]], mode: str) -> Path:
    with tarfile.open(path, mode) as tar:  # type: ignore[call-overload]
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def special(name: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.devmajor, info.devminor = kind, 1, 3
    return info


def make_zip(path: Path, members: dict[str, bytes], symlinks: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("fmt", "mode"),
    [("tar", "w"), ("tar.gz", "w:gz"), ("tar.bz2", "w:bz2"), ("tar.xz", "w:xz")],
)
def test_tar_formats_are_detected_by_content_and_extracted(
    tmp_path: Path, fmt: str, mode: str
) -> None:
    archive = make_tar(tmp_path / "download.bin", list(FILES.items()), mode)  # no telling suffix
    assert archive_format(archive) == fmt
    out = extract(archive, tmp_path / "extracted", name="archive")
    assert out == tmp_path / "extracted" / f"{sha256_file(archive)[:16]}-archive"
    assert tree(out) == FILES


def test_zip_is_detected_by_content_and_extracted(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "download", FILES)
    assert archive_format(archive) == "zip"
    assert tree(extract(archive, tmp_path / "x")) == FILES


@pytest.mark.parametrize(
    ("fmt", "compress"), [("gz", gzip.compress), ("bz2", bz2.compress), ("xz", lzma.compress)]
)
def test_single_compressed_file_becomes_one_file(
    tmp_path: Path, fmt: str, compress: object
) -> None:
    data = b"one file, compressed\n" * 100
    archive = tmp_path / f"labels.idx.{fmt}"
    archive.write_bytes(compress(data))  # type: ignore[operator]
    assert archive_format(archive) == fmt
    out = extract(archive, tmp_path / "x")
    assert tree(out) == {"labels.idx": data}


def test_content_wins_over_the_suffix(tmp_path: Path) -> None:
    archive = tmp_path / "misnamed.zip"
    archive.write_bytes(gzip.compress(b"actually gzip"))
    assert tree(extract(archive, tmp_path / "x")) == {"misnamed.zip": b"actually gzip"}


def test_extracted_once_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = make_tar(tmp_path / "a.tar.gz", list(FILES.items()), "w:gz")
    first = extract(archive, tmp_path / "x")

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("extracted twice")

    monkeypatch.setattr(tarfile, "open", fail)
    assert extract(archive, tmp_path / "x") == first
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert extract(archive, tmp_path / "x", sha256=digest) == first  # no hashing needed
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == [f".{first.name}.lock", first.name]


def test_a_link_inside_the_archive_is_fine(tmp_path: Path) -> None:
    archive = make_tar(
        tmp_path / "ok.tar",
        [
            ("dir/file.txt", b"x"),
            link("dir/alias", "file.txt"),
            link("hard", "dir/file.txt", tarfile.LNKTYPE),
        ],
        "w",
    )
    out = extract(archive, tmp_path / "x")
    assert (out / "dir" / "alias").is_symlink() and (out / "dir" / "alias").read_bytes() == b"x"
    assert (out / "hard").read_bytes() == b"x"


@pytest.mark.parametrize(
    ("member", "problem"),
    [
        (("../evil.txt", b"x"), "member '../evil.txt' would land outside"),
        (("a/../../evil.txt", b"x"), "member 'a/../../evil.txt' would land outside"),
        (("/etc/evil.txt", b"x"), "member '/etc/evil.txt' would land outside"),
        (link("passwd", "/etc/passwd"), "member 'passwd' is a symlink pointing outside"),
        (link("up", "../.."), "member 'up' is a symlink pointing outside"),
        (link("sub/up", "../../x"), "member 'sub/up' is a symlink pointing outside"),
        (link("h", "../outside", tarfile.LNKTYPE), "member 'h' is a hard link pointing outside"),
        (link("h", "/etc/passwd", tarfile.LNKTYPE), "member 'h' is a hard link pointing outside"),
        (special("dev/null", tarfile.CHRTYPE), "member 'dev/null' is a device file"),
        (special("dev/sda", tarfile.BLKTYPE), "member 'dev/sda' is a device file"),
        (special("pipe", tarfile.FIFOTYPE), "member 'pipe' is a FIFO"),
    ],
)
def test_unsafe_tar_members_are_refused(
    tmp_path: Path, member: tarfile.TarInfo | tuple[str, bytes], problem: str
) -> None:
    archive = make_tar(tmp_path / "evil.tar.gz", [("fine.txt", b"ok"), member], "w:gz")
    with pytest.raises(SourceFormatError, match="refusing to extract") as info:
        extract(archive, tmp_path / "x")
    assert problem in str(info.value) and str(archive) in str(info.value)
    assert [p.name for p in (tmp_path / "x").iterdir() if not p.name.endswith(".lock")] == []
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path.parent / "evil.txt").exists()


def test_link_escaping_through_another_link_is_refused(tmp_path: Path) -> None:
    # Each target looks inside on its own ("here" -> ".", "x" -> "here/.."); followed on disk,
    # "x" leads out. tarfile's data filter, behind our checks, catches it.
    archive = make_tar(tmp_path / "sneaky.tar", [link("here", "."), link("x", "here/..")], "w")
    with pytest.raises(SourceFormatError, match="refusing to extract"):
        extract(archive, tmp_path / "x")
    assert [p.name for p in (tmp_path / "x").iterdir() if not p.name.endswith(".lock")] == []


@pytest.mark.parametrize(
    ("members", "symlinks", "problem"),
    [
        ({"../evil.txt": b"x"}, {}, "member '../evil.txt' would land outside"),
        ({"/abs/evil.txt": b"x"}, {}, "member '/abs/evil.txt' would land outside"),
        ({"C:/evil.txt": b"x"}, {}, "member 'C:/evil.txt' would land outside"),
        ({}, {"link": "/etc/passwd"}, "member 'link' is a symlink"),
    ],
)
def test_unsafe_zip_members_are_refused(
    tmp_path: Path, members: dict[str, bytes], symlinks: dict[str, str], problem: str
) -> None:
    archive = make_zip(tmp_path / "evil.zip", {"fine.txt": b"ok", **members}, symlinks)
    with pytest.raises(SourceFormatError, match="refusing to extract") as info:
        extract(archive, tmp_path / "x")
    assert problem in str(info.value)
    assert [p.name for p in (tmp_path / "x").iterdir() if not p.name.endswith(".lock")] == []


def test_not_an_archive(tmp_path: Path) -> None:
    plain = tmp_path / "data.tar.gz"
    plain.write_bytes(b"just some bytes, whatever the name says" * 20)
    assert archive_format(plain) is None
    with pytest.raises(SourceFormatError, match="not an archive or compressed file"):
        extract(plain, tmp_path / "x")


def test_corrupt_archive_leaves_nothing(tmp_path: Path) -> None:
    good = make_tar(tmp_path / "a.tar.gz", list(FILES.items()), "w:gz").read_bytes()
    corrupt = tmp_path / "corrupt.tar.gz"
    corrupt.write_bytes(good[: len(good) // 2])
    with pytest.raises(SourceFormatError, match=r"corrupt.tar.gz is not a valid tar.gz file"):
        extract(corrupt, tmp_path / "x")
    assert [p.name for p in (tmp_path / "x").iterdir() if not p.name.endswith(".lock")] == []


def test_a_killed_extraction_is_cleaned_up(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "a.tar", list(FILES.items()), "w")
    target_name = f"{sha256_file(archive)[:16]}-a.tar"
    stale = tmp_path / "x" / f".{target_name}.incomplete-abc"
    stale.mkdir(parents=True)
    (stale / "half").write_bytes(b"half")
    assert tree(extract(archive, tmp_path / "x")) == FILES
    assert not stale.exists()
