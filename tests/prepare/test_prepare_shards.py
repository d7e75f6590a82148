"""The shard plan: shards cut by size, the same bytes serially, in processes and on Beam,
resuming a killed prepare, failing whole, and the hardening around it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.download import resolve_config
from catalog.errors import FeatureError
from catalog.prepare.driver import prepare_dataset, work_dir
from catalog.prepare.options import PrepareOptions
from catalog.prepare.progress import PrepareProgress
from catalog.prepare.work_unit import BOOKKEEPING
from catalog.storage.locking import dataset_lock
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from conftest import catalog_cli, idx_builder, kill_prepare_after, write_builder
from remote_fixtures import verify_at

SHARD = 60_000  # bytes: 300 28x28 examples (about 1000 bytes each, framed) make 5 shards


def shards(data_path: Path) -> dict[str, str]:
    """File name -> sha256 of every shard of a prepared dataset."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(data_path.glob("*.array_record-*"))
    }


def test_shards_are_cut_by_size_and_read_as_one_split(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    info = b.download_and_prepare(shard_size=SHARD)
    names = [s.file for s in info.splits["train"].shards]
    assert names == [f"tiny-train.array_record-{i:05d}-of-00005" for i in range(5)]
    assert [s.num_examples for s in info.splits["train"].shards] == [60] * 5
    assert sorted(shards(b.data_path)) == names
    twice = catalog.builder(folder, data_dir=tmp_path / "twice")
    assert len(twice.download_and_prepare(shard_size=2 * SHARD).splits["train"].shards) == 3
    ds = b.as_data_source("train")
    images = pattern_images(300)
    for i in (0, 59, 60, 151, 299):
        np.testing.assert_array_equal(ds[i]["image"][..., 0], images[i])
    # Nothing of the work (plan, unit records, staged files) is left in the dataset.
    assert sorted(p.name for p in b.data_path.iterdir()) == sorted([*names, "dataset_info.json"])
    assert verify_at(b.data_path) == []


def test_num_proc_writes_the_same_bytes_as_serial(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 300)
    serial = catalog.builder(folder, data_dir=tmp_path / "serial")
    serial.download_and_prepare(shard_size=SHARD)
    parallel = catalog.builder(folder, data_dir=tmp_path / "parallel")
    parallel.download_and_prepare(shard_size=SHARD, num_proc=2)
    assert len(shards(serial.data_path)) == 5
    assert shards(parallel.data_path) == shards(serial.data_path)
    # data_source prepares with num_proc= too (default shard size: one shard here).
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "ds", num_proc=2)
    assert len(ds) == 300
    with pytest.raises(ValueError, match="num_proc must be >= 1, got 0"):
        catalog.builder(folder, data_dir=tmp_path / "zero").download_and_prepare(num_proc=0)


@pytest.mark.parametrize("mode", ["in_memory", "multi_processing"])
def test_beam_writes_the_same_bytes_as_serial(
    tmp_path: Path, server: LoopbackServer, mode: str
) -> None:
    pytest.importorskip("apache_beam")
    folder = idx_builder(tmp_path, server, 300)
    serial = catalog.builder(folder, data_dir=tmp_path / "serial")
    serial.download_and_prepare(shard_size=SHARD)
    options = f"runner=DirectRunner,direct_num_workers=2,direct_running_mode={mode}"
    result = catalog_cli(
        "prepare", str(folder), "--data-dir", str(tmp_path / "beam"), "--shard-size",
        str(SHARD), "--beam-pipeline-options", options, "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)["datasets"][0]
    assert entry["status"] == "prepared" and entry["units_written"] == 5
    beam = catalog.builder(folder, data_dir=tmp_path / "beam")
    assert shards(beam.data_path) == shards(serial.data_path)
    # The DirectRunner is pinned to Beam's FnApiRunner: Prism (which downloads) never runs.
    assert "prism" not in result.stderr.lower()


def test_a_malformed_beam_option_is_a_usage_error(tmp_path: Path) -> None:
    pytest.importorskip("apache_beam")
    result = catalog_cli(
        "prepare", "mnist", "--data-dir", str(tmp_path), "--beam-pipeline-options", "x"
    )
    assert result.returncode == 2
    assert "expected key=value pairs separated by commas, got 'x'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_killed_prepare_resumes_and_redoes_only_the_rest(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    data = tmp_path / "data"
    kill_prepare_after(folder, data, 2, SHARD)
    b = catalog.builder(folder, data_dir=data)
    assert not b.is_prepared
    (work,) = data.glob("tiny/1.0.0.incomplete-*")
    assert len(list(work.glob("*.array_record-*"))) == 2
    # A third unit half-written when the kill came: a shard file without its record.
    third = "tiny-train.array_record-00002-of-00005"
    (work / third).write_bytes(b"half a shard")
    (work / BOOKKEEPING / "partial").mkdir(exist_ok=True)
    (work / BOOKKEEPING / "partial" / f"{third}.1234abcd").write_bytes(b"half")
    progress = PrepareProgress(b.full_name, "lines")
    config = resolve_config(None, data_dir=data)
    done = prepare_dataset(
        b.spec, b.store, b.data_path, config, PrepareOptions(shard_bytes=SHARD), progress
    )
    assert (done.status, done.units_kept, done.units_written) == ("prepared", 2, 3)
    assert not work.exists()
    fresh = catalog.builder(folder, data_dir=tmp_path / "fresh")
    fresh.download_and_prepare(shard_size=SHARD)
    assert shards(b.data_path) == shards(fresh.data_path)
    assert verify_at(b.data_path) == []


def test_overwrite_does_not_resume(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 300)
    data = tmp_path / "data"
    kill_prepare_after(folder, data, 3, SHARD)
    b = catalog.builder(folder, data_dir=data)
    config = resolve_config(None, data_dir=data)
    done = prepare_dataset(
        b.spec, b.store, b.data_path, config, PrepareOptions(shard_bytes=SHARD, overwrite=True)
    )
    assert (done.units_kept, done.units_written) == (0, 5)


def test_a_different_plan_never_resumes_and_stale_work_dirs_go(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    data = tmp_path / "data"
    kill_prepare_after(folder, data, 2, SHARD)
    (stale,) = data.glob("tiny/1.0.0.incomplete-*")
    b = catalog.builder(folder, data_dir=data)
    config = resolve_config(None, data_dir=data)
    # Another shard size is another plan: nothing of the killed run is taken, and it goes.
    done = prepare_dataset(
        b.spec, b.store, b.data_path, config, PrepareOptions(shard_bytes=SHARD * 2)
    )
    assert (done.units_kept, done.units_written) == (0, 3)
    assert not stale.exists()
    gen = b.data_path.resolve().name  # the pointer 1.0.0 names one generation, held by none
    assert sorted(p.name for p in (data / "tiny").iterdir()) == sorted(
        [".1.0.0.lock", "1.0.0", gen, f".{gen}.readers"]
    )


def test_a_bad_record_fails_the_whole_prepare_naming_unit_and_example(
    tmp_path: Path, server: LoopbackServer
) -> None:
    labels = pattern_labels(300)
    labels[200] = 12  # out of range for 10 classes; in the 4th unit, past the sizing sample
    files = {
        "i.gz": write_idx(tmp_path / "i.gz", pattern_images(300)).read_bytes(),
        "l.gz": write_idx(tmp_path / "l.gz", labels).read_bytes(),
    }
    folder = write_builder(
        tmp_path / "tiny", server, files, splits={"train": ("i.gz", "l.gz", 300)}
    )
    for num_proc in (1, 2):
        b = catalog.builder(folder, data_dir=tmp_path / f"data{num_proc}")
        with pytest.raises(FeatureError) as info:
            b.download_and_prepare(shard_size=SHARD, num_proc=num_proc)
        assert str(info.value).startswith(
            "split 'train', example 200 (key '200') in unit 4 of 5 of split 'train' (examples "
            "180..239, shard tiny-train.array_record-00003-of-00005): feature 'label': "
        ), str(info.value)
        assert not b.is_prepared
        assert sorted(p.name for p in b.data_path.parent.iterdir()) == [".1.0.0.lock"]


def test_two_prepares_at_once_write_each_unit_once(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 300)
    args = ["prepare", str(folder), "--data-dir", str(tmp_path / "data"), "--json"]
    args += ["--shard-size", str(SHARD)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "catalog", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    entries = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        entries.append(json.loads(out)["datasets"][0])
    assert sorted(e["status"] for e in entries) == ["prepared", "reused"]
    assert sum(e["units_written"] for e in entries) == 5
    assert sum(e["units_kept"] for e in entries) == 0


def test_a_process_that_waited_reports_reused(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 30)
    elsewhere = catalog.builder(folder, data_dir=tmp_path / "elsewhere")
    elsewhere.download_and_prepare()
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    with dataset_lock(b.data_path):
        waiting = subprocess.Popen(
            [sys.executable, "-m", "catalog", "prepare", str(folder), "--data-dir",
             str(tmp_path / "data")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert waiting.stderr is not None
        line = waiting.stderr.readline()  # blocks until the other process waits for the lock
        assert line.startswith("waiting for another process preparing"), line
        # "Another process" prepares it meanwhile (a copy of a prepared one, under the lock).
        os.rename(elsewhere.data_path.resolve(), b.data_path)  # its generation
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    assert "reused (prepared by another process)" in out, out
    assert "prepared in" not in out


_FSIZE = """\
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
from catalog.cli import main
raise SystemExit(main(sys.argv[2:]))
"""


def test_a_full_disk_fails_one_dataset_naming_file_and_space(
    tmp_path: Path, server: LoopbackServer
) -> None:
    big = idx_builder(tmp_path, server, 300, name="big")  # a 240 KB shard
    small = idx_builder(tmp_path, server, 5, name="small")  # a 128 KiB shard (the minimum)
    data = tmp_path / "data"
    result = subprocess.run(
        [sys.executable, "-c", _FSIZE, str(150_000), "prepare", str(big), str(small),
         "--data-dir", str(data), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    failed, prepared = document["datasets"]
    assert (failed["status"], prepared["status"]) == ("failed", "prepared"), (failed, prepared)
    assert failed["error"].startswith("cannot write "), failed["error"]
    assert "big-train.array_record-00000-of-00001" in failed["error"]
    assert "this shard needs about 2" in failed["error"] and "KiB" in failed["error"]
    # Nothing half-written is left of the dataset that failed.
    assert sorted(p.name for p in (data / "big").iterdir()) == [".1.0.0.lock"]
    assert catalog.builder(small, data_dir=data).is_prepared


def test_units_are_reported_one_line_each_in_json_mode(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    result = catalog_cli(
        "prepare", str(folder), "--data-dir", str(tmp_path / "data"), "--json", "--num-proc",
        "2", "--shard-size", str(SHARD),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if ": unit " in line]
    assert len(lines) == 5, result.stderr
    assert "tiny train: unit 1 of 5 written: 60 examples, " in result.stderr
    assert json.loads(result.stdout)["datasets"][0]["units_written"] == 5


def test_verify_reports_work_dirs_of_killed_prepares(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 30)
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    b.download_and_prepare()
    stale = work_dir(b.data_path, "0123456789abcdef")
    stale.mkdir()
    (stale / "tiny-train.array_record-00000-of-00002").write_bytes(b"x" * 1000)
    result = catalog_cli("verify", str(folder), "--data-dir", str(tmp_path / "data"), "--json")
    entry: dict[str, Any] = json.loads(result.stdout)["datasets"][0]
    assert entry["ok"] and result.returncode == 0
    assert entry["stale_work_dirs"] == [{"path": str(stale), "num_bytes": 1000}]
    text = catalog_cli("verify", str(folder), "--data-dir", str(tmp_path / "data")).stdout
    assert f"work dir of a killed prepare: {stale} (1000 B)" in text
    # The next prepare (taking the lock) removes it, even when it has nothing to prepare.
    b.download_and_prepare()
    assert not stale.exists()


def amat_builder(
    tmp_path: Path, server: LoopbackServer, count: int
) -> tuple[Path, list[str], bytes, str]:
    """A one-split builder reading `count` AMAT lines served at /x.amat: (its folder, the
    lines, the file's bytes, its URL)."""
    lines = [" ".join("1" if (i + j) % 3 == 0 else "0" for j in range(784)) for i in range(count)]
    data = ("\n".join(lines) + "\n").encode()
    url = server.add("/x.amat", data)
    folder = tmp_path / "amat"
    folder.mkdir()
    (folder / "builder.yaml").write_text(
        textwrap.dedent(f"""\
        name: amat
        version: 1.0.0
        features:
          image: {{type: Image, shape: [28, 28, 1]}}
        downloads:
          lines: {{url: {url}}}
        splits:
          train: {{format: amat, files: {{lines: lines}}, num_examples: {count}}}
        """)
    )
    digest = hashlib.sha256(data).hexdigest()
    (folder / "checksums.tsv").write_text(f"{url}\t{len(data)}\t{digest}\tx.amat\n")
    return folder, lines, data, url


def test_a_sequential_format_is_planned_by_ranges(tmp_path: Path, server: LoopbackServer) -> None:
    folder, lines, data, url = amat_builder(tmp_path, server, 120)
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    info = b.download_and_prepare(shard_size=20_000, num_proc=2)
    assert [s.num_examples for s in info.splits["train"].shards] == [20] * 6
    ds = b.as_data_source("train")
    assert int(ds[119]["image"].sum()) == sum(c == "1" for c in lines[119].split())
    # A bad line in the fourth unit fails the prepare naming the unit and the line.
    bad_lines = [*lines[:70], lines[70].replace("1", "2", 1), *lines[71:]]
    bad = ("\n".join(bad_lines) + "\n").encode()
    url = server.add("/x.amat", bad)
    digest = hashlib.sha256(bad).hexdigest()
    (folder / "checksums.tsv").write_text(f"{url}\t{len(bad)}\t{digest}\tx.amat\n")
    with pytest.raises(catalog.SourceFormatError) as info:
        catalog.builder(folder, data_dir=tmp_path / "bad").download_and_prepare(
            shard_size=20_000, num_proc=2
        )
    assert str(info.value).startswith(
        "unit 4 of 6 of split 'train' (examples 60..79, shard amat-train.array_record-00003-of-"
        "00006): "
    ), str(info.value)
    assert "x.amat:71: value '2' is not 0 or 1" in str(info.value)
    assert not list((tmp_path / "bad").glob("amat/1.0.0*"))
    (folder / "checksums.tsv").write_text(
        f"{url}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}\tx.amat\n"
    )
    server.add("/x.amat", data)
    # One line more than the spec says is found by the last unit.
    (folder / "builder.yaml").write_text(
        (folder / "builder.yaml").read_text().replace("num_examples: 120", "num_examples: 119")
    )
    with pytest.raises(catalog.SourceFormatError, match="hold more than 119 examples"):
        catalog.builder(folder, data_dir=tmp_path / "d2").download_and_prepare()


def test_a_sequential_source_is_read_once_per_unit(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last unit's check for examples past the spec's count continues the pass that wrote
    the shard: a source readable only from its start is not read a second time."""
    import dataclasses

    from catalog.prepare import shard_plan as plan

    folder = amat_builder(tmp_path, server, 100)[0]
    fmt = plan.FORMATS["amat"]
    passes: list[int] = []

    def counted(source: Any) -> Any:
        passes.append(0)
        for item in fmt.examples(source):
            passes[-1] += 1
            yield item

    monkeypatch.setitem(plan.FORMATS, "amat", dataclasses.replace(fmt, examples=counted))
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    b.download_and_prepare()
    # the plan's size sample (64 examples), then one pass writing all 100 and finding no 101st
    assert passes == [64, 100], passes
    assert len(b.as_data_source("train")) == 100


def test_shard_size_and_workers_are_checked_before_any_work(tmp_path: Path) -> None:
    bad_size = catalog_cli("prepare", "mnist", "--data-dir", str(tmp_path), "--shard-size", "big")
    assert bad_size.returncode == 2
    assert "expected a size such as 1000, 32KiB or 2GiB, got 'big'" in bad_size.stderr
    both = catalog_cli(
        "prepare", "mnist", "--data-dir", str(tmp_path), "--num-proc", "2",
        "--beam-pipeline-options", "runner=DirectRunner",
    )  # fmt: skip
    assert both.returncode == 2 and "exclude each other" in both.stderr
    assert not list(tmp_path.iterdir())  # nothing was downloaded or written
