"""Split specs resolve exactly as TensorFlow Datasets 4.9 resolves them.

Each table row names the TFDS test or guide line it mirrors: `splits_test.py` (ReadInstructionTest,
SplitsTest), `subsplits_utils_test.py` (even splits) and the split guide (docs/splits.md).
Resolution is checked here against split sizes; `tests/read/test_split_sources.py` checks the
examples data sources give for the same specs, through a builder dataset and a TFDS directory.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import catalog
from catalog import DatasetInfo, FeaturesDict, ReadInstruction, ShardInfo, SplitError, SplitInfo
from catalog.features import Scalar
from catalog.info.splits import Split, check_split_names, even_splits, resolve

#: ReadInstructionTest.setUp: train 200, test 101, validation 30, dev-train in two shards of 5.
SIZES: dict[str, int | tuple[int, ...]] = {
    "train": (200,),
    "test": (101,),
    "validation": (30,),
    "dev-train": (5, 5),
}


@pytest.mark.parametrize(
    ("spec", "expected", "mirrors"),
    [
        ("train", [("train", 0, 200)], "test_valid: simple split"),
        ("train+test", [("train", 0, 200), ("test", 0, 101)], "test_valid: addition"),
        ("train[0:0]", [("train", 0, 0)], "test_valid: absolute slicing"),
        ("train[:10]", [("train", 0, 10)], "test_valid"),
        ("train[0:10]", [("train", 0, 10)], "test_valid"),
        ("train[-10:]", [("train", 190, 200)], "test_valid"),
        ("train[-100:-50]", [("train", 100, 150)], "test_valid"),
        ("train[-10:200]", [("train", 190, 200)], "test_valid"),
        ("train[10:-10]", [("train", 10, 190)], "test_valid"),
        ("train[42:99]", [("train", 42, 99)], "test_valid"),
        ("train[:10%]", [("train", 0, 20)], "test_valid: percent, closest rounding"),
        ("train[90%:]", [("train", 180, 200)], "test_valid"),
        ("train[-1%:]", [("train", 198, 200)], "test_valid"),
        ("test[:99%]", [("test", 0, 100)], "test_valid"),
        ("test[100%:]", [("test", 101, 101)], "test_valid: no overlap"),
        ("validation[:1%]", [("validation", 0, 0)], "test_valid: empty with closest rounding"),
        ("train[4_2:9_9]", [("train", 42, 99)], "test_valid: new integer syntax"),
        ("train[:1_0%]", [("train", 0, 20)], "test_valid: new integer syntax"),
        ("dev-train", [("dev-train", 0, 10)], "test_valid: '-' in a split name"),
        ("dev-train[1shard]", [("dev-train", 5, 10)], "split guide: shard units"),
        ("dev-train[:1shard]", [("dev-train", 0, 5)], "split guide: shard units"),
        ("dev-train[-1shard:]", [("dev-train", 5, 10)], "splits.py: negative shard bound"),
        ("dev-train[:0shard]", [("dev-train", 0, 10)], "splits.py: an end of 0 shards"),
        ("validation[10%:20]", [("validation", 3, 6)], "splits.py: one unit for both bounds"),
        (
            "all",
            [("train", 0, 200), ("test", 0, 101), ("validation", 0, 30), ("dev-train", 0, 10)],
            "SplitsTest.test_sub_split_num_examples: 'all'",
        ),
        ("train[:10] + test[-1:]", [("train", 0, 10), ("test", 100, 101)], "spaces around +"),
    ],
)
def test_specs_resolve_as_tfds_does(spec: str, expected: list, mirrors: str) -> None:
    got = [(name, rows.start, rows.stop) for name, rows in resolve(spec, SIZES)]
    assert got == expected, mirrors


@pytest.mark.parametrize(
    ("size", "spec", "stop"),
    [
        (7, "test[:-50%]", 3),  # the case: round(-3.5) = -4 (halves to even), 7 - 4
        (7, "test[:50%]", 4),  # round(3.5) = 4
        (5, "test[:50%]", 2),  # round(2.5) = 2: halves to even, not up
        (3, "test[:50%]", 2),  # round(1.5) = 2
        (30, "test[:35%]", 10),  # round(10.5) = 10
    ],
)
def test_percent_bounds_round_halves_to_even(size: int, spec: str, stop: int) -> None:
    assert resolve(spec, {"test": size}) == [("test", range(stop))]


@pytest.mark.parametrize(
    ("instruction", "expected", "mirrors"),
    [
        (ReadInstruction("train", to=20, unit="%", rounding="pct1_dropremainder"), (0, 40),
         "test_valid: pct1_dropremainder"),
        (ReadInstruction("test", to=100, unit="%", rounding="pct1_dropremainder"), (0, 100),
         "test_valid: 101 examples"),
        (ReadInstruction("test", to=99, unit="%", rounding="pct1_dropremainder"), (0, 99),
         "test_valid: no overlap using pct1_dropremainder"),
        (ReadInstruction("test", from_=100, unit="%", rounding="pct1_dropremainder"), (100, 101),
         "test_valid: no overlap using pct1_dropremainder"),
        (ReadInstruction("train", from_=10, to=20), (10, 20), "ReadInstruction in examples"),
        (ReadInstruction("dev-train", from_=1, unit="shard"), (5, 10), "shard unit"),
    ],
)  # fmt: skip
def test_read_instructions(instruction: ReadInstruction, expected: tuple, mirrors: str) -> None:
    [(_, rows)] = instruction.to_absolute(SIZES)
    assert (rows.start, rows.stop) == expected, mirrors


@pytest.mark.parametrize(
    ("spec", "message", "mirrors"),
    [
        ("validation[:250%:2]", "bad split spec", "test_invalid_spec: invalid format"),
        ("imaginary", "no split 'imaginary'", "test_invalid_spec: unexisting split"),
        ("validation[:31]", "outside split 'validation' of 30", "test_invalid_spec: abs bounds"),
        ("validation[-31:]", "outside split 'validation' of 30", "test_invalid_spec: abs bounds"),
        ("validation[:250%]", r"percent bounds must be in \[-100, 100\]", "test_invalid_spec"),
        ("validation[-101%:]", r"percent bounds must be in \[-100, 100\]", "test_invalid_spec"),
        ("train[5]", "only shards can be picked by one index", "splits.py: one index"),
        ("train[:]", "bad split spec", "splits.py: at least one bound"),
        ("all[:10%]", "'all' takes no slice", "splits.py: 'all' does not support slices"),
        (" train", "bad split spec", "_SUB_SPEC_RE: no leading space"),
        ("train[10.5:]", "must be a whole number", "_SLICE_RE: examples are whole numbers"),
        ("train[1:2:3]", "bad split spec", "_SUB_SPEC_RE: no step"),
        ("train++test", "bad split spec", "_ADDITION_SEP_RE: an empty part"),
        ("", "bad split spec", "an empty spec"),
    ],
)
def test_what_tfds_refuses_is_refused(spec: str, message: str, mirrors: str) -> None:
    with pytest.raises(SplitError, match=message):
        resolve(spec, SIZES)
    with pytest.raises(ValueError, match=message):  # TFDS users catch ValueError
        resolve(spec, SIZES)


def test_instruction_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="rounding must be"):  # test_invalid_rounding
        ReadInstruction("test", unit="%", rounding="unexisting")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unit must be"):  # test_invalid_unit
        ReadInstruction("test", unit="kg")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fewer than 100"):  # pct1_dropremainder, < 100
        ReadInstruction("validation", to=99, unit="%", rounding="pct1_dropremainder").to_absolute(
            SIZES
        )


def test_unknown_names_are_key_errors_and_suggest_the_closest() -> None:
    with pytest.raises(
        KeyError, match="no split 'trian' .*: did you mean 'train'\\? The splits are train, test"
    ):
        check_split_names("trian[:10]", list(SIZES))
    assert isinstance(SplitError("x"), KeyError) and isinstance(SplitError("x"), ValueError)


def test_instructions_add_and_print_as_their_spec() -> None:
    """test_add: instructions and strings add up, in order."""
    ri = ReadInstruction.from_spec("train[10:20]") + "test[10:20]" + ReadInstruction("train", 1, 5)
    assert str(ri) == "train[10:20]+test[10:20]+train[1:5]"
    assert [(n, r.start, r.stop) for n, r in ri.to_absolute(SIZES)] == [
        ("train", 10, 20),
        ("test", 10, 20),
        ("train", 1, 5),
    ]
    assert resolve(str(ri), SIZES) == ri.to_absolute(SIZES)  # the text parses back
    assert repr(ReadInstruction("train", to=12.5, unit="%")) == "ReadInstruction('train[:12.5%]')"
    assert Split.from_spec(ri) is ri


@pytest.mark.parametrize(
    ("num_examples", "n", "drop_remainder", "expected"),
    [  # subsplits_utils_test.test_even_splits, row for row
        (9, 1, True, [(0, 9)]),
        (9, 2, True, [(0, 4), (4, 8)]),
        (9, 3, True, [(0, 3), (3, 6), (6, 9)]),
        (9, 4, True, [(0, 2), (2, 4), (4, 6), (6, 8)]),
        (11, 2, True, [(0, 5), (5, 10)]),
        (11, 3, True, [(0, 3), (3, 6), (6, 9)]),
        (9, 1, False, [(0, 9)]),
        (9, 2, False, [(0, 5), (5, 9)]),
        (9, 3, False, [(0, 3), (3, 6), (6, 9)]),
        (9, 4, False, [(0, 3), (3, 5), (5, 7), (7, 9)]),
        (11, 3, False, [(0, 4), (4, 8), (8, 11)]),
        (11, 4, False, [(0, 3), (3, 6), (6, 9), (9, 11)]),
    ],
)
def test_even_splits_as_tfds(num_examples: int, n: int, drop_remainder: bool, expected) -> None:
    parts = even_splits("train", n, drop_remainder=drop_remainder)
    got = [resolve(p, {"train": num_examples}) for p in parts]
    assert [[(r.start, r.stop) for _, r in pieces] for pieces in got] == [[e] for e in expected]


def test_even_splits_of_a_sum_cut_every_piece() -> None:
    """test_even_splits_subsplit and the issue's even_splits('train[:50%]+test', n=3)."""
    sizes = {"train": (2, 3, 2, 3), "test": (8,)}
    parts = even_splits("train+test[50%:]", 3)
    expected = ["train[:4]+test[4:6]", "train[4:7]+test[6:7]", "train[7:]+test[7:8]"]
    assert [resolve(p, sizes) for p in parts] == [resolve(e, sizes) for e in expected]


def test_even_splits_add_and_nest() -> None:
    """test_even_splits_add: a part plus a spec; an even split of an even split."""
    sizes = {"train": (2, 3, 2, 3), "test": (8,), "validation": (8,)}
    part = even_splits("train", 3, drop_remainder=True)[0] + "test"
    assert resolve(part, sizes) == resolve("train[:3]+test", sizes)
    nested = even_splits(even_splits("validation", n=2)[1], n=2)
    assert resolve(nested[0], sizes) == resolve("validation[4:6]", sizes)
    assert resolve(nested[1], sizes) == resolve("validation[6:8]", sizes)
    with pytest.raises(ValueError, match="positive number of parts"):
        even_splits("train", 0)


@given(st.integers(0, 3000), st.integers(1, 50), st.booleans())
def test_even_splits_are_disjoint_and_cover(count: int, n: int, drop: bool) -> None:
    rows = [r for p in even_splits("train", n, drop_remainder=drop)
            for _, r in resolve(p, {"train": count})]  # fmt: skip
    covered = [i for r in rows for i in r]
    assert covered == sorted(set(covered))  # disjoint, in order
    assert covered == list(range(count - (count % n if drop else 0)))
    assert max(map(len, rows)) - min(map(len, rows)) <= (0 if drop else 1)


@given(st.integers(0, 5000), st.integers(-100, 100))
def test_percent_halves_never_overlap_or_leave_a_gap(count: int, k: int) -> None:
    [(_, head)] = resolve(f"train[:{k}%]", {"train": count})
    [(_, tail)] = resolve(f"train[{k}%:]", {"train": count})
    assert list(head) + list(tail) == list(range(count))


def test_info_splits_answer_a_spec() -> None:
    """SplitsTest.test_sub_split_num_examples / file_instructions, on a 20 + 10 dataset."""
    features = FeaturesDict({"x": Scalar("int64")})
    shards = {"train": ((0, 12), (1, 8)), "test": ((0, 10),)}
    info = DatasetInfo(
        "dummy",
        "1.0.0",
        features,
        {
            name: SplitInfo(name, sum(n for _, n in s), tuple(
                ShardInfo(f"dummy-{name}.array_record-{i:05d}-of-{len(s):05d}", n, 0, "")
                for i, n in s))
            for name, s in shards.items()
        },
    )  # fmt: skip
    s = info.splits
    assert s["train[75%:]"].num_examples == 5 and s["train[:75%]"].num_examples == 15
    assert s["test[75%:]"].num_examples == 2 and s["test[:75%]"].num_examples == 8
    assert s["all"].num_examples == s.total_num_examples == 30
    sub = s["train[10:15]"]
    assert sub.num_shards == 2 and sub.shard_lengths == [2, 3]
    assert [(f.skip, f.take) for f in sub.file_instructions] == [(10, 2), (0, 3)]
    assert s["train[1shard]"].num_examples == 8
    assert s[ReadInstruction("test", to=3)].num_examples == 3
    assert s["train"] is s.get("train")  # a name is still the SplitInfo itself
    with pytest.raises(ValueError, match="no split 'unknown'"):  # test_sub_split_wrong_key
        s["unknown"]


def test_even_splits_is_the_public_one() -> None:
    assert catalog.even_splits is even_splits and catalog.ReadInstruction is ReadInstruction


@pytest.mark.parametrize(
    ("count", "drop_remainder", "expected"),
    [  # subsplits_utils: split_for_jax_process is even_splits(split, count)[index]
        (3, False, [(0, 4), (4, 8), (8, 11)]),
        (3, True, [(0, 3), (3, 6), (6, 9)]),
        (1, False, [(0, 11)]),
        (12, False, [(i, i + 1) for i in range(11)] + [(11, 11)]),  # more processes than rows
    ],
)
def test_split_for_jax_process_as_tfds(count: int, drop_remainder: bool, expected) -> None:
    got = []
    for index in range(count):
        part = catalog.split_for_jax_process(
            "train", process_index=index, process_count=count, drop_remainder=drop_remainder
        )
        assert str(part) == str(even_splits("train", count, drop_remainder=drop_remainder)[index])
        [(_, rows)] = resolve(part, {"train": 11})
        got.append((rows.start, rows.stop))
    assert got == expected
    summed = catalog.split_for_jax_process("train[:4]+test", process_index=1, process_count=2)
    sizes = {"train": 11, "test": 6}
    assert resolve(summed, sizes) == resolve("train[2:4]+test[3:]", sizes)


@pytest.mark.parametrize("index", [-1, 2, 1.0, True])
def test_split_for_jax_process_refuses_an_index_out_of_range(index: object) -> None:
    with pytest.raises(SplitError, match=r"process_index must be an int in 0\.\.1"):
        catalog.split_for_jax_process("train", process_index=index, process_count=2)  # type: ignore[arg-type]


def test_split_for_jax_process_asks_jax_for_what_is_not_given() -> None:
    pytest.importorskip("jax")
    # In a child: asking JAX starts its backend's threads, and a later fork in this test
    # process (the fork-safety tests) would then warn that JAX is multithreaded.
    program = (
        "import catalog, jax\n"
        "from catalog.info.splits import resolve\n"
        "part = catalog.split_for_jax_process('train', process_count=1)\n"
        "print(jax.process_index(), resolve(part, {'train': 5}))\n"
    )
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[-2] == "0 [('train', range(0, 5))]"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [  # TFDS's _rel_to_abs_instr sums the lengths of the first s shards: past the last, the end
        ("dev-train[:2shard]", (0, 10)),
        ("dev-train[:5shard]", (0, 10)),
        ("dev-train[1shard:9shard]", (5, 10)),
        ("dev-train[2shard]", (10, 10)),  # nothing: TFDS refuses to read it, catalog reads none
        ("train[:2shard]", (0, 200)),  # one shard: the whole split, as TFDS gives it
        ("train[0:0]", (0, 0)),
    ],
)
def test_shard_bounds_past_the_last_shard_end_the_split_as_in_tfds(
    spec: str, expected: tuple[int, int]
) -> None:
    [(_, rows)] = resolve(spec, SIZES)
    assert (rows.start, rows.stop) == expected
