"""The automatic default (`catalog.loader.autotune`): a pipeline without `prefetch` computes in
tuned threads, one per usable core; the choice is checked here without timing anything."""

from __future__ import annotations

import io
import os
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.loader import autotune, pipeline
from catalog.loader.autotune import (
    MAX_AUTO_WORKERS,
    auto_workers,
    reads_safely_in_threads,
    usable_cores,
)
from catalog.loader.scheduler import Pool, Tuner
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder


def test_one_thread_per_usable_core_capped() -> None:
    assert [auto_workers(n) for n in (0, 1, 2, 3, 8, 9, 256)] == [1, 1, 2, 3, 8, 8, 8]
    assert MAX_AUTO_WORKERS == 8
    if hasattr(os, "sched_getaffinity"):  # the CPUs this process may use, not the machine's
        assert usable_cores() == len(os.sched_getaffinity(0))
    assert auto_workers() == min(usable_cores(), MAX_AUTO_WORKERS)


def pipeline_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("catalog-pipeline-")}


def test_a_pipeline_without_prefetch_computes_in_auto_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = sys.modules["catalog.loader.pipeline"]  # the package's `pipeline` is the function
    monkeypatch.setattr(module, "auto_workers", lambda: 3)
    before = pipeline_threads()
    p = pipeline(list(range(100))).map(lambda x: x * 2).batch(10)  # a lambda: threads need
    assert [b.tolist() for b in p] == [[2 * i for i in range(k, k + 10)] for k in range(0, 100, 10)]
    (tuner,) = p._tuner
    assert (tuner.workers, tuner.fixed) == (3, False)  # tuned between 0 and 3
    # it starts from the caller alone, and a thread starts with its first order: this epoch
    # of ten quick batches is over before a window could show that one pays
    assert (tuner.level, pipeline_threads() - before) == (0, set())
    p.close()
    slow = pipeline(list(range(60))).map(lambda x: x).batch(1)
    slow._tuner.append(Tuner(3, start=1))  # as if a window had shown that one thread pays
    slow._pool.append(Pool())
    assert [b.tolist() for b in slow] == [[i] for i in range(60)]
    assert 1 <= len(pipeline_threads() - before) <= 3  # kept for the next epoch
    slow.close()
    # prefetch(0) is the caller alone, as before; prefetch(N) is kept as given
    inline = pipeline(list(range(10))).prefetch(0)
    list(inline)
    assert inline._tuner == []
    given = pipeline(list(range(10))).prefetch(2, "thread", autotune=False)
    list(given)
    assert (given._tuner[0].workers, given._tuner[0].fixed) == (2, True)
    given.close()


def test_the_default_is_real_threads_by_default_and_the_output_never_changes() -> None:
    assert autotune.auto_workers() >= 1
    source = np.arange(300)

    def augment(x: Any, rng: np.random.Generator) -> Any:
        return x + rng.integers(0, 1000)

    def make() -> catalog.Pipeline:
        return pipeline(source).shuffle(seed=3).map(augment, with_rng=True).batch(32)

    auto = make()
    want = [b.tolist() for b in make().prefetch(0)]
    assert [b.tolist() for b in auto] == want
    assert [b.tolist() for b in auto] == want  # a second epoch, with the workers kept
    assert auto._tuner and auto._tuner[0].workers == auto_workers()
    # resuming from a state taken under the default
    it = auto.iterator()
    head = [next(it).tolist() for _ in range(3)]
    rest = [b.tolist() for b in make().prefetch(0).iterator(it.state_dict())]
    assert head + rest == want
    auto.close()


class FileRecords:
    """A source of one's own that reads a file with seek and read: not safe in threads."""

    def __init__(self, data: bytes) -> None:
        self.file = io.BytesIO(data)

    def __len__(self) -> int:
        return len(self.file.getvalue())

    def __getitem__(self, i: int) -> int:
        self.file.seek(i)
        return self.file.read(1)[0]


class SafeRecords(FileRecords):
    thread_safe = True

    def __getitem__(self, i: int) -> int:
        return self.file.getvalue()[i]


def test_threads_only_for_a_source_known_to_be_safe_in_them(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        folder = idx_builder(tmp_path, server, 20)
        ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "data")
    cases = [
        (ds, True),
        (ds[2:9], True),  # a view is a DataSource too
        (np.arange(5), True),
        ([1, 2], True),
        ((1, 2), True),
        (range(3), True),
        (FileRecords(b"abc"), False),
        (SafeRecords(b"abc"), True),  # it says so
    ]
    for source, safe in cases:
        assert reads_safely_in_threads(source) is safe, source
        p = pipeline(source).batch(2)
        list(p)
        assert bool(p._tuner) is safe  # workers (tuned) for the safe ones, the caller alone else
        p.close()
    unsafe = pipeline(FileRecords(bytes(range(50)))).batch(5)
    assert [b.tolist() for b in unsafe] == [list(range(k, k + 5)) for k in range(0, 50, 5)]
    asked = pipeline(FileRecords(b"ab")).prefetch(1)  # asked for: as given
    list(asked)
    assert asked._tuner[0].workers == 1
    asked.close()


@pytest.mark.parametrize(
    ("speed", "settles_at"),
    [
        # decoding JPEGs: two threads (on two cores) give twice the batches
        ({0: 100.0, 1: 150.0, 2: 200.0}, 2),
        # a GIL-bound map: threads only fight over the GIL, so none are used
        ({0: 100.0, 1: 70.0, 2: 60.0}, 0),
    ],
)
def test_from_the_auto_level_the_tuner_settles_where_the_rate_is_best(
    speed: dict[int, float], settles_at: int
) -> None:
    """From none (the default's start) or from all `auto_workers` threads (``prefetch(N)``'s),
    the tuner moves, by measured rates only (given here), to the fewest workers within 10% of
    the fastest."""
    for tuner in (Tuner(auto_workers(2), start=0), Tuner(auto_workers(2))):
        levels = []
        for _ in range(200):
            tuner.measured(speed[tuner.level])
            levels.append(tuner.level)
        assert levels[-1] == settles_at
        assert levels[100:].count(settles_at) >= 95  # it only looks at the others now and then
