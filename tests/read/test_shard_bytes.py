"""`catalog.read.shard_bytes.ShardBytes` gives a shard's bytes by ``pread`` until a 64 KiB
window has been read `MAPPED_AFTER` times, through the memory map after that (a fresh
process's first batches pay no page fault a record), the same bytes either way; a file
truncated under it is NotLaidOut (read through array_record, which reports it), never a
crash."""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from catalog.read import shard_bytes
from catalog.read.shard_bytes import MAPPED_AFTER, ShardBytes
from catalog.read.shard_layout import NotLaidOut, join_pieces


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[tuple[ShardBytes, bytes, Path]]:
    content = np.random.default_rng(0).integers(0, 256, 300_000, dtype=np.uint8).tobytes()
    path = tmp_path / "shard"
    path.write_bytes(content)
    fd = os.open(path, os.O_RDONLY)
    mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    yield ShardBytes(fd, mapping), content, path
    mapping.close()
    os.close(fd)


def test_reads_by_pread_then_through_the_map_give_the_files_bytes(
    opened: tuple[ShardBytes, bytes, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, content, _ = opened
    preads: list[int] = []
    real = os.pread

    def counting(fd: int, length: int, offset: int) -> bytes:
        preads.append(offset)
        return real(fd, length, offset)

    monkeypatch.setattr(shard_bytes.os, "pread", counting)
    assert len(source) == len(content)
    for _ in range(MAPPED_AFTER + 2):  # one window: pread, then its map
        assert source[70_000:70_100] == content[70_000:70_100]
    assert len(preads) == MAPPED_AFTER
    assert source[140_000:149_000] == content[140_000:149_000]  # another window: pread
    assert len(preads) == MAPPED_AFTER + 1
    assert source[5:5] == b""
    # across a block boundary, as a chunk's records are read (block headers skipped)
    assert join_pieces(source, 65_000, 2_000) == join_pieces(content, 65_000, 2_000)
    with pytest.raises(NotLaidOut, match="past the end"):
        source[299_990:300_010]


def test_a_file_truncated_under_it_is_not_laid_out(opened: tuple[ShardBytes, bytes, Path]) -> None:
    source, _, path = opened
    with path.open("r+b") as file:
        file.truncate(100_000)
    assert source[10:20] == path.read_bytes()[10:20]
    with pytest.raises(NotLaidOut, match="truncated"):
        source[200_000:200_010]
