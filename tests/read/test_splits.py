"""Split specs: the grammar, percent rounding, even splits, and data sources over them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import catalog
from catalog import SplitError
from catalog.read.rows import compose
from catalog.read.splits import even_splits, parse, resolve
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from conftest import write_builder

COUNTS = {"train": 100, "test": 30}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("train", [("train", range(100))]),
        ("train[:10%]", [("train", range(10))]),
        ("train[10:20]", [("train", range(10, 20))]),
        ("train[-10:]", [("train", range(90, 100))]),
        ("train[25%:75%]", [("train", range(25, 75))]),
        ("train[:-1%]", [("train", range(99))]),
        ("train[95:200]", [("train", range(95, 100))]),
        ("train+test", [("train", range(100)), ("test", range(30))]),
        ("train[:50%] + test[:10]", [("train", range(50)), ("test", range(10))]),
        ("test[:50%]", [("test", range(15))]),
        ("test[:33.5%]", [("test", range(10))]),  # 10.05 -> 10
        ("test[:35%]", [("test", range(11))]),  # 10.5 rounds half up -> 11
    ],
)
def test_specs_resolve_to_ranges(spec: str, expected: list[tuple[str, range]]) -> None:
    assert resolve(spec, COUNTS) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "bad split spec ''"),
        ("train[:10", r"bad split spec 'train\[:10' \(at 'train\[:10'\); valid forms: 'train'"),
        ("train[1.5:]", "1.5 must be an integer"),
        ("train[:150%]", "150% is not between -100% and 100%"),
        ("train++test", "bad split spec 'train\\+\\+test'"),
        ("train[::2]", "valid forms"),
    ],
)
def test_bad_specs_name_the_spec_and_the_valid_forms(spec: str, message: str) -> None:
    with pytest.raises(SplitError, match=message):
        parse(spec)


def test_unknown_split_in_a_spec() -> None:
    with pytest.raises(SplitError, match="no split 'valid'; the splits are train, test"):
        resolve("train+valid[:5]", COUNTS)


@given(st.integers(0, 5000), st.integers(1, 64))
def test_even_splits_cover_every_example_once(count: int, n: int) -> None:
    parts = [resolve(spec, {"train": count})[0][1] for spec in even_splits("train", n)]
    covered = [i for part in parts for i in part]
    assert covered == list(range(count))
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= 1


def test_even_splits_arguments() -> None:
    assert even_splits("train", 1) == ["train[0%:100%]"]
    with pytest.raises(SplitError, match="one split name"):
        even_splits("train[:10%]", 2)
    with pytest.raises(ValueError, match="positive number of parts"):
        even_splits("train", 0)


pieces_strategy = st.lists(
    st.builds(
        lambda a, n, s: range(a, a + n * s, s),
        st.integers(0, 50),
        st.integers(0, 12),
        st.sampled_from([1, 2, 3, -1, -2]),
    ),
    min_size=1,
    max_size=4,
)


@given(pieces_strategy, st.integers(-60, 60) | st.none(), st.integers(-60, 60) | st.none(),
       st.sampled_from([None, 1, 2, 3, -1, -2, -5]))  # fmt: skip
def test_compose_matches_slicing_a_list(
    pieces: list[range], a: int | None, b: int | None, step: int | None
) -> None:
    flat = [i for p in pieces for i in p]
    rows = range(len(flat))[slice(a, b, step)]
    composed = [i for p in compose(pieces, rows) for i in p]
    assert composed == flat[a:b:step]


@pytest.fixture(scope="module")
def two_splits(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("splits")
    files = {}
    for split, seed in (("train", 0), ("test", 50)):
        count = COUNTS[split]
        write_idx(tmp / f"{split}-i.gz", pattern_images(count, seed=seed))
        write_idx(tmp / f"{split}-l.gz", pattern_labels(count, seed=seed))
        files[f"{split}-i.gz"] = (tmp / f"{split}-i.gz").read_bytes()
        files[f"{split}-l.gz"] = (tmp / f"{split}-l.gz").read_bytes()
    with LoopbackServer() as server:
        folder = write_builder(tmp / "two", server, files, name="two", splits={
            s: (f"{s}-i.gz", f"{s}-l.gz", n) for s, n in COUNTS.items()})  # fmt: skip
        catalog.builder(folder, data_dir=tmp / "data").download_and_prepare()
    return folder, tmp / "data"


def expected_images(spec: str) -> np.ndarray:
    seeds = {"train": 0, "test": 50}
    parts = [pattern_images(COUNTS[s], seed=seeds[s])[r] for s, r in resolve(spec, COUNTS)]
    return np.concatenate(parts)[..., None]


@pytest.mark.parametrize(
    "spec",
    [
        "train[:10%]",
        "train[-7:]",
        "test",
        "train+test",
        "train[:50%]+test[:10]",
        "test[90%:]+train[3:5]",
    ],
)
def test_data_source_over_a_spec(two_splits: tuple[Path, Path], spec: str) -> None:
    folder, data_dir = two_splits
    ds = catalog.data_source(folder, split=spec, data_dir=data_dir, download=False)
    want = expected_images(spec)
    assert len(ds) == len(want) and ds.split == spec
    np.testing.assert_array_equal(np.stack([e["image"] for e in ds]), want)  # iteration
    np.testing.assert_array_equal(ds[len(ds) - 1]["image"], want[-1])  # random access
    np.testing.assert_array_equal(ds[-len(ds)]["image"], want[0])
    picks = [0, len(ds) // 2, len(ds) - 1]
    np.testing.assert_array_equal(np.stack([e["image"] for e in ds[picks]]), want[picks])
    view = ds[1::3]
    np.testing.assert_array_equal(np.stack([e["image"] for e in view]), want[1::3])


def test_bad_spec_fails_before_any_work(two_splits: tuple[Path, Path], tmp_path: Path) -> None:
    folder, _ = two_splits
    with pytest.raises(SplitError, match="two has no split 'validation'"):
        catalog.data_source(folder, split="train+validation", data_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # nothing downloaded or prepared


def test_even_splits_feed_data_sources(two_splits: tuple[Path, Path]) -> None:
    folder, data_dir = two_splits
    parts = [
        catalog.data_source(folder, split=s, data_dir=data_dir)
        for s in catalog.even_splits("train", 3)
    ]
    assert [len(p) for p in parts] == [33, 34, 33]
    labels = [e["label"] for p in parts for e in p]
    assert labels == pattern_labels(100).tolist()
