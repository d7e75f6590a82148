"""What a newcomer still tripped on in the download path: a failed download is one line on
stderr (``--verbose``: every source), only the files the splits read are fetched, a mirror
dir's file is linked or read in place (never copied) and never trusted once changed, and a
directory where a mirror file belongs is named as one."""

from __future__ import annotations

import dataclasses
import errno
import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import catalog
from catalog.download import DownloadConfig, DownloadManager, Resource
from catalog.download.checksums import read_checksums
from catalog.download.report import summary
from catalog.errors import ChecksumError, DownloadError
from catalog.prepare.driver import needed_downloads
from catalog.spec.load import load_spec
from catalog.spec.model import FileRef
from catalog.testing.http_server import HTML_PAGE, LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from conftest import write_builder

BODY = bytes(range(256)) * 64
SHA256 = hashlib.sha256(BODY).hexdigest()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args], capture_output=True, text=True, timeout=120
    )


def resource(*urls: str, body: bytes = BODY, filename: str = "data.bin") -> Resource:
    return Resource(urls, len(body), hashlib.sha256(body).hexdigest(), filename)


def manager(tmp_path: Path, **options: Any) -> DownloadManager:
    fields: dict[str, Any] = {
        "download_dir": tmp_path / "dl",
        "manual_dir": tmp_path / "manual",
        "mirrors": (),
        "offline": False,
        "backoff": 0.0,
        "retries": 0,
        "progress": "none",
        **options,
    }
    return DownloadManager(DownloadConfig(**fields), sleep=lambda seconds: None)


def idx_files(root: Path, count: int = 5) -> dict[str, bytes]:
    return {
        "i.gz": write_idx(root / "i.gz", pattern_images(count)).read_bytes(),
        "l.gz": write_idx(root / "l.gz", pattern_labels(count)).read_bytes(),
    }


def mirror_file(mirror: Path, url: str, data: bytes | None = None) -> Path:
    """`url`'s place in a mirror dir (the wget -x layout), written with `data` if given."""
    path = mirror.joinpath(*url.split("://", 1)[1].split("/"))
    if data is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return path


def copies_of(root: Path, data: bytes) -> list[Path]:
    """The regular files under `root` holding exactly `data`."""
    return sorted(
        p for p in root.rglob("*") if p.is_file() and p.stat().st_size == len(data)
        and p.read_bytes() == data
    )  # fmt: skip


# 3. A failed download is one line on stderr; --verbose and the exception's text have it all.


def test_cli_failed_download_is_one_line_and_verbose_lists_every_source(
    tmp_path: Path, server: LoopbackServer
) -> None:
    files = idx_files(tmp_path)
    folder = write_builder(tmp_path / "tiny", server, files, splits={"train": ("i.gz", "l.gz", 5)})
    spec = (folder / "builder.yaml").read_text()
    # Every file has a mirror URL too, and none of the four URLs has it (HTTP 404): as with
    # no network, every source fails the same way, at once (no retry rounds to wait for).
    for name in files:
        url = server.add(f"/files/tiny/{name}", b"gone\n", status=404)
        spec = spec.replace(f"{{url: {url}}}", f"{{url: {url}, mirrors: [{url}.mirror]}}")
    (folder / "builder.yaml").write_text(spec)
    args = ["prepare", str(folder), "--data-dir", str(tmp_path / "data")]

    result = run(*args)
    assert result.returncode == 3 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1] == "catalog: 1 of 1 failed: tiny"
    (line,) = [x for x in lines if x.startswith("catalog: error:")]
    assert lines == [line, lines[-1]], result.stderr
    assert line.startswith("catalog: error: tiny: could not download 2 of 2 files (i.gz, l.gz): ")
    first = server.url("/files/tiny/i.gz")
    assert f"all 4 sources tried failed the same way, e.g. {first}: HTTP 404 Not Found. " in line
    assert "--mirror" in line and "--offline" in line and str(tmp_path / "data") in line
    assert line.endswith("; --verbose lists every source tried")

    verbose = run(*args, "--verbose", "-q")
    assert verbose.returncode == 3 and "Traceback" not in verbose.stderr
    for name in files:
        url = server.url(f"/files/tiny/{name}")
        assert f"\n  {url}: " in verbose.stderr and f"\n  {url}.mirror: " in verbose.stderr
    assert "--verbose lists" not in verbose.stderr


def test_api_error_text_is_the_full_report_and_summary_one_line(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """A Python user gets every source in str(error) (tracebacks, logs) and the CLI's one line
    in `error.summary`; the most telling reason leads it (here: an HTML page, not a 404 nor a
    mirror dir that simply lacks the file)."""
    missing = server.url("/missing/data.bin")
    html = server.add("/html/data.bin", HTML_PAGE, content_type="text/html")
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    with pytest.raises(DownloadError) as info:
        manager(tmp_path, mirrors=[str(mirror)]).download(resource(missing, html))
    text = str(info.value)
    assert text.splitlines()[0] == "could not download data.bin:"
    assert f"  {missing}: HTTP 404" in text and f"  {html}: the server sent an HTML page" in text
    assert f"  {mirror_file(mirror, missing)}: not found" in text
    short = info.value.summary  # type: ignore[attr-defined]
    assert short == summary(info.value) and "\n" not in short
    assert short.startswith(
        "could not download data.bin: 4 sources tried, none delivered; most telling: "
        f"{html}: the server sent an HTML page"
    )
    assert "--mirror" in short and str(tmp_path / "manual") in short


def test_summary_of_wrong_bytes_says_so(tmp_path: Path, server: LoopbackServer) -> None:
    url = server.add("/data.bin", BODY[:-1] + b"X")
    with pytest.raises(ChecksumError) as info:
        manager(tmp_path).download(resource(url))
    short = summary(info.value)
    assert short is not None and "\n" not in short
    assert short.startswith(f"could not download data.bin: the one source tried failed: {url}: ")
    assert "sha256 mismatch" in short and "--register-checksums" in short
    assert summary(ValueError("not ours")) is None


# 4. Only what the splits read is fetched.


def test_prepare_fetches_only_the_files_the_splits_read(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """A builder whose train split was removed (its downloads still declared, one not even
    registered) fetches only the test split's files; registering checksums fetches them all."""
    for d in (tmp_path / "train", tmp_path / "test"):
        d.mkdir()
    train, test = idx_files(tmp_path / "train", 4), idx_files(tmp_path / "test", 3)
    files = {f"train-{n}": b for n, b in train.items()} | {f"test-{n}": b for n, b in test.items()}
    folder = write_builder(
        tmp_path / "tiny", server, files, splits={"test": ("test-i.gz", "test-l.gz", 3)}
    )
    unregistered = server.add("/files/tiny/extra.bin", b"extra")
    text = (folder / "builder.yaml").read_text()
    (folder / "builder.yaml").write_text(
        text.replace("downloads:\n", f"downloads:\n  extra: {{url: {unregistered}}}\n")
    )

    config = DownloadConfig(mirrors=(), offline=False, progress="none")
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    info = b.download_and_prepare(download_config=config)
    assert info.splits["test"].num_examples == 3
    assert sorted(r.path for r in server.requests) == [
        "/files/tiny/test-i.gz",
        "/files/tiny/test-l.gz",
    ]

    register = DownloadConfig(register_checksums=True, mirrors=(), offline=False, progress="none")
    catalog.builder(folder, data_dir=tmp_path / "data2").download_and_prepare(
        download_config=register
    )
    fetched = {r.path for r in server.requests}
    assert {"/files/tiny/train-i.gz", "/files/tiny/train-l.gz", "/files/tiny/extra.bin"} <= fetched
    assert unregistered in read_checksums(folder / "checksums.tsv")


def test_needed_downloads_follow_files_and_file_valued_options(
    tmp_path: Path, server: LoopbackServer
) -> None:
    files = {"i.gz": b"i", "l.gz": b"l", "names.txt": b"n", "other.txt": b"o"}
    folder = write_builder(tmp_path / "tiny", server, files, splits={"a": ("i.gz", "l.gz", 1)})
    spec = load_spec(folder)
    split = spec.splits["a"]
    with_options = dataclasses.replace(
        split,
        options={"names_files": {"label": FileRef("names_txt")}, "order": {"x": "y"}, "n": 3},
    )
    assert needed_downloads(spec) == {"i_gz", "l_gz"}
    assert needed_downloads(spec.replace(splits={"a": with_options})) == {
        "i_gz",
        "l_gz",
        "names_txt",
    }


# 5. A mirror dir's file is verified and linked or read in place, never copied.


def test_mirror_file_is_hard_linked_into_the_cache_not_copied(
    tmp_path: Path, server: LoopbackServer
) -> None:
    url = server.url("/files/data.bin")  # not served: the mirror dir answers
    original = mirror_file(tmp_path / "mirror", url, BODY)
    file = manager(tmp_path, mirrors=[str(tmp_path / "mirror")]).download(resource(url))
    assert file.path.parent == tmp_path / "dl" and file.path.read_bytes() == BODY
    assert file.path.samefile(original) and original.stat().st_nlink == 2
    assert [p for p in copies_of(tmp_path / "dl", BODY) if not p.samefile(original)] == []
    record = json.loads((tmp_path / "dl" / ".meta" / f"{file.path.name}.json").read_text())
    assert record["url"] == str(original) and record["sha256"] == SHA256
    assert server.requests == []
    # Reused from the cache, offline, at the cost of a stat.
    again = manager(tmp_path, offline=True, mirrors=[str(tmp_path / "mirror")])
    assert again.download(resource(url)) == file


def test_mirror_file_is_read_in_place_where_no_link_can_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cross_device(src: object, dst: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    url = "https://data.example.org/files/data.bin.gz"
    archive = gzip.compress(BODY)
    original = mirror_file(tmp_path / "mirror", url, archive)
    dm = manager(tmp_path, offline=True, mirrors=[str(tmp_path / "mirror")])
    file = dm.download(resource(url, body=archive, filename="data.bin.gz"))
    assert file.path == original and file.sha256 == hashlib.sha256(archive).hexdigest()
    assert copies_of(tmp_path / "dl", archive) == []
    # Extraction reads it where it is and writes into the download dir, as for any download.
    extracted = dm.extract(file)
    assert extracted.is_relative_to(tmp_path / "dl" / "extracted")
    # Wrong bytes in the mirror are refused there too, and named.
    original.write_bytes(archive[:-1] + b"X")
    with pytest.raises(DownloadError, match="sha256 mismatch"):
        dm.download(resource(url, body=archive, filename="data.bin.gz"))


def test_a_mirror_file_changed_after_linking_is_never_served(
    tmp_path: Path, server: LoopbackServer
) -> None:
    url = server.add("/files/data.bin", BODY)
    mirror = tmp_path / "mirror"
    original = mirror_file(mirror, url, BODY)
    first = manager(tmp_path, mirrors=[str(mirror)]).download(resource(url))
    assert first.path.samefile(original) and server.requests == []

    # Rewritten in place with the same size, its mtime set back (as a tool keeping times
    # does): only the ctime tells, so the cache record's ctime is set to an earlier one, as a
    # later write leaves it (a write within the same clock tick could not be told apart).
    stat = original.stat()
    with open(original, "r+b") as out:
        out.write(b"X")
    os.utime(original, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    record_path = tmp_path / "dl" / ".meta" / f"{first.path.name}.json"
    record = json.loads(record_path.read_text())
    now = original.stat()
    assert len(record["checked"]) == 4  # inode, size, mtime, ctime when it was hashed
    assert record["checked"][:3] == [now.st_ino, now.st_size, now.st_mtime_ns]
    record["checked"][3] = min(record["checked"][3], now.st_ctime_ns - 1)
    record_path.write_text(json.dumps(record))

    with pytest.raises(DownloadError) as info:  # offline: nothing else has the bytes
        manager(tmp_path, offline=True, mirrors=[str(mirror)]).download(resource(url))
    assert f"{original}: sha256 mismatch" in str(info.value)
    assert not first.path.exists() and original.read_bytes()[:1] == b"X"  # the mirror is kept

    again = manager(tmp_path, mirrors=[str(mirror)]).download(resource(url))
    assert again.path.read_bytes() == BODY and not again.path.samefile(original)
    assert [r.path for r in server.requests] == ["/files/data.bin"]


# 6. A directory where a mirror file belongs.


def test_cli_a_directory_where_a_mirror_file_belongs_is_named_as_such(
    tmp_path: Path, server: LoopbackServer
) -> None:
    files = idx_files(tmp_path)
    folder = write_builder(tmp_path / "tiny", server, files, splits={"train": ("i.gz", "l.gz", 5)})
    mirror = tmp_path / "mirror"
    mirror_file(mirror, server.url("/files/tiny/l.gz"), files["l.gz"])
    folder_there = mirror_file(mirror, server.url("/files/tiny/i.gz"))
    (folder_there / "extracted-by-hand").mkdir(parents=True)
    args = ["prepare", str(folder), "--data-dir", str(tmp_path / "data"), "--offline"]

    result = run(*args, "--mirror", str(mirror))
    assert result.returncode == 3 and "Traceback" not in result.stderr
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("catalog: error:")]
    assert f"{folder_there}: is a directory; expected the downloaded file itself" in line
    assert f"{folder_there}: not found" not in result.stderr

    verbose = run(*args, "--mirror", str(mirror), "--verbose")
    assert f"  {folder_there}: is a directory; expected the downloaded file" in verbose.stderr
    assert "(<mirror>/<host>/<path of the URL>)" in verbose.stderr
    assert server.requests == []


def test_a_directory_in_the_manual_dir_is_named_as_such(tmp_path: Path) -> None:
    url = "https://data.example.org/files/data.bin"
    (tmp_path / "manual" / "data.bin").mkdir(parents=True)
    with pytest.raises(DownloadError) as info:
        manager(tmp_path, offline=True).download(resource(url))
    where = tmp_path / "manual" / "data.bin"
    assert f"{where} (manual dir): is a directory; expected the downloaded file" in str(info.value)
