"""Rough edges a new user met on first contact, each fixed and kept fixed here."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_labels

from conftest import catalog_cli, idx_builder


def one_error_line(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("catalog: error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_prepared_and_extracted_dirs_follow_the_umask(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 5)
    old = os.umask(0o022)
    try:
        catalog.data_source(folder, data_dir=tmp_path / "data")
        b = catalog.builder(folder, data_dir=tmp_path / "data")
        from catalog.download.extract import extract

        archive = tmp_path / "a.tar"
        import tarfile

        with tarfile.open(archive, "w") as tar:
            tar.add(folder / "builder.yaml", arcname="x/builder.yaml")
        extracted = extract(archive, tmp_path / "extracted", name="a.tar", sha256="0" * 64)
    finally:
        os.umask(old)
    for path in (b.data_path, b.data_path.parent, extracted):
        assert stat.S_IMODE(path.stat().st_mode) == 0o755, path
    for shard in b.data_path.iterdir():
        assert stat.S_IMODE(shard.stat().st_mode) == 0o644, shard


def test_a_copy_prepared_from_another_builder_is_refused_everywhere(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """Two builder folders with the same name and version (one cut down): every command
    gives the same answer about the copy in the data dir."""
    data = tmp_path / "data"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    small = idx_builder(tmp_path / "b", server, 5)
    assert catalog_cli("prepare", str(small), "--data-dir", str(data), "-q").returncode == 0
    big = idx_builder(tmp_path / "a", server, 20)  # serves its own files at the same paths
    assert not catalog.builder(big, data_dir=data).is_prepared
    with pytest.raises(catalog.NotPreparedError, match="prepared from another builder"):
        catalog.builder(big, data_dir=data).as_data_source("train")
    with pytest.raises(catalog.NotPreparedError, match="--overwrite"):
        catalog.data_source(big, split="train", data_dir=data, download=False)
    info = json.loads(catalog_cli("info", str(big), "--data-dir", str(data), "--json").stdout)
    assert info["prepared"] is False and info["splits"]["train"]["num_examples"] == 20
    line = one_error_line(catalog_cli("verify", str(big), "--data-dir", str(data)), 2)
    assert "prepared from another builder" in line and str(small) in line
    # The builder it was prepared from still reads it; preparing the other one replaces it.
    assert len(catalog.builder(small, data_dir=data).as_data_source("train")) == 5
    result = catalog_cli("prepare", str(big), "--data-dir", str(data))
    assert result.returncode == 0 and "prepared in" in result.stdout
    assert len(catalog.data_source(big, split="train", data_dir=data, download=False)) == 20


@pytest.fixture
def immutable() -> Iterator[list[Path]]:
    """Folders made immutable with chattr +i (read-only even for root), restored after."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed: cannot make a folder read-only for root")
    folders: list[Path] = []
    yield folders
    for folder in folders:
        subprocess.run(["chattr", "-i", str(folder)], check=False)


def make_immutable(folders: list[Path], *paths: Path) -> None:
    for path in paths:
        result = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if result.returncode != 0:
            pytest.skip(f"chattr +i is not supported here: {result.stderr.strip()}")
        folders.append(path)


def test_prepare_reuses_a_dataset_in_a_read_only_data_dir(
    tmp_path: Path, server: LoopbackServer, immutable: list[Path]
) -> None:
    data = tmp_path / "data"
    folder = idx_builder(tmp_path, server, 5)
    (tmp_path / "o").mkdir()
    other = idx_builder(tmp_path / "o", server, 3, name="other")
    assert catalog_cli("prepare", str(folder), "--data-dir", str(data), "-q").returncode == 0
    make_immutable(immutable, data, data / "tiny", data / "tiny" / "1.0.0")
    result = catalog_cli("prepare", str(folder), "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    assert "reused" in result.stdout
    # Something to prepare there is a usage error naming the folder.
    line = one_error_line(catalog_cli("prepare", str(other), "--data-dir", str(data)), 2)
    assert f"the data dir {data}" in line and "not writable" in line and "--data-dir" in line


@pytest.mark.parametrize("problem", ["file", "empty", "below_a_file"])
def test_unusable_data_or_download_dirs_are_one_line_usage_errors(
    tmp_path: Path, server: LoopbackServer, problem: str
) -> None:
    folder = idx_builder(tmp_path, server, 5)
    a_file = tmp_path / "a_file"
    a_file.write_text("not a directory")
    for flag in ("--data-dir", "--download-dir"):
        value = {"file": str(a_file), "empty": "", "below_a_file": str(a_file / "sub")}[problem]
        args = ["prepare", str(folder), flag, value]
        if flag == "--download-dir":
            args += ["--data-dir", str(tmp_path / "data")]
        line = one_error_line(catalog_cli(*args), 2)
        what = "data dir" if flag == "--data-dir" else "download dir"
        assert what in line and flag in line, line
        if problem != "empty":
            assert str(a_file) in line
    with pytest.raises(catalog.StorageError, match="is a file"):
        catalog.data_source(folder, data_dir=a_file)
    assert a_file.read_text() == "not a directory"


def test_a_deleted_or_damaged_shard_is_found(tmp_path: Path, server: LoopbackServer) -> None:
    data = tmp_path / "data"
    folder = idx_builder(tmp_path, server, 30)
    ds = catalog.data_source(folder, split="train", data_dir=data)
    shard = Path(ds._records.paths[0])
    shard.unlink()
    with pytest.raises(catalog.ShardError, match="the file is missing") as info:
        catalog.data_source(folder, split="train", data_dir=data, download=False)
    assert str(shard) in str(info.value) and "catalog verify" in str(info.value)
    with pytest.raises(catalog.ShardError, match="missing"):
        ds[0]  # an open source whose shard went away: our error, not array_record's
    # `prepare` does not call it reused: it prepares it again.
    result = catalog_cli("prepare", str(folder), "--data-dir", str(data))
    assert result.returncode == 0 and "prepared in" in result.stdout, result.stdout
    # A shard truncated to garbage of the same size (in the generation prepared now).
    shard = Path(catalog.data_source(folder, split="train", data_dir=data)._records.paths[0])
    shard.write_bytes(b"\0" * shard.stat().st_size)
    fresh = catalog.data_source(folder, split="train", data_dir=data, download=False)
    with pytest.raises(catalog.ShardError, match="not a readable ArrayRecord file"):
        fresh[0]


def test_a_full_disk_while_writing_is_one_line_and_leaves_nothing(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """A file size limit (RLIMIT_FSIZE) makes the shard writer fail as a full disk does."""
    folder = idx_builder(tmp_path, server, 2000)
    data = tmp_path / "data"
    script = textwrap.dedent("""\
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a signal
        from catalog.cli import main
        folder, data, downloads = sys.argv[1:4]
        assert main(["prepare", folder, "--data-dir", downloads, "--download-dir", downloads,
                     "-q"]) == 0  # the downloads themselves fit
        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))
        raise SystemExit(main(["prepare", folder, "--data-dir", data,
                               "--download-dir", downloads, "--json"]))
    """)
    result = subprocess.run(
        [sys.executable, "-c", script, str(folder), str(data), str(tmp_path / "dl")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    # Progress lines (the plan, units) may come first in this non-terminal --json mode.
    errors = [x for x in result.stderr.splitlines() if x.startswith("catalog: ")]
    line, summary = errors
    assert summary == "catalog: 1 of 1 failed: tiny"
    assert "cannot write" in line and "tiny-train.array_record" in line, line
    assert "File too large" in line and "is free there" in line and "needs about" in line
    first, rest = result.stdout.split("\n", 1)  # the first prepare's line, then the JSON
    assert first.startswith("tiny 1.0.0: prepared")
    document = json.loads(rest)  # --json still prints its one document
    assert document["ok"] is False and "cannot write" in document["datasets"][0]["error"]
    assert sorted(p.name for p in (data / "tiny").iterdir()) == [".1.0.0.lock"]


DNS_FAILS = textwrap.dedent("""\
    import socket, sys
    def fail(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    socket.getaddrinfo = fail
    from catalog.cli import main
    raise SystemExit(main(sys.argv[1:]))
""")


def test_without_network_prepare_says_so_briefly(tmp_path: Path) -> None:
    """No DNS (no network): each URL is tried once, not retried, and the error is one line
    (what failed, how many sources, the reason, what to do); --verbose lists each file once,
    every URL tried, with what to do said once."""
    args = [sys.executable, "-c", DNS_FAILS, "prepare", "fashion_mnist",
            "--data-dir", str(tmp_path)]  # fmt: skip
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert lines[1:] == ["catalog: 1 of 1 failed: fashion_mnist"], result.stderr
    line = lines[0]
    assert line.startswith("catalog: error: fashion_mnist: could not download 4 of 4 files (")
    assert "all 8 sources tried failed the same way" in line and "host not found (DNS" in line
    assert "--offline" in line and "--mirror" in line and "--verbose" in line

    result = subprocess.run([*args, "--verbose"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) <= 16, result.stderr
    assert "trying again" not in result.stderr
    assert lines[0].startswith("catalog: error: fashion_mnist: 4 of 4 files could not be fetched")
    assert sum("host not found (DNS" in line for line in lines) == 8  # 4 files x 2 URLs
    advice = [line for line in lines if "--offline" in line]
    assert len(advice) == 1 and "--mirror" in advice[0]


@pytest.mark.parametrize("layout", ["missing", "file", "flat"])
def test_a_mirror_that_cannot_serve_says_why(
    tmp_path: Path, server: LoopbackServer, layout: str
) -> None:
    folder = idx_builder(tmp_path, server, 5)
    mirror = tmp_path / "mirror"
    if layout == "file":
        mirror.write_text("")
    elif layout == "flat":  # the files directly in the folder, not <host>/<path>
        mirror.mkdir()
        for name in ("tiny-i.gz", "tiny-l.gz"):
            shutil.copy(tmp_path / name, mirror / "i.gz" if "-i" in name else mirror / "l.gz")
    args = ["prepare", str(folder), "--data-dir", str(tmp_path / "d"), "--offline"]
    result = catalog_cli(*args, "--mirror", str(mirror))
    assert result.returncode == 3
    expected = {
        "missing": f"the mirror dir {mirror} does not exist",
        "file": f"the mirror {mirror} is a file, not a directory",
        "flat": f"{mirror / 'i.gz'} is there, but a mirror dir holds files as",
    }[layout]
    assert expected in result.stderr, result.stderr
    assert "wget -x layout" in result.stderr or layout != "flat"


def test_prepare_shows_a_bar_per_split_on_a_terminal(
    tmp_path: Path, server: LoopbackServer
) -> None:
    from catalog.download import DownloadConfig

    folder = idx_builder(tmp_path, server, 50)
    log = tmp_path / "stderr"
    with open(log, "w") as err:
        old, sys.stderr = sys.stderr, err
        try:
            catalog.builder(folder, data_dir=tmp_path / "bars").download_and_prepare(
                download_config=DownloadConfig(progress="bars")
            )
            print("MARK", file=err, flush=True)
            catalog.builder(folder, data_dir=tmp_path / "lines").download_and_prepare(
                download_config=DownloadConfig(progress="lines")
            )
        finally:
            sys.stderr = old
    bars, lines = log.read_text().split("MARK")
    assert "tiny train: 100%" in bars and "50.0/50.0" in bars and "examples/s" in bars
    assert "%|" not in lines and "examples/s" not in lines  # no bar when not at a terminal


def test_numpy_and_range_indices_work_like_python_ones(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 10)
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "data")
    labels = pattern_labels(10)
    assert ds[np.int64(5)]["label"] == labels[5] == ds[np.array(5)]["label"]
    assert ds[np.int32(-1)]["label"] == labels[-1]
    assert [e["label"] for e in ds[range(3)]] == labels[:3].tolist()
    assert [e["label"] for e in ds[range(9, 0, -4)]] == labels[[9, 5, 1]].tolist()
    with pytest.raises(IndexError, match="out of range"):
        ds[np.int64(10)]
    with pytest.raises(TypeError):
        ds[np.float64(1.0)]


def test_show_writes_jpeg_for_jpg_and_refuses_unknown_suffixes(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 8)
    data = str(tmp_path / "data")
    assert catalog_cli("prepare", str(folder), "--data-dir", data, "-q").returncode == 0
    for name, magic in (
        ("x.jpg", b"\xff\xd8\xff"),
        ("x.JPEG", b"\xff\xd8\xff"),
        ("x.png", b"\x89PNG"),
    ):
        result = catalog_cli(
            "show", str(folder), "--data-dir", data, "-n", "4", "-o", str(tmp_path / name)
        )
        assert result.returncode == 0, result.stderr
        assert (tmp_path / name).read_bytes().startswith(magic), name
    line = one_error_line(
        catalog_cli("show", str(folder), "--data-dir", data, "-o", str(tmp_path / "x.gif2")), 2
    )
    assert "x.gif2" in line and ".png" in line and ".jpg" in line
    assert not (tmp_path / "x.gif2").exists()


def test_too_little_free_space_for_the_shards_is_refused_before_writing(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shard plan knows about how big the shards will be: a disk too small for them is one
    StorageError before any shard is written, and nothing is left behind."""
    import catalog.storage.diskspace

    folder = idx_builder(tmp_path, server, 3000)  # about 2.4 MiB of shards
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    b.download_and_prepare(download_dir=tmp_path / "dl", max_examples_per_split=5)  # cached
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        catalog.storage.diskspace.shutil, "disk_usage", lambda p: usage._replace(free=1 << 20)
    )  # 1 MiB free: the downloads are there, the shards would not fit
    with pytest.raises(catalog.StorageError) as info:
        b.download_and_prepare(download_dir=tmp_path / "dl", overwrite=True)
    message = str(info.value)
    assert "not enough free space" in message and "the shards of tiny (1 to write)" in message
    assert "1.0 MiB free" in message
    gen = b.data_path.resolve().name  # the pointer 1.0.0 and the generation it names
    assert sorted(p.name for p in (tmp_path / "data" / "tiny").iterdir()) == sorted(
        [".1.0.0.lock", "1.0.0", gen, f".{gen}.readers"]
    )  # the earlier copy stays; no work dir is left
