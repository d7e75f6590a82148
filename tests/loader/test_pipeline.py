"""catalog.pipeline over a prepared split: order, batches, map/filter/cache, workers, resume."""

from __future__ import annotations

import concurrent.futures
import json
import threading
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import catalog
from catalog.loader.permutation import permute
from catalog.loader.sampler import Sampler
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels

from conftest import idx_builder

COUNT = 200
INV31 = pow(31, -1, 256)  # pattern image i has pixel (0, 0) = 31 * i % 256


@pytest.fixture(scope="module")
def ds(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("pipeline")
    with LoopbackServer() as server:
        folder = idx_builder(root, server, COUNT)
        source = catalog.data_source(folder, split="train", data_dir=root / "data")
        source[0]  # the readers are open: workers must not depend on that
    return source


def ids(images: np.ndarray[Any, Any]) -> list[int]:
    """The example index of each pattern image of a batch."""
    return ((images[:, 0, 0, 0].astype(np.int64) * INV31) % 256).tolist()


def flip_and_tag(example: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    image = example["image"][:, ::-1] if rng.random() < 0.5 else example["image"]
    return {"image": np.array(image), "label": example["label"], "noise": rng.random()}


def not_label_3(example: dict[str, Any]) -> bool:
    return int(example["label"]) != 3


def assert_same(a: list[Any], b: list[Any]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for key in x:
            np.testing.assert_array_equal(x[key], y[key])


# -- the sampler --------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 3000),
    seed=st.integers(0, 2**63),
    epoch=st.integers(0, 1000),
)
def test_shuffle_is_a_permutation_of_each_epoch(n: int, seed: int, epoch: int) -> None:
    order = permute(np.arange(n), n, seed=seed, epoch=epoch)
    assert sorted(order.tolist()) == list(range(n))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 700), chunk=st.integers(1, 200), seed=st.integers(0, 1000))
def test_units_of_an_epoch_read_every_record_once(n: int, chunk: int, seed: int) -> None:
    sampler = Sampler(n, seed=seed, num_epochs=2, chunk=chunk)
    per_epoch = sampler.units_per_epoch
    window: list[Any] = [None]
    epochs = [
        np.concatenate(
            [sampler.unit_records(e * per_epoch + u, window)[1] for u in range(per_epoch)]
        )
        for e in range(2)
    ]
    for order in epochs:
        assert sorted(order.tolist()) == list(range(n))
    if n > 8:
        assert epochs[0].tolist() != epochs[1].tolist()  # a new order each epoch
        assert epochs[0].tolist() != list(range(n))


def test_shuffle_order_depends_on_seed_and_epoch_only() -> None:
    a = permute(np.arange(1000), 1000, seed=5, epoch=2)
    b = np.concatenate(
        [permute(np.arange(i, i + 100), 1000, seed=5, epoch=2) for i in range(0, 1000, 100)]
    )
    np.testing.assert_array_equal(a, b)  # any window is computed on its own
    assert permute(np.arange(1000), 1000, seed=6, epoch=2).tolist() != a.tolist()


@pytest.mark.parametrize("count", [1, 2, 3, 7])
@pytest.mark.parametrize("drop_remainder", [False, True])
def test_shard_parts_are_disjoint_and_cover(ds: Any, count: int, drop_remainder: bool) -> None:
    parts = []
    for index in range(count):
        p = catalog.pipeline(ds).shard(index, count, drop_remainder).shuffle(1).batch(16)
        parts.append([i for batch in p for i in ids(batch["image"])])
    seen = [i for part in parts for i in part]
    assert len(seen) == len(set(seen))  # disjoint
    if drop_remainder:
        assert {len(part) for part in parts} == {COUNT // count}
    else:
        assert sorted(seen) == list(range(COUNT))  # covering
    with pytest.raises(ValueError, match="shard index"):
        catalog.pipeline(ds).shard(count, count)


# -- batches --------------------------------------------------------------------------------
def test_batches_are_whole_columns_read_in_one_go(ds: Any) -> None:
    batches = list(catalog.pipeline(ds).batch(64))
    assert [len(b["label"]) for b in batches] == [64, 64, 64, 8]
    first = batches[0]
    assert first["image"].shape == (64, 28, 28, 1) and first["image"].dtype == np.uint8
    assert first["label"].dtype == np.int64 and first["image"].flags.c_contiguous
    images = np.concatenate([b["image"] for b in batches])
    np.testing.assert_array_equal(images[..., 0], pattern_images(COUNT))
    np.testing.assert_array_equal(
        np.concatenate([b["label"] for b in batches]), pattern_labels(COUNT)
    )
    dropped = catalog.pipeline(ds).batch(64, drop_remainder=True)
    assert [len(b["label"]) for b in dropped] == [64] * 3
    assert catalog.pipeline(ds).batch(64).batches_per_epoch() == 4
    assert dropped.batches_per_epoch() == 3
    assert catalog.pipeline(ds).shard(1, 3).batch(64, True).batches_per_epoch() == 1
    assert catalog.pipeline(ds).filter(bool).batch(64).batches_per_epoch() is None


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(0, 300),
    size=st.one_of(st.none(), st.integers(1, 70)),
    drop=st.booleans(),
    shard=st.integers(1, 4).flatmap(lambda c: st.tuples(st.integers(0, c - 1), st.just(c))),
    shard_drop=st.booleans(),
    epochs=st.integers(1, 3),
    shuffled=st.booleans(),
)
def test_len_is_what_one_iteration_gives(
    n: int,
    size: int | None,
    drop: bool,
    shard: tuple[int, int],
    shard_drop: bool,
    epochs: int,
    shuffled: bool,
) -> None:
    p = catalog.pipeline(np.arange(n)).shard(*shard, drop_remainder=shard_drop).repeat(epochs)
    p = p.shuffle(3) if shuffled else p
    p = p.batch(size, drop_remainder=drop) if size is not None else p
    assert len(p) == len(list(p))
    assert p  # truthy even when empty: `if pipeline` never asks for a length


def test_len_of_a_pipeline_that_repeats_forever_or_filters_is_a_type_error() -> None:
    forever = catalog.pipeline(np.arange(10)).repeat().batch(4)
    with pytest.raises(TypeError, match="repeats forever"):
        len(forever)
    assert forever.batches_per_epoch() == 3 and forever
    with pytest.raises(TypeError, match="filters examples"):
        len(catalog.pipeline(np.arange(10)).filter(bool).batch(4))
    assert len(list(catalog.pipeline(np.arange(10)).filter(bool))) == 9  # list() still works


def test_read_batch_equals_getitems(ds: Any) -> None:
    rows = [5, 0, 199, 17, 17]
    batch = ds.read_batch(rows)
    examples = ds.__getitems__(rows)
    np.testing.assert_array_equal(batch["image"], np.stack([e["image"] for e in examples]))
    assert batch["label"].tolist() == [e["label"] for e in examples]
    view = ds[10:20]
    np.testing.assert_array_equal(
        view.read_batch([0, 9])["image"], ds.read_batch([10, 19])["image"]
    )


def test_shuffle_repeat_gives_a_new_permutation_each_epoch(ds: Any) -> None:
    p = catalog.pipeline(ds).shuffle(seed=3).repeat(2).batch(50)
    order = [i for b in p for i in ids(b["image"])]
    first, second = order[:COUNT], order[COUNT:]
    assert sorted(first) == sorted(second) == list(range(COUNT))
    assert first != second and first != list(range(COUNT))
    again = [i for b in p for i in ids(b["image"])]
    assert again == order  # the same seed, the same order


def test_ragged_values_are_lists_or_padded() -> None:
    source = [{"tokens": np.arange(n), "name": f"e{n}", "score": n / 2} for n in range(6)]
    (batch,) = catalog.pipeline(source).batch(6)
    assert isinstance(batch["tokens"], list) and [len(t) for t in batch["tokens"]] == list(range(6))
    assert batch["name"] == [f"e{n}" for n in range(6)]
    assert batch["score"].dtype == np.float64
    (padded,) = catalog.pipeline(source).batch(6, pad={"tokens": -1})
    assert padded["tokens"].shape == (6, 5)
    assert padded["tokens"][2].tolist() == [0, 1, -1, -1, -1]


# -- map, filter, cache ------------------------------------------------------------------------
def test_map_filter_with_per_example_randomness(ds: Any) -> None:
    p = catalog.pipeline(ds).shuffle(9).repeat(2).map(flip_and_tag, with_rng=True)
    p = p.filter(not_label_3).batch(32)
    batches = list(p)
    labels = np.concatenate([b["label"] for b in batches])
    assert 3 not in labels.tolist()
    assert len(labels) == 2 * int((pattern_labels(COUNT) != 3).sum())
    assert [len(b["label"]) for b in batches].count(32) == len(batches) - 2  # short per epoch
    noise = np.concatenate([b["noise"] for b in batches])
    assert len(set(noise.tolist())) == len(noise)  # every (example, epoch) its own draws
    assert_same(batches, list(p))


def test_cache_keeps_the_first_epoch(ds: Any) -> None:
    calls: list[int] = []

    def expensive(example: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        calls.append(int(example["label"]))
        return {"label": example["label"], "draw": rng.random()}

    p = catalog.pipeline(ds).shuffle(1).repeat(3).map(expensive, with_rng=True).cache()
    batches = list(p.batch(40))
    assert len(calls) == COUNT  # computed once, in the first epoch
    draws = [np.concatenate([b["draw"] for b in batches[e * 5 : (e + 1) * 5]]) for e in range(3)]
    assert sorted(draws[0].tolist()) == sorted(draws[2].tolist())  # the same cached values
    assert draws[0].tolist() != draws[1].tolist()  # in a new order
    resumed = p.batch(40).iterator({"unit": 7, "skip": 0, "batch": 2})
    assert_same(list(resumed), batches[7:])  # an empty cache recomputes the same values


def test_cache_computes_each_example_once_when_threads_overlap_epochs() -> None:
    """Two threads computing, at the same time, a unit of epoch 0 and the unit of epoch 1 that
    holds the same examples (what tuned threads do at an epoch's end): each cached example is
    computed by one of them, the other waits for it."""
    calls: list[int] = []
    started = threading.Barrier(2)

    def slow(example: int) -> int:
        calls.append(example)
        time.sleep(0.01)  # both threads are inside the cache at once
        return example * 10

    plan = catalog.pipeline(list(range(40))).repeat(2).map(slow).cache().batch(40).plan()

    def unit(number: int) -> Any:
        started.wait()
        return plan.compute(number)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        blocks = list(pool.map(unit, [0, 1]))
    assert sorted(calls) == list(range(40))
    assert [b.struct.tolist() for b in blocks] == [[i * 10 for i in range(40)]] * 2


def test_map_error_names_the_example(ds: Any) -> None:
    def fail_on_7(example: dict[str, Any]) -> dict[str, Any]:
        if ids(example["image"][None])[0] == 7:
            raise ValueError("bad pixel")
        return example

    for workers in (0, 2):
        it = iter(catalog.pipeline(ds).map(fail_on_7).batch(16).prefetch(workers))
        with pytest.raises(
            catalog.PipelineError, match="example 7 of epoch 0: ValueError: bad pixel"
        ) as info:
            list(it)
        assert info.value.index == 7
        assert isinstance(info.value.__cause__, ValueError)


# -- determinism and resume ----------------------------------------------------------------
def augmented(ds: Any) -> catalog.Pipeline:
    p = catalog.pipeline(ds).shuffle(11).repeat(2).map(flip_and_tag, with_rng=True)
    return p.filter(not_label_3).batch(24)


PREFETCH = [(0, "thread"), (1, "thread"), (3, "thread")]


def test_same_batches_for_every_worker_count(ds: Any) -> None:
    plain = catalog.pipeline(ds).shuffle(4).repeat(2).batch(48)
    for make in (lambda: plain, lambda: augmented(ds)):
        expected = list(make())
        for workers, kind in PREFETCH:
            assert_same(list(make().prefetch(workers, kind)), expected)


@pytest.mark.parametrize("k", [0, 1, 4, 9, 16])
def test_resume_continues_exactly(ds: Any, k: int) -> None:
    full = list(augmented(ds))
    assert len(full) == 16
    for (w1, kind1), (w2, kind2) in [(PREFETCH[0], PREFETCH[2]), (PREFETCH[2], PREFETCH[1])]:
        it = augmented(ds).prefetch(w1, kind1).iterator()
        head = [next(it) for _ in range(k)]
        state = json.loads(json.dumps(it.state_dict()))
        it.close()
        assert all(type(v) is int for v in state.values()) and len(state) == 3
        rest = list(augmented(ds).prefetch(w2, kind2).iterator(state))
        assert_same(head + rest, full)


def test_resume_of_examples_and_aligned_batches(ds: Any) -> None:
    examples = catalog.pipeline(ds).shuffle(2)
    full = [e["label"] for e in examples]
    it = examples.iterator()
    head = [next(it)["label"] for _ in range(130)]
    assert head + [e["label"] for e in examples.iterator(it.state_dict())] == full
    batched = catalog.pipeline(ds).shuffle(2).repeat(3).batch(64, drop_remainder=True)
    full_batches = list(batched)
    assert len(full_batches) == 9
    it = batched.prefetch(2).iterator()
    head_batches = [next(it) for _ in range(4)]
    assert_same(head_batches + list(batched.iterator(it.state_dict())), full_batches)


def test_bad_state_is_refused(ds: Any) -> None:
    with pytest.raises(ValueError, match="state_dict"):
        catalog.pipeline(ds).iterator({"unit": -1, "skip": 0, "batch": 0})


# -- mix and the rules of the chain ----------------------------------------------------------
def test_mix_interleaves_by_weight_and_resumes() -> None:
    a = catalog.pipeline(np.zeros(1000, np.int64)).repeat()
    b = catalog.pipeline(np.ones(1000, np.int64)).repeat()
    mixed = catalog.mix([a, b], weights=[3, 1], seed=5)
    it = mixed.iterator()
    values = [int(next(it)) for _ in range(4000)]
    assert 0.7 < values.count(0) / 4000 < 0.8
    state = json.loads(json.dumps(it.state_dict()))
    after = [int(next(it)) for _ in range(50)]
    resumed = mixed.iterator(state)
    assert [int(next(resumed)) for _ in range(50)] == after


def test_chain_rules_are_explained() -> None:
    p = catalog.pipeline(list(range(10))).batch(2)
    with pytest.raises(ValueError, match="before batch"):
        p.shuffle(0)
    with pytest.raises(ValueError, match="map_batch"):
        p.map(lambda x: x)
    with pytest.raises(ValueError, match="needs batch"):
        catalog.pipeline([1]).map_batch(lambda x: x)
    with pytest.raises(TypeError, match="random-access source"):
        catalog.pipeline(iter([1]))  # type: ignore[arg-type]
    doubled = p.map_batch(lambda b: b * 2)
    assert [b.tolist() for b in doubled] == [[0, 2], [4, 6], [8, 10], [12, 14], [16, 18]]
