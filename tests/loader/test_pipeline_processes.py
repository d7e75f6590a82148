"""Process workers: same batches as threads, shared memory, clean shutdown on errors and Ctrl-C."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.testing.http_server import LoopbackServer

from conftest import ROOT, ctrl_c_reaches_children, idx_builder

COUNT = 150
SHM = Path("/dev/shm")
pytestmark = pytest.mark.skipif(not SHM.is_dir(), reason="needs POSIX shared memory in /dev/shm")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("processes")
    with LoopbackServer() as server:
        builder = idx_builder(root, server, COUNT)
        catalog.data_source(builder, split="train", data_dir=root / "data")  # prepares it
    return builder


@pytest.fixture
def ds(folder: Path) -> Any:
    source = catalog.data_source(folder, split="train", data_dir=folder.parent / "data")
    source[0]  # the readers are open in this process: spawn must not care
    return source


def segments(pid: int) -> list[str]:
    return sorted(p.name for p in SHM.iterdir() if p.name.startswith(f"catalog-{pid}-"))


def alive(pid: int) -> bool:
    """A live (not zombie) process with this id."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def augment(example: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    shift = int(rng.integers(0, 4))
    return {"image": np.roll(example["image"], shift, axis=1), "label": example["label"]}


def odd_labels(example: dict[str, Any]) -> bool:
    return int(example["label"]) % 2 == 1


def fail_on_label_7(example: dict[str, Any]) -> dict[str, Any]:
    if int(example["label"]) == 7:
        raise ZeroDivisionError("label 7 is not allowed")
    return example


def chain(ds: Any) -> catalog.Pipeline:
    p = catalog.pipeline(ds).shuffle(21).repeat(2).map(augment, with_rng=True)
    return p.filter(odd_labels).batch(20)


def same(a: list[Any], b: list[Any]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        for key in x:
            np.testing.assert_array_equal(x[key], y[key])


def test_processes_give_the_batches_of_threads_and_clean_up(ds: Any) -> None:
    expected = list(chain(ds))
    for workers in (1, 2):
        it = chain(ds).prefetch(workers, "process").iterator()
        got = list(it)
        same(got, expected)
        assert not multiprocessing.active_children()
        assert segments(os.getpid()) == []
    # Aligned batches (no filter): columns come straight out of shared memory.
    plain = catalog.pipeline(ds).shuffle(1).batch(32)
    batches = list(plain.prefetch(2, "process", start_method="spawn"))
    same(batches, list(plain))
    assert batches[0]["image"].flags.writeable


def test_resume_across_kinds_and_worker_counts(ds: Any) -> None:
    full = list(chain(ds))
    for k in (1, 5):
        it = chain(ds).prefetch(2, "process").iterator()
        head = [next(it) for _ in range(k)]
        state = json.loads(json.dumps(it.state_dict()))
        it.close()
        assert not multiprocessing.active_children() and segments(os.getpid()) == []
        same(head + list(chain(ds).prefetch(1, "process").iterator(state)), full)
        same(head + list(chain(ds).iterator(state)), full)


def wait_for_workers(it: Any, count: int) -> list[int]:
    """The worker pids once `count` have started (they start in the background)."""
    deadline = time.monotonic() + 60
    while len(it.worker_pids) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return list(it.worker_pids)


def test_worker_exception_has_index_and_traceback_and_leaves_nothing(ds: Any) -> None:
    # autotune=False: the workers compute every unit, so the error happens in one of them
    p = catalog.pipeline(ds).map(fail_on_label_7).batch(10)
    it = p.prefetch(2, "process", autotune=False).iterator()
    with pytest.raises(catalog.PipelineError) as info:
        list(it)
    message = str(info.value)
    first_7 = 9  # pattern labels are 3 * i % 10: example 9 is the first with label 7
    assert info.value.index == first_7
    assert f"example {first_7} of epoch 0: ZeroDivisionError: label 7 is not allowed" in message
    assert "Original traceback (in worker" in message and "in fail_on_label_7" in message
    assert 'raise ZeroDivisionError("label 7 is not allowed")' in message
    assert not multiprocessing.active_children()
    assert segments(os.getpid()) == []


def test_an_error_is_the_same_whoever_computed_the_unit(ds: Any) -> None:
    # autotuned, the first units are computed by the caller while the workers start: the
    # error then carries its own traceback (the cause) instead of a copy in the message
    p = catalog.pipeline(ds).map(fail_on_label_7).batch(10).prefetch(2, "process")
    with pytest.raises(catalog.PipelineError) as info:
        list(p)
    assert info.value.index == 9
    assert "example 9 of epoch 0: ZeroDivisionError: label 7 is not allowed" in str(info.value)
    text = "".join(traceback.format_exception(info.value))
    assert "in fail_on_label_7" in text
    assert 'raise ZeroDivisionError("label 7 is not allowed")' in text
    p.close()
    assert not multiprocessing.active_children()
    assert segments(os.getpid()) == []


def test_unpicklable_function_is_explained(ds: Any) -> None:
    p = catalog.pipeline(ds).map(lambda e: e).prefetch(1, "process")
    with pytest.raises(catalog.PipelineError, match="picklable.*kind='thread'"):
        next(iter(p))


SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import catalog

    def slow(example):
        return {"x": np.full(20000, example, np.int64)}  # big enough to need shared memory

    if __name__ == "__main__":
        p = catalog.pipeline(np.arange(1000)).repeat().map(slow).batch(64)
        it = p.prefetch(2, "process", depth=4, autotune=False).iterator()
        while len(it.worker_pids) < 2:  # they start in the background
            next(it)
        print(" ".join(map(str, it.worker_pids)), flush=True)
        for batch in it:  # forever, until Ctrl-C
            pass
""")


def test_ctrl_c_stops_workers_and_frees_shared_memory(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with ctrl_c_reaches_children():
        proc = subprocess.Popen(
            [sys.executable, str(script)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        pids = [int(p) for p in line.split()]
        assert len(pids) == 2, proc.stderr.read() if proc.stderr else line
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "KeyboardInterrupt" in err
    assert not [pid for pid in pids if alive(pid)]
    assert segments(proc.pid) == []


def with_a_lock(example: dict[str, Any]) -> dict[str, Any]:
    return {**example, "lock": threading.Lock()}  # cannot be pickled


def _refuse() -> None:
    raise RuntimeError("this object cannot be rebuilt here")


class RebuildsNowhere:
    """Pickles fine in the worker; unpickling it in the consumer fails."""

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return _refuse, ()


def with_a_fragile_object(example: dict[str, Any]) -> dict[str, Any]:
    return {**example, "fragile": RebuildsNowhere()}


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (with_a_lock, "cannot be sent from a process worker: cannot pickle '_thread.lock'"),
        (with_a_fragile_object, "cannot be unpickled here: RuntimeError"),
    ],
)
def test_an_output_that_cannot_travel_is_an_error_not_a_hang(
    ds: Any, fn: Any, message: str
) -> None:
    """The queue pickles in a thread of its own that only prints what fails: the consumer
    would wait forever for an output that a worker could not send."""
    it = catalog.pipeline(ds).map(fn).batch(10).prefetch(2, "process", autotune=False)
    outcome: list[BaseException] = []

    def consume() -> None:
        try:
            list(it)
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the consumer still waits for the output"
    assert len(outcome) == 1 and isinstance(outcome[0], catalog.PipelineError), outcome
    assert message in str(outcome[0]) and "prefetch(kind='thread')" in str(outcome[0])
    assert "Traceback" not in str(outcome[0])  # one message, what to do included
    assert not multiprocessing.active_children()
    assert segments(os.getpid()) == []


def test_a_killed_worker_is_reported_and_the_rest_cleaned_up(ds: Any) -> None:
    p = catalog.pipeline(ds).repeat().batch(10)
    it = p.prefetch(2, "process", autotune=False).iterator()
    next(it)
    victim, other = wait_for_workers(it, 2)
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(catalog.PipelineError, match=f"pid {victim}.* died"):
        list(it)  # what the worker queued before it died comes first, then the error
    assert not alive(other) and not multiprocessing.active_children()
    assert segments(os.getpid()) == []


def test_leaving_a_loop_early_stops_the_workers(ds: Any) -> None:
    for batch in catalog.pipeline(ds).repeat().batch(10).prefetch(2, "process"):
        assert len(batch["label"]) == 10
        break  # the iterator is dropped here: its finalizer closes it
    assert not multiprocessing.active_children()
    assert segments(os.getpid()) == []
