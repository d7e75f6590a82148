"""PyTorch's DataLoader with forked workers (Linux's default) over catalog data sources.

The README's pattern, for real: datasets prepared by another process (`catalog prepare`),
records read in the parent, then `DataLoader(num_workers=2, shuffle=True)` with fork, full
epochs of a split of several thousand examples, repeated in fresh processes. Before shards
were written uncompressed this crashed the workers (SIGSEGV) in 19 of 20 runs; see
`catalog.storage.shards` for the root cause. Every run is its own process with a time limit, so a
crash or a hang fails the test instead of taking pytest down.

CATALOG_FORK_RUNS=20 runs it 20 times (as for the issue's acceptance); CI runs 3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from catalog.info.dataset_info import DatasetInfo
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_labels

from conftest import idx_builder

pytest.importorskip("torch")

COUNT = 4000
RUNS = int(os.environ.get("CATALOG_FORK_RUNS", "3"))

#: The user's script: another dataset read first, one record read in the parent, then forked
#: workers over two full epochs. Prints the labels' sum per epoch and the start method.
USER_SCRIPT = textwrap.dedent("""\
    import sys
    import catalog, torch
    from torch.utils.data import DataLoader
    data_dir, main, other = sys.argv[1:4]
    catalog.data_source(other, split="train", data_dir=data_dir, download=False)[0]
    ds = catalog.data_source(main, split="train", data_dir=data_dir, download=False)
    ds[0]
    loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=2)
    print(torch.multiprocessing.get_start_method())
    for epoch in range(2):
        total = count = 0
        for batch in loader:
            total += int(batch["label"].sum())
            count += len(batch["label"])
        print(count, total)
""")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two datasets prepared by a separate `catalog prepare` process: (data dir, main, other)."""
    root = tmp_path_factory.mktemp("fork")
    with LoopbackServer() as server:
        main = idx_builder(root, server, COUNT, name="big")
        other = idx_builder(root, server, 300, name="other")
        result = subprocess.run(
            [sys.executable, "-m", "catalog", "prepare", str(main), str(other),
             "--data-dir", str(root / "data"), "-q"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return root / "data", main, other


def run_user_script(data_dir: Path, main: Path, other: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", USER_SCRIPT, str(data_dir), str(main), str(other)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize("run", range(RUNS))
def test_forked_dataloader_workers_read_full_epochs(
    prepared: tuple[Path, Path, Path], run: int
) -> None:
    result = run_user_script(*prepared)
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-2000:]}"
    lines = result.stdout.split("\n")
    assert lines[0] == "fork"  # the default start method on Linux: the case that crashed
    expected = f"{COUNT} {int(pattern_labels(COUNT).sum())}"
    assert lines[1:3] == [expected, expected]


def test_shards_are_written_uncompressed(prepared: tuple[Path, Path, Path]) -> None:
    from catalog.read.array_record import open_reader
    from catalog.storage.shards import WRITER_OPTIONS

    data_dir = prepared[0]
    info = DatasetInfo.read(data_dir / "big" / "1.0.0")
    assert info.shard_options == WRITER_OPTIONS == "group_size:1,uncompressed"
    shard = data_dir / "big" / "1.0.0" / info.splits["train"].shards[0].file
    reader = open_reader(str(shard), compressed=False)
    assert "uncompressed" in reader.writer_options_string().split(",")
    reader.close()


def compress_like_older_catalog(folder: Path) -> None:
    """Rewrite a prepared dataset's shards with array_record's default (zstd), and its
    dataset_info.json without shard_options, as catalog wrote them before."""
    import hashlib

    from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

    data = json.loads((folder / "dataset_info.json").read_text())
    for split in data["splits"].values():
        for shard in split["shards"]:
            path = folder / shard["file"]
            reader = ArrayRecordReader(str(path))
            records = reader.read_all()
            reader.close()
            writer = ArrayRecordWriter(str(path), "group_size:1")
            for record in records:
                writer.write(record)
            writer.close()
            shard["num_bytes"] = path.stat().st_size
            shard["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    del data["shard_options"]
    (folder / "dataset_info.json").write_text(json.dumps(data))


OLD_COPY_SCRIPT = textwrap.dedent("""\
    import sys
    import catalog, torch
    from torch.utils.data import DataLoader
    ds = catalog.data_source(sys.argv[2], split="train", data_dir=sys.argv[1], download=False)
    ds[0]
    try:
        for batch in DataLoader(ds, batch_size=32, num_workers=2):
            pass
    except catalog.CatalogError as exc:
        print("CatalogError:", exc)
    else:
        print("no error")
""")


def test_older_compressed_copies_fail_clearly_in_forked_workers(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """Shards an older catalog compressed cannot be read safely after fork: the worker
    refuses with one clear error (which the DataLoader raises in the parent), never a
    segfault or a hang; preparing again (data_source with download=True) makes them safe."""
    import catalog

    folder = idx_builder(tmp_path, server, 2000)
    data_dir = tmp_path / "data"
    catalog.data_source(folder, data_dir=data_dir)
    compress_like_older_catalog(data_dir / "tiny" / "1.0.0")
    result = subprocess.run(
        [sys.executable, "-c", OLD_COPY_SCRIPT, str(data_dir), str(folder)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("CatalogError: "), result.stdout
    assert "zstd-compressed" in result.stdout and "--overwrite" in result.stdout
    assert "multiprocessing_context='spawn'" in result.stdout
    # data_source() prepares an older copy again, in today's fork-safe format.
    ds = catalog.data_source(folder, split="train", data_dir=data_dir)
    assert ds.info.shard_options == "group_size:1,uncompressed"
    assert len(ds) == 2000
