"""A shard is hashed once, when its unit finishes: the check before publishing trusts that
sha256 only while the file's stamp (device, inode, size, mtime, ctime) is the one it had when
hashed, and hashes it again otherwise, so a shard written in between is still refused."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import catalog
from catalog.errors import SourceFormatError
from catalog.prepare import driver
from catalog.prepare.work_unit import Outcome, Task
from catalog.storage import local_store
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder

SHARD = 60_000  # bytes: 300 28x28 examples make 5 shards


def _count_hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the local sink's check hashes from now on."""
    hashed: list[str] = []
    real = local_store.sha256_file

    def counting(path: str | os.PathLike[str]) -> str:
        hashed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(local_store, "sha256_file", counting)
    return hashed


def _after_units(monkeypatch: pytest.MonkeyPatch, fault: Callable[[Path], None]) -> None:
    """Run `fault` on the first unit's shard in the work dir once every unit is finished
    and before the driver checks them for publishing."""
    serially = driver.run_serially

    def faulty(todo: list[Task], tick: object = None) -> Iterator[Outcome]:
        yield from serially(todo, tick)  # type: ignore[arg-type]
        fault(Path(todo[0].work) / todo[0].unit.file)

    monkeypatch.setattr(driver, "run_serially", faulty)


def _flip_keeping_size_and_mtime(shard: Path) -> None:
    """One byte changed in place, its size and mtime set back (only the ctime tells)."""
    st = shard.stat()
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    with open(shard, "r+b") as f:
        f.write(data)
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_an_untouched_shard_is_not_hashed_again_before_publishing(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed = _count_hashes(monkeypatch)
    b = catalog.builder(idx_builder(tmp_path, server, 300), data_dir=tmp_path / "data")
    info = b.download_and_prepare(shard_size=SHARD)
    assert hashed == []
    shards = info.splits["train"].shards
    assert len(shards) == 5
    for shard in shards:  # the sha256 taken once is the file's
        assert hashlib.sha256((b.data_path / shard.file).read_bytes()).hexdigest() == shard.sha256
    assert sorted(p.name for p in b.data_path.iterdir()) == sorted(
        [*(s.file for s in shards), "dataset_info.json"]
    )  # nothing of the remembered stamps is published


def test_a_shard_rewritten_between_its_unit_and_the_publish_is_refused(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed = _count_hashes(monkeypatch)
    _after_units(monkeypatch, _flip_keeping_size_and_mtime)
    b = catalog.builder(idx_builder(tmp_path, server, 300), data_dir=tmp_path / "data")
    with pytest.raises(SourceFormatError, match=r"00000-of-00005 has sha256 .* its unit record"):
        b.download_and_prepare(shard_size=SHARD)
    assert len(hashed) == 1  # only the shard that was written again
    assert not b.data_path.exists()


def test_a_shard_replaced_by_another_file_is_refused(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def replace(shard: Path) -> None:  # same size and mtime, another inode
        st = shard.stat()
        data = bytearray(shard.read_bytes())
        data[-1] ^= 0x01
        other = shard.with_name("other")
        other.write_bytes(data)
        os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
        other.replace(shard)

    _after_units(monkeypatch, replace)
    b = catalog.builder(idx_builder(tmp_path, server, 300), data_dir=tmp_path / "data")
    with pytest.raises(SourceFormatError, match=r"has sha256 .* its unit record"):
        b.download_and_prepare(shard_size=SHARD)
    assert not b.data_path.exists()
