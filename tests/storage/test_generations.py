"""One publish protocol (`catalog.storage.generations`): a prepared dataset is an immutable
generation, ``<version>`` a pointer moved last; readers pin the generation they opened.

The faults between processes are tested with real processes: one prepares again
(``--overwrite``) while another reads, both against one data dir, offline after the first
download, each bounded in time and killed in a ``finally``.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import catalog
from catalog.storage.generations import collect, current, generations, pin, readers_file
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder

FULL = 300  # examples of the test dataset; prepared again alternately with 10 per split
OVERWRITES = 15

# Prepares again OVERWRITES times in a row, alternately 10 examples per split and all of them.
_PREPARER = textwrap.dedent("""\
    import sys
    import catalog
    folder, data, times = sys.argv[1], sys.argv[2], int(sys.argv[3])
    b = catalog.builder(folder, data_dir=data)
    for i in range(times):
        b.download_and_prepare(overwrite=True, max_examples_per_split=10 if i % 2 == 0 else None)
    print("done", flush=True)
""")

# Polls data_source(download=False) until `stop` exists (or 120 s): by name, and by the path of
# the pointer; reads the last example, a batch and every example of each source it opens.
_READER = textwrap.dedent("""\
    import json, os, sys, time
    import catalog
    folder, data, stop = sys.argv[1], sys.argv[2], sys.argv[3]
    reads, errors, sizes = 0, [], set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = os.path.exists(stop)
        try:
            if reads % 2:
                ds = catalog.data_source(folder, split="train", data_dir=data, download=False)
            else:
                ds = catalog.data_source(os.path.join(data, "tiny", "1.0.0"), split="train")
            n = len(ds)
            assert n in (10, FULL), n
            assert n == ds.info.splits["train"].num_examples
            last = ds[n - 1]
            assert int(last["label"]) == int(ds[[n - 1]][0]["label"])
            assert sum(1 for _ in ds) == n
            assert len(ds.__getitems__(list(range(0, n, 3)))) == len(range(0, n, 3))
            sizes.add(n)
            reads += 1
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            reads += 1
        if done:
            break
    print(json.dumps({"reads": reads, "errors": errors[:5], "failed": len(errors),
                      "sizes": sorted(sizes)}), flush=True)
""").replace("FULL", str(FULL))


def _python(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )


def _kill(*procs: subprocess.Popen[str]) -> None:
    """Kill what still runs and close its pipes."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _prepared(tmp_path: Path, server: LoopbackServer) -> tuple[Path, Path, Path]:
    folder = idx_builder(tmp_path, server, FULL)
    data = tmp_path / "data"
    catalog.builder(folder, data_dir=data).download_and_prepare()
    return folder, data, data / "tiny" / "1.0.0"


def test_a_reader_sees_one_whole_generation_while_another_process_prepares_again(
    tmp_path: Path, server: LoopbackServer
) -> None:
    # The fault campaign's case: a process polls data_source(download=False) while another
    # runs 15 successful prepares --overwrite in a row. Every open must see one whole
    # generation: never "not prepared", never a missing shard, never a mix of two.
    folder, data, _ = _prepared(tmp_path, server)
    stop = tmp_path / "stop"
    reader = _python(_READER, str(folder), str(data), str(stop))
    preparer = None
    try:
        time.sleep(0.5)  # the reader is polling before the first overwrite
        preparer = _python(_PREPARER, str(folder), str(data), str(OVERWRITES))
        out, err = preparer.communicate(timeout=240)
        assert preparer.returncode == 0 and out.strip() == "done", err
        stop.touch()
        out, err = reader.communicate(timeout=120)
        assert reader.returncode == 0, err
        result = json.loads(out)
        assert result["failed"] == 0, result["errors"]
        print(f"reader: {result['reads']} opens during {OVERWRITES} overwrites")
        assert result["reads"] >= 20 and result["sizes"] == [10, FULL], result
    finally:
        _kill(reader, *([preparer] if preparer else []))
    # A generation the reader held at the last publish is left; with no reader, it goes.
    target = data / "tiny" / "1.0.0"
    assert len(generations(target)) <= 2
    assert collect(target) == [] and generations(target) == [current(target)]


def test_an_open_source_keeps_serving_its_generation_while_another_process_prepares_again(
    tmp_path: Path, server: LoopbackServer
) -> None:
    # The campaign's second case: open a source, another process prepares again with 10
    # examples per split; the open source still serves the generation it opened, whole.
    folder, data, target = _prepared(tmp_path, server)
    ds = catalog.data_source(folder, split="train", data_dir=data, download=False)
    expected = catalog.data_source(folder, split="train", data_dir=data)[FULL - 50]
    opened = ds.path
    blob = pickle.dumps(ds)  # a worker that unpickles it later reads the same generation
    proc = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(folder), "--data-dir", str(data),
         "--overwrite", "--max-examples-per-split", "10"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert current(target) != opened and opened.is_dir()  # moved on; the pinned one stays
    assert len(ds) == FULL
    assert int(ds[FULL - 50]["label"]) == int(expected["label"])
    assert (ds[FULL - 50]["image"] == expected["image"]).all()
    assert sum(1 for _ in ds) == FULL and len(ds[FULL - 20 :]) == 20
    batch = ds.read_batch(list(range(FULL - 10, FULL)))
    assert batch is not None and len(batch["label"]) == 10
    worker = subprocess.run(
        [sys.executable, "-c", "import pickle, sys; ds = pickle.load(sys.stdin.buffer); "
         f"print(len(ds), int(ds[{FULL - 50}]['label']), sum(1 for _ in ds))"],
        input=blob, capture_output=True, timeout=120,
    )  # fmt: skip
    assert worker.returncode == 0, worker.stderr
    assert worker.stdout.decode().split() == [str(FULL), str(int(expected["label"])), str(FULL)]
    fresh = catalog.data_source(folder, split="train", data_dir=data, download=False)
    assert len(fresh) == 10 and fresh.path == current(target)
    # Held: a later prepare leaves it; once no source holds it, the next prepare removes it.
    assert len(generations(target)) == 2
    del ds, expected
    again = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(folder), "--data-dir", str(data),
         "--overwrite"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert not opened.exists() and not readers_file(opened).exists()
    assert len(fresh) == 10 and sum(1 for _ in fresh) == 10  # fresh holds its own generation
    del fresh


def test_a_source_in_another_process_keeps_its_generation_and_rm_leaves_it(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder, data, target = _prepared(tmp_path, server)
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""\
            import sys, catalog
            ds = catalog.data_source({str(folder)!r}, split="train", data_dir={str(data)!r},
                                     download=False)
            print(ds.path, flush=True)
            sys.stdin.readline()
            print(len(ds), sum(1 for _ in ds), flush=True)
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdin is not None and holder.stdout is not None
        opened = Path(holder.stdout.readline().strip())
        assert opened == current(target)
        b = catalog.builder(folder, data_dir=data)
        b.download_and_prepare(overwrite=True, max_examples_per_split=10)
        assert opened.is_dir() and current(target) != opened  # held by the other process
        rm = subprocess.run(
            [sys.executable, "-m", "catalog", "rm", str(folder), "--data-dir", str(data)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert rm.returncode == 0, rm.stderr
        assert "1 generation still read by a running process" in rm.stdout, rm.stdout
        assert not os.path.lexists(target) and generations(target) == [opened]
        assert not b.is_prepared
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().split() == [str(FULL), str(FULL)]
        assert holder.wait(timeout=60) == 0
    finally:
        _kill(holder)
    rm = subprocess.run(
        [sys.executable, "-m", "catalog", "rm", str(folder), "--data-dir", str(data)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert rm.returncode == 0 and "removed" in rm.stdout, rm.stdout
    assert sorted(p.name for p in (data / "tiny").iterdir()) == [".1.0.0.lock"]


def test_a_plain_directory_of_an_older_catalog_is_read_and_replaced(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder, data, target = _prepared(tmp_path, server)
    generation = current(target)
    assert generation is not None
    target.unlink()  # the layout an older catalog left: <version> is the dataset's folder
    readers_file(generation).unlink()
    os.rename(generation, target)
    ds = catalog.data_source(folder, split="train", data_dir=data, download=False)
    assert len(ds) == FULL and ds.path == target and ds[0] is not None  # reader opened
    assert catalog.builder(folder, data_dir=data).is_prepared
    proc = subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(folder), "--data-dir", str(data),
         "--overwrite", "--max-examples-per-split", "10"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert target.is_symlink() and len(generations(target)) == 1  # the plain folder is gone
    assert int(ds[FULL - 1]["label"]) == int(ds[[FULL - 1]][0]["label"])  # its open reader
    ds.close()  # a reader opened now would find the new generation's files: refused
    with pytest.raises(catalog.NotPreparedError, match="was prepared again"):
        ds[FULL - 1]  # never the new generation's records under the old description
    fresh = catalog.data_source(folder, split="train", data_dir=data, download=False)
    assert len(fresh) == 10 and fresh.path == current(target)


def test_a_reader_racing_a_collection_resolves_the_pointer_again(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder, data, target = _prepared(tmp_path, server)
    old = current(target)
    assert old is not None
    catalog.builder(folder, data_dir=data).download_and_prepare(
        overwrite=True, max_examples_per_split=10
    )
    new = current(target)
    assert new != old and not old.exists() and generations(target) == [new]
    # A pin of a generation that is gone (collected after the pointer was read) is not held.
    assert not pin(old).held
    held = pin(target)
    assert held.held and held.path == new
    assert collect(target) == [] and new.is_dir()  # the current one is never collected
    # Leftovers of a killed publish go with the next collection: a new pointer not renamed
    # yet, a readers file without its generation.
    (data / "tiny" / ".1.0.0.link-dead").symlink_to(new.name)
    (data / "tiny" / ".1.0.0.gen-dead.readers").touch()
    collect(target)
    assert not os.path.lexists(data / "tiny" / ".1.0.0.link-dead")
    assert not (data / "tiny" / ".1.0.0.gen-dead.readers").exists()
    # The prepared bytes are those of a fresh prepare elsewhere: only the layout changed.
    elsewhere = catalog.builder(folder, data_dir=tmp_path / "elsewhere")
    elsewhere.download_and_prepare(max_examples_per_split=10)
    here = {p.name: p.read_bytes() for p in new.iterdir()}
    there = {p.name: p.read_bytes() for p in elsewhere.data_path.iterdir()}
    assert (
        here.keys()
        == there.keys()
        == {
            "dataset_info.json",
            "tiny-train.array_record-00000-of-00001",
        }
    )
    assert (
        here["tiny-train.array_record-00000-of-00001"]
        == (there["tiny-train.array_record-00000-of-00001"])
    )
