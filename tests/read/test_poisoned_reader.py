"""One corrupt record costs that record only: the error names the shard and the record, and
every other record stays readable in the same process (`ds[i]`, `__getitems__`, iteration, the
pipeline, DataLoader workers), the first record of a shard included.

array_record's reader fails for good after one failed read (riegeli's failure is sticky), and a
reader opening checks the size of a record: a corrupt first record used to make every later
open, and so every read of the shard, fail too; a failed range read named the chunk's first
record instead of the corrupt one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels

from conftest import idx_builder

COUNT = 200


def corrupt(tmp_path: Path, server: LoopbackServer, bad: int) -> catalog.DataSource:
    """A data source of COUNT records whose record `bad` has one bit flipped, in place."""
    folder = idx_builder(tmp_path, server, COUNT)
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "data")
    ds.close()
    shard = Path(ds._records.paths[0])
    with shard.open("r+b") as f:
        at = f.read().find(pattern_images(COUNT)[bad].tobytes())
        assert at > 0
        f.seek(at + 5)
        byte = f.read(1)[0]
        f.seek(at + 5)
        f.write(bytes([byte ^ 0x01]))
    return catalog.data_source(folder, split="train", data_dir=tmp_path / "data")


def names(error: BaseException, ds: catalog.DataSource, bad: int) -> bool:
    text = str(error)
    return ds._records.paths[0] in text and f"record {bad} cannot be read" in text


@pytest.mark.parametrize("bad", [0, 150])
def test_a_corrupt_record_costs_that_record_only(
    tmp_path: Path, server: LoopbackServer, bad: int
) -> None:
    ds = corrupt(tmp_path, server, bad)
    labels = pattern_labels(COUNT)
    healthy = [i for i in range(COUNT) if i != bad]
    # ds[i], every record in order: only the corrupt one fails, then the others read again.
    failed = []
    for i in range(COUNT):
        try:
            assert ds[i]["label"] == labels[i]
        except catalog.ShardError as error:
            failed.append((i, names(error, ds, bad)))
    assert failed == [(bad, True)]
    assert ds[healthy[0]]["label"] == labels[healthy[0]]
    # __getitems__: a batch holding it fails naming it; the next batch reads.
    with pytest.raises(catalog.ShardError) as info:
        ds[list(range(COUNT))]
    assert names(info.value, ds, bad)
    assert [e["label"] for e in ds[healthy]] == [labels[i] for i in healthy]
    # Iteration: every record before it, then the error naming it; again the same way.
    for _ in range(2):
        seen: list[int] = []
        with pytest.raises(catalog.ShardError) as info:
            seen.extend(int(example["label"]) for example in ds)
        assert names(info.value, ds, bad)
        assert seen == labels[:bad].tolist()
    # The pipeline: the batch holding it fails naming it; a healthy batch still reads.
    with pytest.raises(catalog.ShardError) as info:
        list(catalog.pipeline(ds).batch(8))
    assert names(info.value, ds, bad)
    batch = ds.read_batch(healthy[:8])
    assert batch is not None and batch["label"].tolist() == [labels[i] for i in healthy[:8]]
    assert ds[healthy[-1]]["label"] == labels[healthy[-1]]


@pytest.mark.parametrize("bad", [0, 150])
def test_dataloader_workers_lose_only_the_batch_of_a_corrupt_record(
    tmp_path: Path, server: LoopbackServer, bad: int
) -> None:
    torch_data = pytest.importorskip("torch.utils.data")
    ds = corrupt(tmp_path, server, bad)
    loader = torch_data.DataLoader(ds, batch_size=10, num_workers=2, timeout=60)
    batches = iter(loader)
    labels, errors = [], []
    try:
        for _ in range(len(loader)):
            try:
                labels.append(np.asarray(next(batches)["label"]))
            except catalog.ShardError as error:
                errors.append(error)
    finally:
        batches._shutdown_workers()  # type: ignore[attr-defined]
    assert len(errors) == 1 and names(errors[0], ds, bad), errors
    expected = np.delete(pattern_labels(COUNT), np.s_[bad // 10 * 10 : bad // 10 * 10 + 10])
    assert np.concatenate(labels).tolist() == expected.tolist()
