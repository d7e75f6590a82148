"""The per-example generators of ``map(fn, with_rng=True)``: NumPy's own
``default_rng([seed, epoch, index, op])``, made a unit at a time (catalog.loader.rngs)."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

import catalog
from catalog.loader.rngs import generators


def draws(rng: np.random.Generator) -> list[float]:
    return [*rng.integers(0, 2**62, 3).tolist(), rng.random(), float(rng.normal())]


def reference(seed: int, epoch: int, index: int, op: int) -> list[float]:
    return draws(np.random.default_rng([seed, epoch, index, op]))


@pytest.mark.parametrize("trial", range(6))
def test_every_generator_draws_what_numpys_default_rng_of_the_same_numbers_draws(
    trial: int,
) -> None:
    pick = random.Random(trial)
    big = [0, 1, 2**31, 2**32 - 1, 2**32, 2**63 + 5, 2**100 + 7]  # 1, 2, 3 and 4 words
    for _ in range(40):
        seed = pick.choice([*big, pick.randrange(2**32), pick.randrange(2**80)])
        epoch = pick.choice([0, 1, pick.randrange(10**4), 2**40])
        op = pick.choice([0, 1, 5, 2**33])
        indices = [pick.choice([0, 1, pick.randrange(10**7), 2**32 - 1]) for _ in range(17)]
        got = [draws(g) for g in generators(seed, epoch, indices, op)]
        assert got == [reference(seed, epoch, i, op) for i in indices], (seed, epoch, op)


def test_an_index_of_more_than_32_bits_and_an_empty_unit() -> None:
    indices = [3, 2**32, 2**45 + 1]
    got = [draws(g) for g in generators(7, 2, indices, 1)]
    assert got == [reference(7, 2, i, 1) for i in indices]
    assert generators(7, 2, [], 1) == []


def test_a_negative_number_is_numpys_own_error() -> None:
    with pytest.raises(ValueError, match="negative"):
        generators(-1, 0, [0], 0)


def test_spawn_pickle_and_the_seed_sequence_behave_as_numpys() -> None:
    ours = generators(5, 1, [3], 2)[0]
    theirs = np.random.default_rng([5, 1, 3, 2])
    assert [draws(g) for g in ours.spawn(2)] == [draws(g) for g in theirs.spawn(2)]
    seq = ours.bit_generator.seed_seq
    assert seq.entropy == [5, 1, 3, 2]
    want = theirs.bit_generator.seed_seq.generate_state(3)
    assert seq.generate_state(3).tolist() == want.tolist()
    ours.random()
    theirs.random()
    again = pickle.loads(pickle.dumps(ours))
    assert draws(again) == draws(theirs)


def keep_random(example: np.ndarray, rng: np.random.Generator) -> dict[str, object]:
    return {"x": example, "r": rng.integers(0, 2**31, 2)}


def test_a_pipeline_gives_each_example_the_generator_of_seed_epoch_index_and_position() -> None:
    source = np.arange(40)
    p = (
        catalog.pipeline(source)
        .shuffle(3)
        .repeat(2)
        .map(lambda x: x)  # position 0: no generator
        .filter(lambda x: x % 7 != 0)  # position 1
        .map(keep_random, with_rng=True)  # position 2
        .batch(8)
        .prefetch(0)
    )
    seen = 0
    epoch_of: dict[int, int] = {}
    for batch in p:
        for x, r in zip(batch["x"].tolist(), batch["r"].tolist(), strict=True):
            epoch = epoch_of.get(x, -1) + 1
            epoch_of[x] = epoch
            want = np.random.default_rng([3, epoch, x, 2]).integers(0, 2**31, 2).tolist()
            assert r == want
            seen += 1
    assert seen == 2 * 34  # 6 of 0..39 are multiples of 7
