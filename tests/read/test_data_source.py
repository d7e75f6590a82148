"""DataSource: the Sequence contract, pickling, threads, fork, views, errors."""

from __future__ import annotations

import multiprocessing
import pickle
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog import DataSource, NotPreparedError, SplitError
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels

from conftest import idx_builder

COUNT = 2500  # more than one iteration chunk


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("ds")
    with LoopbackServer() as server:
        folder = idx_builder(tmp, server, COUNT)
        catalog.builder(folder, data_dir=tmp / "data").download_and_prepare()
    return folder, tmp / "data"


@pytest.fixture
def ds(prepared: tuple[Path, Path]) -> DataSource:
    folder, data_dir = prepared
    return catalog.data_source(folder, split="train", data_dir=data_dir, download=False)


IMAGES = pattern_images(COUNT)[..., None]
LABELS = pattern_labels(COUNT)


def check(example: dict, index: int) -> None:
    np.testing.assert_array_equal(example["image"], IMAGES[index])
    assert example["label"] == LABELS[index]


def test_len_index_negative_and_out_of_range(ds: DataSource) -> None:
    assert len(ds) == COUNT
    check(ds[0], 0)
    check(ds[-1], COUNT - 1)
    check(ds[np.int64(7)], 7)
    with pytest.raises(
        IndexError,
        match=f"index {COUNT} is out of range for tiny split 'train' with {COUNT} examples",
    ):
        ds[COUNT]
    with pytest.raises(IndexError):
        ds[-COUNT - 1]
    with pytest.raises(TypeError, match="indices must be ints"):
        ds["a"]  # type: ignore[call-overload]


def test_lists_arrays_and_getitems(ds: DataSource) -> None:
    picks = [5, 0, 2499, -2, 5]
    for batch in (ds[picks], ds[np.array(picks)], ds.__getitems__(picks), ds._getitems(picks)):
        assert len(batch) == len(picks)
        for example, i in zip(batch, picks, strict=True):
            check(example, i % COUNT)
    with pytest.raises(IndexError):
        ds[[0, COUNT]]


def test_iteration_is_complete_and_ordered(ds: DataSource) -> None:
    labels = [example["label"] for example in ds]
    assert labels == LABELS.tolist()


def test_slices_are_views(ds: DataSource) -> None:
    view = ds[10:1000:7]
    assert isinstance(view, DataSource) and len(view) == len(range(10, 1000, 7))
    check(view[0], 10)
    check(view[-1], range(10, 1000, 7)[-1])
    assert [e["label"] for e in view] == LABELS[10:1000:7].tolist()
    assert len(view[::2]) == len(range(10, 1000, 7)[::2])
    assert "split='train[10:1000:7]', num_examples=" in repr(view)
    backwards = ds[::-3]
    assert [e["label"] for e in backwards] == LABELS[::-3].tolist()
    assert [e["label"] for e in view[::-1]] == LABELS[10:1000:7][::-1].tolist()


def test_repr_and_metadata(ds: DataSource) -> None:
    text = repr(ds)
    assert text.startswith(
        "DataSource(name='tiny', version='1.0.0', split='train', num_examples=2500"
    )
    assert ds.split == "train" and ds.info.name == "tiny"
    assert ds.features["label"].num_classes == 10  # type: ignore[attr-defined]


def test_examples_are_writable_and_independent(ds: DataSource) -> None:
    a, b = ds[3], ds[3]
    a["image"][:] = 0
    check(b, 3)


def test_pickle_roundtrip_reopens_readers(ds: DataSource) -> None:
    ds[0]  # open the reader in this process first
    clone = pickle.loads(pickle.dumps(ds))
    check(clone[123], 123)
    assert len(pickle.dumps(ds)) < 10_000  # no data, no reader in the pickle


def test_many_threads_at_once(ds: DataSource) -> None:
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for i in rng.integers(0, COUNT, 300).tolist():
                check(ds[i], i)
            for example, i in zip(
                ds[list(range(seed, seed + 50))], range(seed, seed + 50), strict=True
            ):
                check(example, i)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def _read_in_child(ds: DataSource, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    queue.put([ds[i]["label"] for i in (0, 1, 2, COUNT - 1)])


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_works_in_forked_and_spawned_children(ds: DataSource, method: str) -> None:
    ds[0]  # a reader opened in the parent must not be reused by a forked child
    ctx = multiprocessing.get_context(method)
    queue = ctx.Queue()
    proc = ctx.Process(target=_read_in_child, args=(ds, queue))
    proc.start()
    got = queue.get(timeout=60)
    proc.join(timeout=60)
    assert proc.exitcode == 0
    assert got == [int(LABELS[i]) for i in (0, 1, 2, COUNT - 1)]
    queue.close()
    queue.join_thread()
    check(ds[1], 1)  # the parent's reader still works


def test_close_and_context_manager(ds: DataSource) -> None:
    with ds as source:
        check(source[9], 9)
    check(ds[9], 9)  # reopens lazily after close


def test_all_splits_and_unknown_split(prepared: tuple[Path, Path]) -> None:
    folder, data_dir = prepared
    sources = catalog.data_source(folder, data_dir=data_dir, download=False)
    assert list(sources) == ["train"]
    with pytest.raises(SplitError, match="tiny: no split 'validation' .*; the splits are train"):
        catalog.data_source(folder, split="validation", data_dir=data_dir)


def test_not_prepared_without_download(prepared: tuple[Path, Path], tmp_path: Path) -> None:
    folder, _ = prepared
    with pytest.raises(NotPreparedError, match="tiny 1.0.0 is not prepared in .*catalog prepare"):
        catalog.data_source(folder, data_dir=tmp_path, download=False)


def test_decoders_keep_stored_bytes_or_decode_otherwise(prepared: tuple[Path, Path]) -> None:
    folder, data_dir = prepared
    raw = catalog.data_source(folder, split="train", data_dir=data_dir, decoders={"image": False})
    example = raw[5]
    assert example["image"] == IMAGES[5].tobytes() and example["label"] == LABELS[5]
    assert [e["image"] for e in raw[[1, 2]]] == [IMAGES[1].tobytes(), IMAGES[2].tobytes()]
    sums = catalog.data_source(
        folder, split="train[:4]", data_dir=data_dir, decoders={"image": lambda data: sum(data)}
    )
    assert [e["image"] for e in sums] == [int(IMAGES[i].sum()) for i in range(4)]
    clone = pickle.loads(pickle.dumps(raw[:3]))  # options survive views and pickling
    assert clone[0]["image"] == IMAGES[0].tobytes()
    with pytest.raises(catalog.FeatureError, match="no feature 'pixels' to skip"):
        catalog.data_source(folder, split="train", data_dir=data_dir, decoders={"pixels": False})
    with pytest.raises(TypeError, match="must be False .* or a function"):
        catalog.data_source(folder, split="train", data_dir=data_dir, decoders={"image": True})  # type: ignore[dict-item]


def test_as_supervised_returns_input_target_tuples(
    prepared: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, data_dir = prepared
    with pytest.raises(SplitError, match="declares no supervised_keys"):
        catalog.data_source(folder, split="train", data_dir=data_dir, as_supervised=True)
    spec = (folder / "builder.yaml").read_text() + "supervised_keys: [image, label]\n"
    supervised = tmp_path / "supervised"
    supervised.mkdir()
    (supervised / "builder.yaml").write_text(spec)
    (supervised / "checksums.tsv").write_text((folder / "checksums.tsv").read_text())
    # Same name and version: the prepared copy in data_dir is found, nothing is downloaded.
    shutil.copytree(data_dir / "tiny", tmp_path / "data" / "tiny")
    info_file = tmp_path / "data/tiny/1.0.0/dataset_info.json"
    info_file.write_text(
        info_file.read_text().replace(
            '"supervised_keys": null', '"supervised_keys": ["image", "label"]'
        )
    )
    ds = catalog.data_source(
        supervised, split="train", data_dir=tmp_path / "data", as_supervised=True
    )
    image, label = ds[7]
    np.testing.assert_array_equal(image, IMAGES[7])
    assert label == LABELS[7]
    assert [lbl for _, lbl in ds[:5]] == LABELS[:5].tolist()
    assert [lbl for _, lbl in ds.__getitems__([3, 1])] == [LABELS[3], LABELS[1]]
