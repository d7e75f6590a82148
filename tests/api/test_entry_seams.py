"""The seams every entry point goes through: the record layer opens shards through the data
dir's store, ``split=`` is parsed once on its way in."""

from __future__ import annotations

from pathlib import Path

import pytest

import catalog
from catalog.api.resolve import resolve_dataset
from catalog.info import splits as split_module
from catalog.info.split_request import SplitRequest
from catalog.read.data_source import DataSource
from catalog.storage.data_dir import data_dir_store
from catalog.storage.local_store import LocalShards
from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli, idx_builder


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A builder folder of 20 examples, prepared: (folder, data dir)."""
    tmp = tmp_path_factory.mktemp("seams")
    with LoopbackServer() as server:
        folder = idx_builder(tmp, server, 20)
        catalog.builder(folder, data_dir=tmp / "data").download_and_prepare()
    return folder, tmp / "data"


def test_shards_open_through_the_data_dirs_store(prepared: tuple[Path, Path]) -> None:
    folder, data = prepared
    ds = catalog.data_source(folder, split="train", data_dir=data)
    assert isinstance(ds, DataSource)
    shards = ds._shards
    assert isinstance(shards, LocalShards) and shards.folder == ds.path
    assert ds._records._open == shards.open  # resolved once, at open
    assert int(ds[3]["label"]) == int(ds[[3]][0]["label"])
    # a view shares the opener (and the generation it holds)
    assert ds[2:5]._shards is shards
    # verify gets the shards as local files from the same store
    store = data_dir_store(data)
    opened = store.open(catalog.builder(folder, data_dir=data).data_path)
    assert opened is not None
    files = list(store.shard_files(opened))
    assert [shard.file for shard, _ in files] == [Path(p).name for p in shards.paths]
    assert all(path is not None and path.is_file() for _, path in files)


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = split_module._part

    def counting(text: str, spec: str) -> split_module.Split:
        parsed.append(text)
        return real(text, spec)

    monkeypatch.setattr(split_module, "_part", counting)
    return parsed


@pytest.mark.parametrize(
    ("split", "parts"),
    [("train[:10%]+train[50%:]", 2), (["train[:5]", "train[5:]"], 2), ("train", 1)],
)
def test_split_is_parsed_once_on_its_way_in(
    prepared: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    split: str | list[str],
    parts: int,
) -> None:
    folder, data = prepared
    parsed = _count_parses(monkeypatch)
    found = catalog.data_source(folder, split=split, data_dir=data)
    assert len(parsed) == parts, parsed  # each part once: not in check_split and again below
    parsed.clear()
    catalog.builder(folder, data_dir=data).as_data_source(split)
    assert len(parsed) == parts, parsed
    # the text users see is the spec as given
    texts = [d.split for d in found] if isinstance(found, list) else [found.split]
    assert texts == (split if isinstance(split, list) else [split])


def test_the_three_shapes_of_split(prepared: tuple[Path, Path]) -> None:
    folder, data = prepared
    every = catalog.data_source(folder, data_dir=data)
    assert isinstance(every, dict) and list(every) == ["train"] and len(every["train"]) == 20
    one = catalog.data_source(folder, split="train[:5]+train[-2:]", data_dir=data)
    assert isinstance(one, DataSource) and len(one) == 7
    two = catalog.data_source(folder, split=("train[:5]", "train[5:]"), data_dir=data)
    assert isinstance(two, list) and [len(d) for d in two] == [5, 15]
    parts = catalog.even_splits("train", 2)
    halves = catalog.data_source(folder, split=parts, data_dir=data)
    assert [d.split for d in halves] == [str(p) for p in parts]


def test_a_split_request_is_checked_against_the_spec(prepared: tuple[Path, Path]) -> None:
    folder, data = prepared
    b = catalog.builder(folder, data_dir=data)
    request = b.check_split("train[:1]")
    assert b.check_split(request) is request  # parsed once: passed down as it is
    with pytest.raises(catalog.SplitError, match=r"tiny: no split 'trian'.*did you mean 'train'"):
        b.check_split(["train", "trian"])
    with pytest.raises(catalog.SplitError, match="bad split spec"):
        SplitRequest.parse("train[::]")
    with pytest.raises(catalog.SplitError, match="must be a string"):
        SplitRequest.parse([3])  # type: ignore[list-item]


def test_a_file_beside_a_builder_yaml_is_that_file_everywhere(tmp_path: Path) -> None:
    """``DIR/data.csv`` beside ``DIR/builder.yaml`` (what --write-spec wrote) also reads as
    config 'data.csv' of the builder folder DIR: the resolver takes the file, for the CLI and
    for Python alike, and says what it chose."""
    folder = tmp_path / "table"
    folder.mkdir()
    csv = folder / "data.csv"
    csv.write_text("a,b\n1,2\n3,4\n")
    wrote = catalog_cli("prepare", str(csv), "--data-dir", "d", "--write-spec", str(folder), "-q",
                        cwd=tmp_path)  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    assert (folder / "builder.yaml").is_file()
    chose = f"{csv} is a file, prepared as local files (it also reads as config 'data.csv'"

    again = catalog_cli("prepare", str(csv), "--name", "again", "--data-dir", "d", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"catalog: {chose}" in again.stderr
    assert catalog.data_source("again", data_dir=tmp_path / "d", split="train")[1]["b"] == 4

    heard: list[str] = []
    handle = resolve_dataset(csv, data_dir=tmp_path / "d", files=True, note=heard.append)
    assert handle.kind == "files" and handle.target == csv
    assert len(heard) == 1 and heard[0].startswith(chose)
    with pytest.warns(UserWarning, match="prepared as local files"):
        assert resolve_dataset(csv, data_dir=tmp_path / "d", files=True).kind == "files"
    for call in (catalog.data_source, catalog.builder):
        with pytest.raises(catalog.DatasetNotFoundError) as found:
            call(str(csv), data_dir=tmp_path / "d")
        message = str(found.value)
        assert "are local files: prepare them first" in message, message
        assert f"{csv} is a file, read as local files" in message
    # the builder folder itself still is the builder folder
    assert resolve_dataset(folder, data_dir=tmp_path / "d").kind == "builder_folder"


def test_rm_of_an_absent_dataset_is_the_same_for_every_kind(tmp_path: Path) -> None:
    """A second ``rm`` of a dataset prepared from files says nothing is there and exits 0,
    as ``rm`` of a registered dataset that is not prepared does; so does `catalog.remove`."""
    csv = tmp_path / "table.csv"
    csv.write_text("a,b\n1,2\n3,4\n")
    data = str(tmp_path / "d")
    prepared = catalog_cli("prepare", str(csv), "--name", "mytable", "--data-dir", data, "-q")
    assert prepared.returncode == 0, prepared.stderr
    first = catalog_cli("rm", "mytable", "--data-dir", data)
    assert first.returncode == 0 and "mytable 1.0.0: removed" in first.stdout, first
    listed = catalog_cli("list", "--prepared", "--data-dir", data)
    assert "mytable" not in listed.stdout
    again = catalog_cli("rm", "mytable", "--data-dir", data)
    assert again.returncode == 0, again.stderr
    assert "mytable: nothing prepared under that name" in again.stdout
    assert "nothing to remove" in again.stdout and "did you mean" not in again.stdout
    registered = catalog_cli("rm", "mnist", "--data-dir", data)
    assert registered.returncode == 0 and "not prepared in" in registered.stdout, registered
    assert "nothing to remove" in registered.stdout
    # the Python API answers the same
    assert catalog.remove("mytable", data_dir=data).found is False
    assert catalog.remove("mnist", data_dir=data).found is False
    with pytest.raises(catalog.DatasetNotFoundError):
        catalog.remove(str(tmp_path / "nope.csv"), data_dir=data)


def test_a_dataset_found_by_name_is_opened_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("a,b\n1,x\n2,y\n")
    data = tmp_path / "d"
    catalog.prepare_files(csv, "t", data_dir=data)
    store = data_dir_store(data)
    opens: list[object] = []
    real = type(store).open
    monkeypatch.setattr(type(store), "open", lambda self, *a: opens.append(a) or real(self, *a))
    handle = resolve_dataset("t", data_dir=data)
    assert handle.kind == "stored" and handle.builder is not None
    first, again = handle.open(), handle.open()
    assert first is again and first is not None and first.info.splits["train"].num_examples == 2
    assert len(opens) == 1  # to find what "t" is; not again for info, verify, export
