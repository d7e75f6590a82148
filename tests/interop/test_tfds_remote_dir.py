"""A TFDS directory that is not on this machine (TFDS serves datasets it has no generation code
for only prepared, e.g. ``gs://tfds-data/datasets/NAME/VERSION``): `catalog.import_dataset(URL)`
and ``catalog import URL`` fetch it (metadata, names files, each shard) and import it like a
local one. Served here by a real S3 server (moto) and a real HTTP server on 127.0.0.1, from
the directories TFDS itself wrote (tests/fixtures/tf); the GCS emulator case is in
tests/storage/test_gcs_emulator.py. The imported copy equals the import of the local
directory, shard for shard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import catalog
from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli
from s3server import S3Server
from tf_fixtures import FORMATS, expected, tfds_dir

EXPECTED = expected("expected.json")


def _shards(target: Path) -> dict[str, str]:
    """split -> sha256 of each split's shards in an imported copy (what it holds)."""
    info = json.loads((Path(target) / "dataset_info.json").read_text())
    return {n: "".join(s["sha256"] for s in split["shards"]) for n, split in info["splits"].items()}


def _upload(folder: Path, url: str) -> None:
    from catalog.storage.remote import remote_dir

    remote = remote_dir(url)
    fs = remote.filesystem()
    for path in sorted(folder.iterdir()):
        fs.pipe_file((remote / path.name).path, path.read_bytes())


@pytest.mark.parametrize("file_format", FORMATS)
def test_import_from_a_bucket_equals_the_local_import(
    s3: S3Server, tmp_path: Path, file_format: str
) -> None:
    folder = tfds_dir(EXPECTED, file_format)
    url = f"s3://data/tfds/{folder.parent.name}/{folder.name}"
    _upload(folder, url)
    info, target = catalog.import_dataset(url, data_dir=tmp_path / "remote")
    local, local_target = catalog.import_dataset(folder, data_dir=tmp_path / "local")
    assert info.splits.keys() == local.splits.keys() and info.features == local.features
    assert _shards(Path(target)) == _shards(Path(local_target))
    ds, want = (catalog.data_source(str(t), split="train") for t in (target, local_target))
    assert len(ds) == len(want) > 0  # type: ignore[arg-type]
    assert ds[0].keys() == want[0].keys()  # type: ignore[index]
    scratch = tmp_path / "downloads" / "scratch"
    assert not any(scratch.iterdir())  # the fetched copy is gone


def test_import_from_a_web_server_by_the_cli(tmp_path: Path) -> None:
    folder = tfds_dir(EXPECTED, "array_record")
    with LoopbackServer() as server:
        for path in folder.iterdir():
            server.add(
                f"/datasets/{folder.parent.name}/{folder.name}/{path.name}", path.read_bytes()
            )
        url = server.url(f"/datasets/{folder.parent.name}/{folder.name}")
        result = catalog_cli(
            "import", url, "--data-dir", str(tmp_path / "data"), "--json",
            env={"CATALOG_DOWNLOAD_DIR": str(tmp_path / "downloads")},
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    done = json.loads(result.stdout)
    local, local_target = catalog.import_dataset(folder, data_dir=tmp_path / "local")
    assert done["splits"] == {n: s.num_examples for n, s in local.splits.items()}
    assert _shards(Path(done["path"])) == _shards(Path(local_target))


def test_a_missing_shard_is_named_and_nothing_is_left(s3: S3Server, tmp_path: Path) -> None:
    folder = tfds_dir(EXPECTED, "array_record")
    url = "s3://data/tfds/broken/1.2.0"
    _upload(folder, url)
    from catalog.storage.remote import remote_dir

    shard = next(p.name for p in folder.iterdir() if "-train." in p.name)
    remote_dir(url).filesystem().rm_file((remote_dir(url) / shard).path)
    with pytest.raises(catalog.ShardError, match=shard):
        catalog.import_dataset(url, data_dir=tmp_path / "data")
    assert not list((tmp_path / "data").rglob("dataset_info.json"))
    assert not any((tmp_path / "downloads" / "scratch").iterdir())
    with pytest.raises(catalog.DatasetNotFoundError, match="no TFDS directory there"):
        catalog.import_dataset("s3://data/tfds/nothing/1.0.0", data_dir=tmp_path / "data")
