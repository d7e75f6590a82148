"""Preparing into a bucket (moto's S3 server on 127.0.0.1): one generation behind a pointer
written last, the same bytes as a local prepare, --overwrite and the grace rule, a prepare
killed mid-upload resumed without uploading again, --num-proc workers uploading, a failed
prepare leaving nothing, and readers never seeing half a dataset."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import catalog
from catalog.cli import main
from catalog.info.dataset_info import INFO_FILE
from catalog.prepare import driver
from catalog.prepare.work_unit import Outcome, Task, run_unit
from catalog.storage import bucket_publish
from catalog.storage.bucket_lock import bucket_lock
from catalog.storage.bucket_store import BucketSink
from catalog.storage.remote import RemoteDir
from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli, idx_builder, kill_prepare_after
from remote_fixtures import local_shards
from s3server import S3Server

SHARD = 60_000  # bytes: 300 28x28 examples make 5 shards
URL = "s3://data/team"
DATASET = RemoteDir(f"{URL}/tiny")


def bucket_shards(s3: S3Server, generation: str) -> dict[str, str]:
    client, prefix = s3.client(), f"team/tiny/{generation}/"
    return {
        key[len(prefix) :]: hashlib.sha256(
            client.get_object(Bucket="data", Key=key)["Body"].read()
        ).hexdigest()
        for key in sorted(s3.keys("data", prefix))
        if ".array_record-" in key
    }


def pointer(s3: S3Server) -> str | None:
    try:
        body = s3.client().get_object(Bucket="data", Key="team/tiny/1.0.0.pointer")["Body"]
    except Exception:
        return None
    return str(json.loads(body.read())["generation"])


def test_prepare_publishes_one_generation_behind_a_pointer_written_last(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    result = catalog_cli(
        "prepare", str(folder), "--data-dir", URL, "--shard-size", str(SHARD), "--json"
    )
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)["datasets"][0]
    assert (entry["status"], entry["path"]) == ("prepared", f"{URL}/tiny/1.0.0")
    generation = pointer(s3)
    assert generation is not None and generation.startswith("1.0.0.gen-")
    keys = s3.keys("data", "team/")
    # the generation, its dataset_info.json and the pointer; no marker, no lock left behind
    assert set(keys) == {f"team/tiny/{generation}/{INFO_FILE}", "team/tiny/1.0.0.pointer"} | {
        f"team/tiny/{generation}/tiny-train.array_record-{i:05d}-of-00005" for i in range(5)
    }
    # the same bytes as preparing into a local dir, and dataset_info.json says so
    local = catalog.builder(folder, data_dir=tmp_path / "local")
    local.download_and_prepare(shard_size=SHARD)
    assert bucket_shards(s3, generation) == local_shards(Path(local.data_path))
    info = json.loads(
        s3.client()
        .get_object(Bucket="data", Key=f"team/tiny/{generation}/{INFO_FILE}")["Body"]
        .read()
    )
    recorded = {s["file"]: s["sha256"] for s in info["splits"]["train"]["shards"]}
    assert recorded == local_shards(Path(local.data_path))
    # the shard files went through bounded scratch space, which is empty again
    scratch = tmp_path / "downloads" / "scratch"
    assert scratch.is_dir() and not [p for p in scratch.rglob("*") if p.is_file()]
    # prepared already: reused, and nothing is written to the bucket
    s3.requests.clear()
    again = catalog_cli("prepare", str(folder), "--data-dir", URL, "--shard-size", str(SHARD))
    assert again.returncode == 0, again.stderr
    assert "reused" in again.stdout
    assert s3.puts() == []


def test_the_environment_variable_and_the_api_take_a_bucket(
    tmp_path: Path, server: LoopbackServer, s3: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = idx_builder(tmp_path, server, 120)
    monkeypatch.setenv("CATALOG_DATA_DIR", URL)
    b = catalog.builder(folder)
    assert str(b.data_path) == f"{URL}/tiny/1.0.0"
    info = b.download_and_prepare(shard_size=SHARD)
    assert info.splits["train"].num_examples == 120
    assert pointer(s3) is not None
    done = b.prepare()
    assert done.status == "reused"


def test_overwrite_moves_the_pointer_and_keeps_the_previous_generation(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    folder = idx_builder(tmp_path, server, 120)
    b = catalog.builder(folder, data_dir=URL)
    published = []
    for _ in range(3):
        b.download_and_prepare(shard_size=SHARD, overwrite=True)
        published.append(pointer(s3))
    assert len(set(published)) == 3  # a new generation every time, never rewritten
    left = {k.split("/")[2] for k in s3.keys("data", "team/tiny/1.0.0.gen-")}
    # the grace rule: the current generation and the one before it; the oldest is gone. The
    # pointer names the one before (object timestamps have a second's resolution: three
    # prepares of a tiny dataset may fall in the same second)
    body = s3.client().get_object(Bucket="data", Key="team/tiny/1.0.0.pointer")["Body"]
    record = json.loads(body.read())
    assert record == {"generation": published[2], "previous": published[1]}
    assert left == {published[2], published[1]}


def test_a_prepare_killed_mid_upload_resumes_without_uploading_again(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    seen: list[str] = []
    stop = threading.Event()

    def reader() -> None:  # a reader polling throughout: a pointer always means a whole set
        while not stop.is_set():
            found = bucket_publish.published(DATASET, "1.0.0")
            if found is not None:
                generation, info = found
                sizes = {n: e.size for n, e in bucket_publish.listing(generation).items()}
                for split in info["splits"].values():
                    for shard in split["shards"]:
                        assert sizes.get(shard["file"]) == shard["num_bytes"]
                seen.append(generation.name)
            stop.wait(0.05)

    watcher = threading.Thread(target=reader, daemon=True)
    watcher.start()
    try:
        kill_prepare_after(folder, URL, 2, SHARD)  # type: ignore[arg-type]
        assert pointer(s3) is None  # nothing a reader would take for a dataset
        # the two shards written went to the bucket; scratch holds none of them
        scratch = tmp_path / "downloads" / "scratch"
        assert len(list(scratch.rglob("*.json"))) >= 2  # the units' records
        assert not [p for p in scratch.rglob("*.array_record-*") if p.suffix != ".json"]
        markers = bucket_publish.markers(DATASET, "1.0.0")
        assert len(markers) == 1
        generation = next(iter(markers.values()))["generation"]
        uploaded = sorted(k for k in s3.keys("data", f"team/tiny/{generation}/"))
        assert len(uploaded) == 2 and not any(k.endswith(INFO_FILE) for k in uploaded)
        shutil.rmtree(scratch)  # the re-run is on another machine (a new CI runner, say)
        s3.requests.clear()
        done = catalog.builder(folder, data_dir=URL).prepare()  # the size is read from the marker
        assert (done.status, done.units_kept, done.units_written) == ("prepared", 2, 3)
    finally:
        stop.set()
        watcher.join(30)
    assert pointer(s3) == generation  # the killed prepare's generation, finished
    shard_puts = [p for p in s3.puts(".array_record-") if "uploadId" not in p]
    assert len(shard_puts) == 3  # only the three units that were not uploaded
    assert not any(p.endswith(u.rsplit("/", 1)[1]) for p in shard_puts for u in uploaded)
    assert set(seen) <= {generation}
    local = catalog.builder(folder, data_dir=tmp_path / "local")
    local.download_and_prepare(shard_size=SHARD)
    assert bucket_shards(s3, generation) == local_shards(Path(local.data_path))
    assert not bucket_publish.markers(DATASET, "1.0.0")
    assert "team/tiny/1.0.0.lock" not in s3.keys("data", "team/")


def test_worker_processes_upload_their_shards(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    result = catalog_cli(
        "prepare", str(folder), "--data-dir", URL, "--shard-size", str(SHARD), "--num-proc", "2"
    )
    assert result.returncode == 0, result.stderr
    local = catalog.builder(folder, data_dir=tmp_path / "local")
    local.download_and_prepare(shard_size=SHARD)
    generation = pointer(s3)
    assert generation is not None
    assert bucket_shards(s3, generation) == local_shards(Path(local.data_path))


def test_a_worker_on_another_machine_uploads_without_a_work_dir(
    tmp_path: Path, server: LoopbackServer, s3: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = idx_builder(tmp_path, server, 120)
    tasks: list[Task] = []
    serially = driver.run_serially

    def spy(todo: list[Task], tick: object = None) -> Iterator[Outcome]:
        tasks.extend(todo)
        yield from serially(todo, tick)  # type: ignore[arg-type]

    monkeypatch.setattr(driver, "run_serially", spy)
    catalog.builder(folder, data_dir=URL).download_and_prepare(shard_size=SHARD)
    generation = DATASET / "1.0.0.gen-elsewhere"
    elsewhere = tmp_path / "not-on-this-worker"
    task = dataclasses.replace(tasks[0], work=str(elsewhere), sink=BucketSink(generation))
    outcome = run_unit(task)
    assert outcome.shard is not None and outcome.written, outcome.error
    assert bucket_publish.stored_shard(generation, task.unit.file) == outcome.shard
    assert not elsewhere.exists()  # it wrote its shard in its own temp dir, then uploaded it
    assert run_unit(task).written is False  # a retried work item: uploaded already, kept


def test_a_failed_prepare_leaves_nothing_in_the_bucket(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    spec = folder / "builder.yaml"
    spec.write_text(spec.read_text().replace("num_examples: 300", "num_examples: 301"))
    result = catalog_cli("prepare", str(folder), "--data-dir", URL, "--shard-size", str(SHARD))
    assert result.returncode == 3  # the source data does not match its description
    assert "301" in result.stderr and "Traceback" not in result.stderr
    assert s3.keys("data", "team/") == {}


def test_an_https_data_dir_is_read_only(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 30)
    for command in ("prepare", "rm"):
        result = catalog_cli(command, str(folder), "--data-dir", server.url("/mirror"))
        assert result.returncode != 0
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "read-only" in lines[0], result.stderr


def test_list_prepared_reads_a_bucket(
    tmp_path: Path, server: LoopbackServer, s3: S3Server, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = catalog_cli("list", "--prepared", "--data-dir", URL)
    assert empty.returncode == 0 and empty.stdout == ""
    folder = idx_builder(tmp_path, server, 120)
    catalog.builder(folder, data_dir=URL).download_and_prepare(shard_size=SHARD)
    listed = catalog_cli("list", "--prepared", "--data-dir", URL, "--json")
    assert listed.returncode == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)
    assert (entry["name"], entry["version"], entry["splits"]) == ("tiny", "1.0.0", {"train": 120})
    assert entry["path"] == f"{URL}/tiny/1.0.0"
    # a local data dir is listed the same way (its generations through their pointer)
    local = tmp_path / "local"
    catalog.builder(folder, data_dir=local).download_and_prepare(shard_size=SHARD)
    assert main(["list", "--prepared", "--data-dir", str(local), "--json"]) == 0
    (mine,) = json.loads(capsys.readouterr().out)
    assert {**mine, "path": ""} == {**entry, "path": ""}
    assert mine["path"] == str(local / "tiny" / "1.0.0")


def test_rm_removes_a_dataset_from_a_bucket(
    tmp_path: Path, server: LoopbackServer, s3: S3Server, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = idx_builder(tmp_path, server, 120)
    catalog.builder(folder, data_dir=URL).download_and_prepare(shard_size=SHARD)
    assert main(["rm", str(folder), "--data-dir", URL, "--dry-run"]) == 0
    assert "would remove" in capsys.readouterr().out
    assert pointer(s3) is not None
    removed = catalog_cli("rm", str(folder), "--data-dir", URL)  # the command, as users run it
    assert removed.returncode == 0, removed.stderr
    assert f"removed {URL}/tiny/1.0.0" in removed.stdout
    assert s3.keys("data", "team/") == {}
    assert main(["rm", str(folder), "--data-dir", URL]) == 0
    assert "nothing to remove" in capsys.readouterr().out


def test_two_preparers_of_one_bucket_take_turns(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    folder = idx_builder(tmp_path, server, 120)
    command = [sys.executable, "-m", "catalog", "prepare", str(folder), "--data-dir", URL]
    errors: list[list[str]] = [[], []]
    with bucket_lock(DATASET, "1.0.0"):  # a third preparer holds the lock meanwhile
        running = [
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in errors
        ]
        readers = [
            threading.Thread(target=lambda p=p, e=e: e.extend(p.stderr), daemon=True)
            for p, e in zip(running, errors, strict=True)
        ]
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + 60
        while not all(any("waiting for process" in line for line in e) for e in errors):
            assert time.monotonic() < deadline, errors
            time.sleep(0.2)
    outputs = []
    for p, reader in zip(running, readers, strict=True):
        with p:  # closes its pipes
            outputs.append(p.stdout.read() if p.stdout is not None else "")
            reader.join(120)
    assert [p.returncode for p in running] == [0, 0], errors
    said = sorted(out.split(": ")[1] for out in outputs)
    assert said[0].startswith("prepared in "), outputs
    assert said[1] == "reused (prepared by another process)", outputs
    assert len({k.split("/")[2] for k in s3.keys("data", "team/tiny/1.0.0.gen-")}) == 1


@pytest.mark.parametrize("fmt", ["parquet", "tfrecord"])
def test_export_by_name_of_a_dataset_prepared_from_files_in_a_bucket(
    tmp_path: Path, s3: S3Server, fmt: str
) -> None:
    """Found by name through the spec stored in its generation and read from the bucket: the
    Parquet export's shard path used to lose a slash of the URL (``s3:/data/...``)."""
    table = tmp_path / "people.csv"
    table.write_text("name,age\n" + "".join(f"p{i},{i}\n" for i in range(30)))
    prepared = catalog_cli("prepare", str(table), "--data-dir", URL)
    assert prepared.returncode == 0, prepared.stderr
    out = tmp_path / "out"
    run = catalog_cli("export", "people", "--data-dir", URL, "--format", fmt, "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert "(train 30)" in run.stdout, run.stdout
    if fmt == "parquet":
        import pyarrow.parquet as pq

        read = pq.read_table(out / "people-train.parquet")
        assert read.column("name").to_pylist() == [f"p{i}" for i in range(30)]
        assert read.column("age").to_pylist() == list(range(30))
    else:
        assert (out / "people-train.tfrecord-00000-of-00001").stat().st_size > 0
