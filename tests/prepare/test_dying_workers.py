"""Workers that die mid-unit, and a disk that fills up, under every runner: one clear error
(one line on the CLI, the ``--json`` document still printed), and every finished unit kept for
the next run, which then matches a clean prepare byte for byte.

A worker is killed for real (SIGKILL, as the OS's out-of-memory killer does) while it is
writing a shard: the test finds the process holding a partial shard open and kills it. The
writes are slowed down (a `sitecustomize` on PYTHONPATH, in every process of the prepare) so
that a unit lasts long enough to be caught in the middle."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import catalog
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder, small_disk

SHARD = 60_000  # bytes: 300 28x28 examples make 5 shards of 60
DEADLINE = 120  # seconds for any prepare here

_SLOW_WRITES = """
import os, time
_delay = float(os.environ.get("CATALOG_TEST_WRITE_DELAY") or 0)
if _delay:
    from array_record.python import array_record_module as _module
    _Writer = _module.ArrayRecordWriter

    class _SlowWriter:
        def __init__(self, *args):
            self._writer = _Writer(*args)

        def write(self, record):
            time.sleep(_delay)
            return self._writer.write(record)

        def __getattr__(self, name):
            return getattr(self._writer, name)

    _module.ArrayRecordWriter = _SlowWriter

_fill = os.environ.get("CATALOG_TEST_FILL_AFTER")  # "N:path": fill the disk at the Nth write
if _fill:
    from array_record.python import array_record_module as _module
    _Writer = _module.ArrayRecordWriter
    _count, _, _path = _fill.partition(":")
    _left = [int(_count)]

    class _FillingWriter:
        def __init__(self, *args):
            self._writer = _Writer(*args)

        def write(self, record):
            _left[0] -= 1
            if _left[0] == 0:
                try:
                    with open(_path, "ab") as filler:
                        while True:
                            filler.write(bytes(4096))
                            filler.flush()
                except OSError:
                    pass
            return self._writer.write(record)

        def __getattr__(self, name):
            return getattr(self._writer, name)

    _module.ArrayRecordWriter = _FillingWriter
"""


def slow_env(tmp_path: Path, delay: float) -> dict[str, str]:
    """The environment of a prepare whose every record write takes `delay` seconds more."""
    hook = tmp_path / "slow_writes"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(textwrap.dedent(_SLOW_WRITES))
    path = os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "CATALOG_TEST_WRITE_DELAY": str(delay)}


def cli_args(folder: Path, data: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "catalog", "prepare", str(folder), "--data-dir", str(data),
        "--shard-size", str(SHARD), "--json", *extra,
    ]  # fmt: skip


def descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        children = [p for p, parent in parents.items() if parent == pid]
        found += children
        todo += children
    return found


def writing(pid: int) -> bool:
    """Whether process `pid` holds a partial shard open (it is in the middle of a unit)."""
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if f"{os.sep}.work{os.sep}partial{os.sep}" in str(fd.readlink()):
                    return True
    return False


def finished_units(data: Path) -> list[Path]:
    return sorted(data.glob("tiny/*.incomplete-*/.work/units/*.json"))


def kill_a_writer(prepare: subprocess.Popen[str], data: Path) -> int:
    """Once a unit is finished, SIGKILL a worker process of `prepare` in the middle of one."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline and prepare.poll() is None:
        if finished_units(data):
            for pid in descendants(prepare.pid):
                if writing(pid):
                    os.kill(pid, signal.SIGKILL)
                    return pid
        time.sleep(0.02)
    raise AssertionError(f"no worker was caught writing a unit: {prepare.communicate()}")


@contextlib.contextmanager
def running(args: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """A prepare in a process (and its own process group), killed whatever happens."""
    prepare = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        yield prepare
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(prepare.pid, signal.SIGKILL)
        prepare.communicate()


def shards(path: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.glob("*.array_record-*"))
    }


def check_one_clear_error(
    result: tuple[str, str], returncode: int, *needles: str, beam: bool = False, code: int = 1
) -> str:
    """The prepare failed with one error line naming `needles`, and the --json document on
    stdout; the error. No traceback, not even Beam's own (with `beam`: in the log file the
    error names). Exit `code`: 1 for a killed worker, 2 for a full disk
    (catalog.cli.common.EXIT_CODES)."""
    stdout, stderr = result
    assert returncode == code, (stdout, stderr)
    assert "Traceback" not in stderr, stderr
    document = json.loads(stdout)
    assert document["ok"] is False
    error = str(document["datasets"][0]["error"])
    assert "\n" not in error
    for needle in needles:
        assert needle in error, error
    lines = [line for line in stderr.splitlines() if line.startswith("catalog: error:")]
    assert len(lines) == 1 and error in lines[0], stderr
    if beam:  # what Beam wrote itself is in the log the error names, not on the terminal
        log = Path(error.split("Beam's own messages and tracebacks: ")[1].rstrip(")"))
        # Beam's messages, not necessarily a traceback: catalog notices a dead worker itself,
        # often before Beam logs its own traceback about it (a race, seen in CI)
        assert "apache_beam" in log.read_text(), error
        assert "apache_beam" not in stderr, stderr
    return error


def check_resumes(folder: Path, data: Path, tmp_path: Path, kept: int, *extra: str) -> None:
    """The same prepare again keeps at least `kept` finished units and gives the bytes a clean
    serial prepare gives."""
    again = subprocess.run(
        cli_args(folder, data, *extra), capture_output=True, text=True, timeout=DEADLINE
    )
    assert again.returncode == 0, again.stderr
    entry = json.loads(again.stdout)["datasets"][0]
    assert entry["status"] == "prepared" and entry["units_kept"] >= kept, entry
    assert entry["units_kept"] + entry["units_written"] == 5, entry
    clean = catalog.builder(folder, data_dir=tmp_path / "clean")
    clean.download_and_prepare(shard_size=SHARD)
    assert shards(catalog.builder(folder, data_dir=data).data_path) == shards(clean.data_path)


def test_a_killed_num_proc_worker_is_one_error_and_keeps_the_finished_units(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    data = tmp_path / "data"
    args = cli_args(folder, data, "--num-proc", "2")
    with running(args, slow_env(tmp_path, 0.01)) as prepare:
        pid = kill_a_writer(prepare, data)
        result = prepare.communicate(timeout=DEADLINE)
    error = check_one_clear_error(result, prepare.returncode, f"process {pid}", "SIGKILL")
    assert "unit " in error and " of 5 of split 'train'" in error
    kept = len(finished_units(data))
    assert kept >= 2  # the one finished before the kill, and the other worker's
    check_resumes(folder, data, tmp_path, kept, "--num-proc", "2")


def beam_options(mode: str) -> str:
    return f"runner=DirectRunner,direct_num_workers=2,direct_running_mode={mode}"


def test_a_killed_beam_worker_is_one_error_in_bounded_time(
    tmp_path: Path, server: LoopbackServer
) -> None:
    pytest.importorskip("apache_beam")
    folder = idx_builder(tmp_path, server, 300)
    data = tmp_path / "data"
    args = cli_args(folder, data, "--beam-pipeline-options", beam_options("multi_processing"))
    with running(args, slow_env(tmp_path, 0.01)) as prepare:
        pid = kill_a_writer(prepare, data)
        killed = time.monotonic()
        result = prepare.communicate(timeout=DEADLINE)
        assert time.monotonic() - killed < 60  # Beam alone waits for the dead worker forever
    error = check_one_clear_error(
        result, prepare.returncode, f"process {pid}", "SIGKILL", beam=True
    )
    assert "unit " in error and " of 5 of split 'train'" in error
    kept = len(finished_units(data))
    assert kept >= 1
    check_resumes(
        folder, data, tmp_path, kept, "--beam-pipeline-options", beam_options("in_memory")
    )


RUNNERS = {
    "serial": (),
    "num_proc": ("--num-proc", "2"),
    "beam": ("--beam-pipeline-options", beam_options("in_memory")),
    "beam_processes": ("--beam-pipeline-options", beam_options("multi_processing")),
}


@pytest.mark.parametrize("runner", list(RUNNERS))
def test_a_disk_that_fills_up_is_one_clear_error_under_every_runner(
    tmp_path: Path, server: LoopbackServer, runner: str
) -> None:
    if runner.startswith("beam"):
        pytest.importorskip("apache_beam")
    folder = idx_builder(tmp_path, server, 300)
    with small_disk(tmp_path / "disk", "2m") as disk:
        data = disk / "data"
        args = [*cli_args(folder, data, *RUNNERS[runner]), "--download-dir", str(tmp_path / "dl")]
        env = {**os.environ, "CATALOG_TEST_FILL_AFTER": f"100:{disk / 'filler'}"}
        env["PYTHONPATH"] = slow_env(tmp_path, 0)["PYTHONPATH"]
        with running(args, env) as prepare:
            result = prepare.communicate(timeout=DEADLINE)
        error = check_one_clear_error(
            result, prepare.returncode, "No space left on device", "free some space",
            beam=runner.startswith("beam"), code=2,
        )  # fmt: skip
        assert error.startswith("tiny: ") or "cannot write" in error, error
