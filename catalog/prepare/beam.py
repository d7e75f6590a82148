"""Running a shard plan's units as Apache Beam work items (``pip install 'catalog[beam]'``).

``--beam-pipeline-options="runner=DirectRunner,direct_num_workers=2"`` (``key=value`` pairs,
comma-separated, each given to Beam as ``--key=value``) builds a pipeline of one element per
unit: ``Create(tasks) | Reshuffle() | Map(run unit)``. Records are never shuffled between
workers: a worker writes its unit's shard straight into the work directory, which (like the
download dir) must be on storage every worker sees. Each worker leaves its unit's record, or
its error, in the work directory; the driver reads them, verifies every shard and commits.

``runner=DirectRunner`` (the default) runs Beam's FnApiRunner, the engine the DirectRunner
uses for batch pipelines, so it never switches to the Prism runner (which downloads a binary
the first time); ``direct_running_mode`` (``in_memory``, ``multi_threading``,
``multi_processing``) and ``direct_num_workers`` choose how. Any other runner (Flink, Spark,
Dataflow) is handed to Beam by name; its workers need catalog installed (``--setup_file`` or
``--extra_package`` with a catalog wheel) and the builder folder on shared storage.
"""

from __future__ import annotations

import importlib
import json
import uuid
from pathlib import Path
from typing import Any

from catalog.errors import MissingDependencyError
from catalog.prepare.work_unit import BOOKKEEPING, Outcome, Task, finished, run_unit

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


def _run(task: Task) -> str:
    """A Beam work item: run the unit, leave its error (if any) beside its record."""
    outcome = run_unit(task)
    if outcome.shard is None:
        path = _error_path(Path(task.work), task.unit.file)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{uuid.uuid4().hex[:8]}")
        temporary.write_text(json.dumps({"kind": outcome.error_kind, "error": outcome.error}))
        temporary.replace(path)
    return task.unit.file


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
    with beam.Pipeline(runner=runner, options=pipeline_options) as pipeline:
        _ = (
            pipeline
            | "units" >> beam.Create(tasks, reshuffle=False)
            | "spread" >> beam.Reshuffle()
            | "write shards" >> beam.Map(_run)
        )
    outcomes = []
    for task in tasks:
        shard = finished(work, task.unit)
        if shard is not None:
            outcomes.append(Outcome(task.unit, shard))
            continue
        try:
            data = json.loads(_error_path(work, task.unit.file).read_text())
            kind, error = data["kind"], data["error"]
        except (OSError, ValueError, KeyError):
            kind = "SourceFormatError"
            error = f"{task.unit.describe()}: the Beam pipeline finished without writing it"
        outcomes.append(Outcome(task.unit, error_kind=kind, error=error))
    return outcomes
