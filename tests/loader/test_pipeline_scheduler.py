"""The scheduler behind prefetch: caller-runs, a tuned number of workers, kept workers, and
the shared-memory slots process workers write batches into."""

from __future__ import annotations

import errno
import gc
import itertools
import multiprocessing
import os
import pickle
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.loader import processes, shm
from catalog.loader import scheduler as scheduler_module
from catalog.loader.processes import ProcessWorkers
from catalog.loader.scheduler import Scheduler, Tuner, Workers
from catalog.loader.threads import ThreadWorkers

SHM = Path("/dev/shm")


def square(example: Any) -> dict[str, Any]:
    return {"x": np.full(3, example * example)}


def alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def segments(prefix: str) -> list[str]:
    return sorted(p.name for p in SHM.iterdir() if p.name.startswith(prefix))


# -- the tuner ----------------------------------------------------------------------------
def run_tuner(tuner: Tuner, speed: dict[int, float], windows: int) -> list[int]:
    levels = []
    for _ in range(windows):
        tuner.measured(speed[tuner.level])
        levels.append(tuner.level)
    return levels


def test_the_tuner_climbs_to_the_fastest_level_and_stays_there() -> None:
    speed = {0: 100.0, 1: 300.0, 2: 500.0, 3: 450.0, 4: 400.0}
    levels = run_tuner(Tuner(4), speed, 300)
    assert levels[-1] == 2
    settled = levels[100:]
    assert settled.count(2) >= 0.95 * len(settled)  # it only looks at 1 and 3 now and then
    assert set(settled) <= {0, 1, 2, 3}


def test_the_tuner_goes_to_no_workers_when_they_only_cost() -> None:
    levels = run_tuner(Tuner(2), {0: 13000.0, 1: 12000.0, 2: 8000.0}, 200)
    assert levels[-1] == 0 and levels[100:].count(0) >= 0.95 * 100


def test_a_tie_goes_to_fewer_workers_and_a_fixed_tuner_never_moves() -> None:
    levels = run_tuner(Tuner(2), {0: 1000.0, 1: 1020.0, 2: 1040.0}, 100)  # all within 10%
    assert levels[-1] == 0 and levels[50:].count(0) >= 45
    levels = run_tuner(Tuner(4), {0: 100.0, 1: 200.0, 2: 380.0, 3: 400.0, 4: 370.0}, 200)
    assert levels[-1] == 2  # 3 is faster, but by less than the margin
    assert set(run_tuner(Tuner(2, fixed=True), {0: 9e9, 1: 1.0, 2: 1.0}, 20)) == {2}


def test_thread_workers_that_clearly_help_are_not_measured_against_none() -> None:
    """Photos on 2 cores: units of tens of milliseconds, the consumer alone (or waiting on
    one thread) at half the speed of two. With threads, a round measures one worker fewer
    and, that being clearly slower, not none: the dearest window is skipped."""
    speed = {0: 20.0, 1: 21.0, 2: 40.0}
    alike = run_tuner(Tuner(2, alike=True), speed, 300)
    assert 0 not in alike and alike[-1] == 2
    assert alike.count(1) >= 3  # it does look at one fewer now and then
    # the same rates from process workers: none is measured each round
    assert 0 in run_tuner(Tuner(2), speed, 300)


def test_thread_workers_still_measure_none_when_one_fewer_is_as_fast() -> None:
    """A GIL-bound map: one worker fewer is as fast as home (or faster), so none is measured,
    and wins."""
    levels = run_tuner(Tuner(2, alike=True), {0: 13000.0, 1: 12000.0, 2: 8000.0}, 200)
    assert levels[-1] == 0 and levels[100:].count(0) >= 0.95 * 100
    levels = run_tuner(
        Tuner(4, alike=True), {0: 900.0, 1: 300.0, 2: 320.0, 3: 330.0, 4: 340.0}, 300
    )
    assert levels[-1] == 0  # from 4, 3 is within the margin: the climb goes on down to none


# -- the scheduler ------------------------------------------------------------------------
class Cycling(Tuner):
    """Changes the level after every unit: orders are outstanding at every change."""

    WINDOW_SECONDS = 0.0
    MIN_WINDOW_UNITS = 1

    def __init__(self, workers: int, levels: list[int]) -> None:
        super().__init__(workers)
        self._cycle = itertools.cycle(levels)

    def measured(self, rate: float) -> None:
        self.level = next(self._cycle)


def wait_ready(workers: Workers, count: int) -> None:
    deadline = time.monotonic() + 60
    while workers.ready() < count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert workers.ready() == count


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_batches_come_in_order_while_the_number_of_workers_changes(kind: str) -> None:
    p = catalog.pipeline(np.arange(700)).shuffle(3).repeat(2).map(square).batch(7)
    expected = list(p)
    plan = p.plan()
    workers: Workers = ThreadWorkers(plan, 2) if kind == "thread" else ProcessWorkers(plan, 2)
    wait_ready(workers, 2)
    units = plan.sampler.num_units
    assert units is not None
    scheduler = Scheduler(plan, 0, units, workers, Cycling(2, [2, 0, 1, 2, 2, 0]), depth=2)
    try:
        got = [scheduler.get().struct for _ in range(units)]
    finally:
        scheduler.close()
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a["x"], b["x"])
    assert scheduler.computed["caller"] > 0 and scheduler.computed["workers"] > 0


class Alone(Tuner):
    """Settled on no workers, with long windows: the caller's short way (`Scheduler.get`)."""

    WINDOW_SECONDS = 0.0
    MIN_WINDOW_UNITS = 10

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.level, self.windows = 0, 0

    def measured(self, rate: float) -> None:
        self.windows += 1


def test_the_caller_alone_gives_the_same_units_and_errors() -> None:
    p = catalog.pipeline(np.arange(700)).shuffle(3).map(square).batch(7)
    expected = list(p)
    plan = p.plan()
    tuner = Alone(2)
    scheduler = Scheduler(plan, 0, 100, ThreadWorkers(plan, 2), tuner, depth=2)
    full_way = scheduler._get
    calls = []
    scheduler._get = lambda: (calls.append(1), full_way())[1]  # type: ignore[method-assign]
    try:
        got = [scheduler.get().struct for _ in range(100)]
    finally:
        scheduler.close()
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a["x"], b["x"])
    assert scheduler.computed == {"caller": 100, "workers": 0}
    assert tuner.windows >= 8  # still measured: about one window per 11 units
    assert len(calls) <= 2 * tuner.windows + 2  # the window's ends only go the full way
    failing = catalog.pipeline(np.arange(100)).map(square).map(fail_at_50).batch(5).plan()
    scheduler = Scheduler(failing, 0, 20, ThreadWorkers(failing, 1), Alone(1), depth=2)
    with pytest.raises(catalog.PipelineError, match="example 50"):
        [scheduler.get() for _ in range(20)]  # batch 10 holds example 50
    assert scheduler._broken  # so close() stops the workers instead of keeping them
    scheduler.close()


def test_without_autotune_the_workers_compute_everything() -> None:
    p = catalog.pipeline(np.arange(300)).map(square).batch(10)
    plan = p.plan()
    tuner = Tuner(2, fixed=True)
    scheduler = Scheduler(plan, 0, 30, ThreadWorkers(plan, 2), tuner, depth=2)
    try:
        for _ in range(30):
            scheduler.get()
    finally:
        scheduler.close()
    assert scheduler.computed == {"caller": 0, "workers": 30}


class Recorder:
    """Workers that compute nothing themselves: they note each order and answer it, in
    order, from the plan."""

    order_seconds = 0.0

    def __init__(self, plan: Any, size: int) -> None:
        self.plan, self.size = plan, size
        self.sent: list[tuple[int, int]] = []  # (worker, first unit)
        self.queues: list[list[tuple[int, int]]] = [[] for _ in range(size)]

    def ready(self, wait: bool = False) -> int:
        return self.size

    def send(self, worker: int, first: int, count: int) -> None:
        self.sent.append((worker, first))
        self.queues[worker].append((first, count))

    def receive(self, worker: int) -> tuple[list[tuple[bool, Any]], float]:
        first, count = self.queues[worker].pop(0)
        window: list[Any] = [None]
        return [(True, self.plan.compute(u, window)) for u in range(first, first + count)], 0.0

    def close(self) -> None:
        pass


def test_orders_go_to_the_workers_in_turn() -> None:
    """The units the consumer needs next are spread over the workers (each computes its
    oldest order first), not queued on one while the next works further ahead: that one
    would finish its orders and then wait, idle, until the consumer collected them."""
    plan = catalog.pipeline(np.arange(200)).map(square).batch(10).plan()
    workers = Recorder(plan, 2)
    scheduler = Scheduler(plan, 0, 20, workers, Tuner(2, fixed=True), depth=3)
    got = [scheduler.get() for _ in range(20)]
    scheduler.close()
    assert workers.sent[:6] == [(0, 0), (1, 1), (0, 2), (1, 3), (0, 4), (1, 5)]
    assert [w for w, _ in workers.sent] == [0, 1] * 10  # and so on as orders are collected
    want = [b.struct["x"] for b in (plan.compute(u, [None]) for u in range(20))]
    for block, expected in zip(got, want, strict=True):
        np.testing.assert_array_equal(block.struct["x"], expected)


# -- workers kept between iterators ---------------------------------------------------------
def epoch_pids(p: catalog.Pipeline, count: int) -> tuple[list[int], int]:
    it = p.iterator()
    n = 1 if next(it) is not None else 0
    deadline = time.monotonic() + 60
    while len(it.worker_pids) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    pids = it.worker_pids
    n += sum(1 for _ in it)
    return pids, n


def test_process_workers_are_kept_between_epochs_and_stop_with_the_pipeline() -> None:
    p = catalog.pipeline(np.arange(400)).map(square).batch(10).prefetch(2, "process")
    pids, n = epoch_pids(p, 2)
    assert len(pids) == 2 and n == 40
    again, n = epoch_pids(p, 2)
    assert again == pids and n == 40  # the same processes: no new start per epoch
    assert all(alive(pid) for pid in pids)
    p.close()
    assert not [pid for pid in pids if alive(pid)]
    assert not multiprocessing.active_children()
    assert segments(f"catalog-{os.getpid()}-") == []
    # closed is not broken: iterating again starts new workers
    fresh, n = epoch_pids(p, 2)
    assert n == 40 and not set(fresh) & set(pids)
    del p
    gc.collect()  # a dropped pipeline stops its workers
    assert not [pid for pid in fresh if alive(pid)] and not multiprocessing.active_children()


def test_a_big_plan_reaches_the_workers_through_shared_memory_and_is_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    put: list[tuple[str, int]] = []
    real_put = shm.put_bytes

    def spy(name: str, data: bytes) -> int:
        put.append((name, len(data)))
        return real_put(name, data)

    monkeypatch.setattr(shm, "put_bytes", spy)
    values = np.arange(200_000)  # pickled with the plan: 1.6 MB
    p = catalog.pipeline(values).batch(5000).prefetch(2, "process", autotune=False)
    got = np.concatenate(list(p))
    np.testing.assert_array_equal(got, values)
    assert len(put) == 1 and put[0][0].endswith("plan") and put[0][1] > 1_600_000
    # the plan was read by every worker, and the kept workers' batch slots are mapped on
    # both sides: no name is left for anything
    assert segments(f"catalog-{os.getpid()}-") == []
    p.close()
    assert not multiprocessing.active_children()
    assert segments(f"catalog-{os.getpid()}-") == []


def test_a_pipeline_with_workers_pickles_without_them() -> None:
    p = catalog.pipeline(np.arange(50)).map(square).batch(10).prefetch(2, "process")
    expected = [b["x"] for b in p]  # p now keeps two workers
    copy = pickle.loads(pickle.dumps(p))  # e.g. into a DataLoader worker or another job
    assert [b["x"].tolist() for b in copy] == [e.tolist() for e in expected]
    copy.close()
    p.close()
    assert not multiprocessing.active_children()


def test_workers_of_a_failed_epoch_are_not_kept() -> None:
    p = catalog.pipeline(np.arange(100)).map(square).map(fail_at_50).batch(10)
    p = p.prefetch(2, "process", autotune=False)
    it = p.iterator()
    with pytest.raises(catalog.PipelineError, match="example 50"):
        for _ in it:
            pass
    assert not multiprocessing.active_children()
    p.close()


def fail_at_50(example: dict[str, Any]) -> dict[str, Any]:
    if int(example["x"][0]) == 2500:
        raise ValueError("no 50")
    return example


# -- shared-memory slots -------------------------------------------------------------------
@pytest.mark.skipif(not SHM.is_dir(), reason="needs POSIX shared memory in /dev/shm")
def test_slots_are_reused_grown_and_read_as_copies() -> None:
    prefix = f"catalog-test-{os.getpid()}-"
    writer, reader = shm.Writer(prefix), shm.Reader()
    try:
        small = {"a": np.arange(10, dtype=np.int64), "s": "text", "o": np.array([None, 1])}
        described, name, size = writer.write(0, small)
        assert name is not None and segments(prefix) == [name]
        first = reader.read(0, described, name, size)
        assert segments(prefix) == []  # both sides have it mapped: the name is removed
        again = writer.write(0, {"a": np.arange(10, 20, dtype=np.int64), "s": "x", "o": None})
        assert again[1] == name  # the same segment, written again
        second = reader.read(0, *again)
        np.testing.assert_array_equal(first["a"], np.arange(10))  # a copy: not overwritten
        np.testing.assert_array_equal(second["a"], np.arange(10, 20))
        assert first["s"] == "text" and first["o"].tolist() == [None, 1]
        big = np.arange(100_000, dtype=np.float32)
        grown = writer.write(0, [big, big[:5]])
        assert grown[1] != name and segments(prefix) == [grown[1]]  # a new one
        got = reader.read(0, *grown)
        assert segments(prefix) == []
        np.testing.assert_array_equal(got[0], big)
        np.testing.assert_array_equal(got[1], big[:5])
        assert got[0].flags.writeable
        described, name, size = writer.write(1, {"empty": np.zeros(0)})
        assert name is None and size == 0 and described["empty"].size == 0  # nothing to share
    finally:
        reader.close()
        writer.close()
    assert segments(prefix) == []


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="no posix_fallocate here")
def test_full_shared_memory_is_an_error_that_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Writing into a mapping of a full tmpfs would kill the worker with SIGBUS; the memory
    is reserved first, so a full /dev/shm is an error naming the fix, and nothing is left."""
    prefix = f"catalog-test-full-{os.getpid()}-"

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    writer = shm.Writer(prefix)
    with pytest.raises(
        catalog.StorageError, match=r"shared memory is full: a batch needs .* --shm-size"
    ):
        writer.write(0, {"x": np.zeros(1000)})
    # in a worker: the order fails with that message alone (no traceback: not user code)
    plan = catalog.pipeline(np.arange(100)).batch(10).plan()
    failure = processes._compute(plan, 0, 2, [None], writer, 0)[4]
    assert failure[0] == 0 and failure[3] is None
    assert failure[2].startswith("shared memory is full") and "\n" not in failure[2]
    writer.close()
    assert segments(prefix) == []


class Clock:
    """`time` as the scheduler sees it: seconds that pass only when a unit is computed."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


class SlowFirstUnit:
    """A plan whose unit 0 takes 10 ms on `clock` (a cold start) and every other 0.1 ms."""

    def __init__(self, plan: Any, clock: Clock) -> None:
        self.plan, self.clock = plan, clock

    def compute(self, unit: int, window: list[Any]) -> Any:
        self.clock.now += 0.010 if unit == 0 else 0.0001
        return self.plan.compute(unit, window)


def test_a_window_sized_from_a_slow_first_unit_lasts_as_long_as_a_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first unit sizes the first window (10 ms: 4 units); the quick units after it
    would close that window after half a millisecond, and the tuner would try workers on a
    measurement of nothing. It is made as long as their rate says: at least half of
    `Tuner.WINDOW_SECONDS`."""
    clock = Clock()
    monkeypatch.setattr(scheduler_module, "time", clock)
    closed_at: list[float] = []

    class Recording(Tuner):
        def measured(self, rate: float) -> None:
            closed_at.append(clock.now)
            super().measured(rate)

    plan = SlowFirstUnit(catalog.pipeline(list(range(3000))).map(square).batch(5).plan(), clock)
    tuner = Recording(2, start=0)
    scheduler = Scheduler(plan, 0, 600, Recorder(plan, 2), tuner, depth=2)  # type: ignore[arg-type]
    try:
        units = [scheduler.get() for _ in range(600)]
    finally:
        scheduler.close()
    assert len(units) == 600
    assert closed_at and closed_at[0] >= 0.010 + Tuner.WINDOW_SECONDS / 2
    assert all(b - a >= Tuner.WINDOW_SECONDS / 2 for a, b in itertools.pairwise(closed_at))
