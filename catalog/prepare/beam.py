"""Running a shard plan's units as Apache Beam work items (``pip install 'catalog[beam]'``).

``--beam-pipeline-options="runner=DirectRunner,direct_num_workers=2"`` (``key=value`` pairs,
comma-separated, each given to Beam as ``--key=value``) builds a pipeline of one element per
unit: ``Create(tasks) | Reshuffle() | Map(run unit)``. Records are never shuffled between
workers: a worker writes its unit's shard straight into the work directory, which (like the
download dir) must be on storage every worker sees; preparing into a bucket, each worker
uploads its unit's shard into the generation itself (`catalog.prepare.work_unit`), so only the
download dir and the builder folder need to be shared, and a unit's error travels in Beam's.
Each worker leaves its unit's record (or uploaded shard), or its error, in the work directory;
the driver reads them, verifies every shard and commits.

``runner=DirectRunner`` (the default) runs Beam's FnApiRunner, the engine the DirectRunner
uses for batch pipelines, so it never switches to the Prism runner (which downloads a binary
the first time); ``direct_running_mode`` (``in_memory``, ``multi_threading``,
``multi_processing``) and ``direct_num_workers`` choose how. Any other runner (Flink, Spark,
Dataflow) is handed to Beam by name; its workers need catalog installed (``--setup_file`` or
``--extra_package`` with a catalog wheel) and the builder folder on shared storage.

Failures come back as every other runner's do. A unit that cannot even leave its error (the
disk is full) raises it inside its message, which the driver finds in the error Beam raises. The
pipeline runs in a thread while this one watches the worker processes the DirectRunner starts
(``multi_processing``): Beam waits forever for a worker that was killed ("Failed to read inputs
in the data plane"), so a worker killed by a signal is `WorkerLostError` naming its unit (each
work item leaves a marker naming its process while it runs) and the signal, at once; the
other workers are stopped and the finished units kept. What Beam itself writes while it runs
(its logged tracebacks, its worker processes' output) goes to a log file that the error names
(`catalog.prepare.engine_log`), never before catalog's one-line error on the terminal.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import re
import shutil
import signal
import tempfile
import threading
import time
import traceback
import uuid
from pathlib import Path
from typing import Any

from catalog.errors import MissingDependencyError
from catalog.prepare.engine_log import to_log_file
from catalog.prepare.work_unit import (
    BOOKKEEPING,
    Outcome,
    Task,
    WorkerLostError,
    finished,
    finished_task,
    lost_worker,
    run_unit,
)

__all__ = ["INSTALL", "check", "parse_options", "run_with_beam"]

INSTALL = "pip install 'catalog[beam]'"
_DIRECT = ("DirectRunner", "FnApiRunner")


def check() -> None:
    """Raise MissingDependencyError unless apache_beam can be imported."""
    try:
        importlib.import_module("apache_beam")
    except ImportError:
        raise MissingDependencyError(
            f"preparing with Apache Beam needs apache-beam, an optional extra: {INSTALL}"
        ) from None


def parse_options(text: str) -> dict[str, str]:
    """``"runner=DirectRunner,direct_num_workers=2"`` -> a dict; ValueError names a bad pair."""
    options: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = pair.partition("=")
        key = key.strip().lstrip("-")
        if not sep or not key:
            raise ValueError(
                f"--beam-pipeline-options: expected key=value pairs separated by commas, got "
                f"{pair!r} in {text!r}"
            )
        options[key] = value.strip()
    return options


def _error_path(work: Path, file: str) -> Path:
    return work / BOOKKEEPING / "errors" / f"{file}.json"


def _running_path(work: Path, pid: int, file: str) -> Path:
    return work / BOOKKEEPING / "running" / f"{pid}.{file}"


_OUTCOME = "catalog-unit-outcome:"  # then the JSON of an error a work item could not write
_POLL_SECONDS = 0.2  # between looks at the worker processes


def _run(task: Task) -> str:
    """A Beam work item: run the unit, leave its error (if any) beside its record; while it
    runs, a marker names the process running it."""
    work, file = Path(task.work), task.unit.file
    running = _running_path(work, os.getpid(), file)
    with contextlib.suppress(OSError):  # only a better error message depends on it
        if work.is_dir():  # (a worker on another machine than the driver has no work dir)
            running.parent.mkdir(parents=True, exist_ok=True)
            running.touch()
    try:
        outcome = run_unit(task)
        if outcome.shard is None:
            error = {"kind": outcome.error_kind, "error": outcome.error}
            if not work.is_dir():  # a worker elsewhere: the driver would not see a file
                raise RuntimeError(f"{_OUTCOME}{json.dumps({'file': file, **error})}")
            path = _error_path(work, file)
            temporary = path.with_name(f"{path.name}.{uuid.uuid4().hex[:8]}")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                temporary.write_text(json.dumps(error))
                temporary.replace(path)
            except OSError:  # a full disk: the error travels in Beam's instead
                temporary.unlink(missing_ok=True)
                raise RuntimeError(f"{_OUTCOME}{json.dumps({'file': file, **error})}") from None
    finally:
        running.unlink(missing_ok=True)
    return file


def _carried(error: BaseException) -> dict[str, dict[str, str]]:
    """The errors work items could not write, found in the text of `error` (by unit file)."""
    found: dict[str, dict[str, str]] = {}
    decoder = json.JSONDecoder()
    for match in re.finditer(re.escape(_OUTCOME), str(error)):
        with contextlib.suppress(ValueError, TypeError, KeyError):
            data, _ = decoder.raw_decode(str(error), match.end())
            found[str(data["file"])] = {"kind": str(data["kind"]), "error": str(data["error"])}
    return found


def _processes() -> dict[int, tuple[int, str, int]]:
    """Every process: pid -> (parent pid, state, wait status once it has exited); empty
    where there is no /proc."""
    found: dict[int, tuple[int, str, int]] = {}
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    found[int(entry.name)] = (int(fields[1]), fields[0], int(fields[49]))
    return found


def _lost(work: Path, tasks: list[Task], ours: set[int]) -> WorkerLostError | None:
    """A worker process of this pipeline (one of `ours`, seen so far) that ended while it
    ran a unit (its marker is there and the unit is not finished), as the error naming it."""
    processes = _processes()
    me = os.getpid()
    added = {me}
    while added:  # this process's descendants: the DirectRunner's workers (under a shell)
        added = {pid for pid, (parent, _, _) in processes.items() if parent in added} - ours
        ours |= added
    units = {task.unit.file: task.unit for task in tasks}
    for marker in sorted((work / BOOKKEEPING / "running").glob("*.*")):
        number, _, file = marker.name.partition(".")
        pid = int(number) if number.isdigit() else -1
        unit = units.get(file)
        state = processes.get(pid)
        if pid not in ours or unit is None or (state is not None and state[1] != "Z"):
            continue  # not a local worker of this pipeline, or running
        if not marker.exists() or finished(work, unit) is not None:
            continue  # it finished its unit just now
        exitcode = None
        if state is not None and 0 < state[2] & 0x7F < 0x7F:
            exitcode = -(state[2] & 0x7F)  # a zombie killed by this signal
        else:  # reaped already: what Beam saw of the shell it starts each worker in
            for _ in range(int(1 / _POLL_SECONDS)):
                if _exits:
                    code = _exits[-1]
                    exitcode = 128 - code if code > 128 else code  # 137: SIGKILL, as sh says
                    break
                time.sleep(_POLL_SECONDS)
        for other in ours - {me, pid}:  # Beam waits for the dead one forever: stop the rest
            with contextlib.suppress(OSError):
                os.kill(other, signal.SIGTERM)
        return lost_worker(unit, f"Beam worker process {pid}", exitcode)
    return None


_exits: list[int] = []  # return codes of worker shells, as Beam's threads raise them
_WORKER_EXIT = re.compile(r"Worker subprocess exited with return code (-?\d+)")


#: Set once a lost worker is reported: Beam's own threads then fail one after another as they
#: lose their peer (grpc errors in the control and data planes), and their tracebacks, printed
#: a piece at a time, would break into the one-line error the caller prints meanwhile.
_reported = threading.Event()
_log_path: list[Path] = []  # Beam's log file since a pipeline started (`engine_log`)


def _from_beam(args: Any) -> bool:
    """Whether the exception of a thread was raised in Beam's or grpc's code."""
    tb = args.exc_traceback
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename.replace(os.sep, "/")
        if "/apache_beam/" in name or "/grpc/" in name:
            return True
        tb = tb.tb_next
    return False


def _hook(previous: Any) -> Any:
    """A threading.excepthook keeping off stderr the exit of a Beam worker, which `_lost`
    reports as WorkerLostError (its traceback would follow the one-line error), and, once that
    is reported, the failures of Beam's own threads that follow it."""

    def hook(args: Any) -> None:
        found = _WORKER_EXIT.search(str(args.exc_value))
        if found is not None:
            _exits.append(int(found.group(1)))
        elif _log_path and _from_beam(args):  # Beam's own: into its log, off the terminal
            with contextlib.suppress(OSError), open(_log_path[0], "a") as log:
                traceback.print_exception(
                    args.exc_type, args.exc_value, args.exc_traceback, file=log
                )
        elif not (_reported.is_set() and _from_beam(args)):
            previous(args)

    hook.catalog_beam = True  # type: ignore[attr-defined]
    return hook


def _watch(thread: threading.Thread, work: Path, tasks: list[Task]) -> None:
    """Wait for the pipeline's `thread`; WorkerLostError as soon as one of its worker
    processes is killed (see the module docstring)."""
    ours: set[int] = set()
    while thread.is_alive():
        thread.join(_POLL_SECONDS)
        lost = _lost(work, tasks, ours)
        if lost is not None:
            _reported.set()
            raise lost


def run_with_beam(tasks: list[Task], options: str) -> list[Outcome]:
    """Run the units in a Beam pipeline; their outcomes, read back from the work dir."""
    check()
    # Imported as Any: mypy runs with and without the extra installed.
    beam: Any = importlib.import_module("apache_beam")
    options_module: Any = importlib.import_module("apache_beam.options.pipeline_options")

    given = parse_options(options)
    runner: Any = given.pop("runner", "DirectRunner")
    if runner in _DIRECT:
        fn_runner: Any = importlib.import_module(
            "apache_beam.runners.portability.fn_api_runner.fn_runner"
        )
        runner = fn_runner.FnApiRunner()
    pipeline_options = options_module.PipelineOptions([f"--{k}={v}" for k, v in given.items()])
    if not tasks:
        return []
    work = Path(tasks[0].work)
    for task in tasks:
        _error_path(work, task.unit.file).unlink(missing_ok=True)
    shutil.rmtree(work / BOOKKEEPING / "running", ignore_errors=True)  # a killed run's markers
    failure: list[BaseException] = []

    def run() -> None:
        try:
            with beam.Pipeline(runner=runner, options=pipeline_options) as pipeline:
                _ = (
                    pipeline
                    | "units" >> beam.Create(tasks, reshuffle=False)
                    | "spread" >> beam.Reshuffle()
                    | "write shards" >> beam.Map(_run)
                )
        except BaseException as error:  # handed to the caller's thread
            failure.append(error)

    if not getattr(threading.excepthook, "catalog_beam", False):
        threading.excepthook = _hook(threading.excepthook)
    _reported.clear()
    logging.getLogger("apache_beam").disabled = False  # (silenced after an earlier failure)
    thread = threading.Thread(target=run, name="catalog-beam-pipeline", daemon=True)
    name = f"{work.parent.name}-{work.name}-{os.getpid()}.log".lstrip(".")
    with to_log_file(Path(tempfile.gettempdir()) / "catalog-beam" / name) as log:
        _log_path[:] = [log.path]
        thread.start()
        try:
            _watch(thread, work, tasks)
        except WorkerLostError as lost:  # Beam goes on logging about it: not on the terminal
            logging.getLogger("apache_beam").disabled = True
            raise WorkerLostError(f"{lost}{log.mention()}") from None
    mention = log.mention()
    if not failure and not mention:
        log.path.unlink(missing_ok=True)
    carried = _carried(failure[0]) if failure else {}
    outcomes = []
    for task in tasks:
        shard = finished_task(task)  # a bucket's: what workers anywhere uploaded
        if shard is not None:
            outcomes.append(Outcome(task.unit, shard))
            continue
        try:
            data = carried.get(task.unit.file) or json.loads(
                _error_path(work, task.unit.file).read_text()
            )
            kind, error = data["kind"], data["error"]
        except (OSError, ValueError, KeyError):
            kind = "SourceFormatError"
            error = f"{task.unit.describe()}: the Beam pipeline finished without writing it"
            if failure:  # stopped by another unit's error: that one's kind (a full disk...)
                kind = next((c["kind"] for c in carried.values()), kind)
                error = f"{task.unit.describe()}: the Beam pipeline failed: {_first(failure[0])}"
        outcomes.append(Outcome(task.unit, error_kind=kind, error=f"{error}{mention}"))
    if failure and all(o.shard is not None for o in outcomes):
        raise failure[0]  # not a unit's failure: Beam's own, as Beam raised it
    return outcomes


def _first(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__
