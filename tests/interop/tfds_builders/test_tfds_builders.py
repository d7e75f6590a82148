"""``tfds:NAME``: TFDS's own builders prepared without TensorFlow, from small files in each
dataset's upstream layout served on 127.0.0.1 or from a ``--mirror`` dir."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from tfds_files import SKIP_REASON

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

from tfds_files import (
    IMDB_FILES,
    IMDB_URL,
    images_of,
    imdb_archive,
    mirror_file,
    patch_mnist,
    serve_mnist,
)

import catalog
from catalog.cli import main
from catalog.download import DownloadConfig
from catalog.errors import (
    ChecksumError,
    DatasetNotFoundError,
    DownloadError,
    NotPreparedError,
)
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from conftest import FIRST50, FIRST50_LABELS, catalog_cli


def _config(tmp_path: Path, **kwargs: object) -> DownloadConfig:
    return DownloadConfig(download_dir=tmp_path / "downloads", progress="none", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["mnist", "kmnist"])
def test_mnist_prepares_from_its_upstream_files_without_tensorflow(
    name: str, tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = serve_mnist(server, tmp_path / "files", {"train": 7, "test": 4})
    patch_mnist(monkeypatch, base, train=7, test=4)
    sources = catalog.data_source(
        f"tfds:{name}",
        data_dir=tmp_path / "data",
        download_config=_config(tmp_path, register_checksums=True),
    )
    assert isinstance(sources, dict)
    assert {name: len(ds) for name, ds in sources.items()} == {"train": 7, "test": 4}
    for seed, split in enumerate(("train", "test")):
        n = len(sources[split])
        np.testing.assert_array_equal(
            images_of(sources[split]), pattern_images(n, seed=seed)[..., None]
        )
        labels = [int(sources[split][i]["label"]) for i in range(n)]
        assert labels == pattern_labels(n, seed=seed).tolist()
    assert sources["train"].features["label"].num_classes == 10
    assert (tmp_path / "data" / f"tfds.{name}" / "3.0.1").exists()
    assert "tensorflow" not in sys.modules


def test_emnist_extracts_the_gzip_files_inside_its_zip(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EMNIST's builder extracts its zip, then each .gz inside it (files that are no
    download of their own): both through catalog's extraction, in the spec's prepare and in
    its units."""
    from catalog.formats.tfds.runtime import builder_class

    cls = builder_class("emnist")
    config = next(c for c in cls.BUILDER_CONFIGS if c.name == "balanced")
    monkeypatch.setattr(config, "train_examples", 6)
    monkeypatch.setattr(config, "test_examples", 3)
    members = {}
    for seed, (split, n) in enumerate((("train", 6), ("test", 3))):
        for kind, array in (("images-idx3", pattern_images(n, seed=seed)),
                            ("labels-idx1", pattern_labels(n, 47, seed=seed))):  # fmt: skip
            name = f"emnist-balanced-{split}-{kind}-ubyte.gz"
            members[f"gzip/{name}"] = write_idx(tmp_path / name, array).read_bytes()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    monkeypatch.setattr(cls, "URL", server.add("/EMNIST/gzip.zip", buffer.getvalue()))
    test = catalog.data_source(
        "tfds:emnist/balanced", split="test", data_dir=tmp_path / "data",
        download_config=_config(tmp_path, register_checksums=True),
    )  # fmt: skip
    np.testing.assert_array_equal(images_of(test), pattern_images(3, seed=1)[..., None])
    assert [int(test[i]["label"]) for i in range(3)] == pattern_labels(3, 47, seed=1).tolist()
    assert test.features["label"].num_classes == 47


def test_fashion_mnist_gives_the_real_labels_of_its_real_test_files(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = serve_mnist(server, tmp_path / "files", {"train": 3, "test": 1})
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        server.add(f"/mnist/{name}", (FIRST50 / name).read_bytes())  # the first 50, real
    patch_mnist(monkeypatch, base, train=3, test=50)
    test = catalog.data_source(
        "tfds:fashion_mnist",
        split="test",
        data_dir=tmp_path / "data",
        download_config=_config(tmp_path, register_checksums=True),
    )
    assert [int(test[i]["label"]) for i in range(50)] == FIRST50_LABELS
    assert test.features["label"].names[9] == "Ankle boot"


def test_a_url_tfds_registers_no_checksum_for_is_refused(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = serve_mnist(server, tmp_path / "files", {"train": 2, "test": 2})
    patch_mnist(monkeypatch, base, train=2, test=2)
    with pytest.raises(ChecksumError, match="registers no size and sha256.*--register-checksums"):
        catalog.data_source("tfds:mnist", data_dir=tmp_path / "data",
                            download_config=_config(tmp_path))  # fmt: skip
    assert not (tmp_path / "data" / "tfds.mnist").exists()


def test_files_that_are_not_tfds_registered_ones_fail_their_checksum(tmp_path: Path) -> None:
    """A mirror holding other bytes than TFDS registered for the URL: catalog's checksum
    error, one line, no traceback, nothing prepared."""
    mirror = tmp_path / "mirror"
    mirror_file(mirror, IMDB_URL, imdb_archive())
    data = tmp_path / "data"
    result = catalog_cli(
        "prepare", "tfds:imdb_reviews", "--mirror", str(mirror), "--offline",
        "--data-dir", str(data), "--download-dir", str(tmp_path / "dl"),
    )  # fmt: skip
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "sha256" in result.stderr and "aclImdb_v1.tar.gz" in result.stderr
    assert not (data / "tfds.imdb_reviews").exists()


def test_files_with_tfds_registered_checksums_are_verified_and_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --register-checksums, a file is used when its size and sha256 are the ones
    TFDS registers for its URL (here: TFDS's registry patched to the re-made archive's, as a
    builder author's checksums.tsv would say); one changed byte is refused."""
    import hashlib

    from tensorflow_datasets.core.download.checksums import UrlInfo

    from catalog.formats.tfds.runtime import builder_class

    archive = imdb_archive()
    cls = builder_class("imdb_reviews")
    info = UrlInfo(size=len(archive), checksum=hashlib.sha256(archive).hexdigest(),
                   filename="aclImdb_v1.tar.gz")  # fmt: skip
    monkeypatch.setattr(cls, "url_infos", {IMDB_URL: info})
    mirror = tmp_path / "mirror"
    copy = mirror_file(mirror, IMDB_URL, archive)
    config = DownloadConfig(download_dir=tmp_path / "dl", mirrors=[str(mirror)], offline=True,
                            progress="none")  # fmt: skip
    test = catalog.data_source("tfds:imdb_reviews", split="test", data_dir=tmp_path / "data",
                               download_config=config)  # fmt: skip
    assert len(test) == 2
    copy.write_bytes(archive[:-1] + bytes([archive[-1] ^ 1]))
    other = DownloadConfig(download_dir=tmp_path / "dl2", mirrors=[str(mirror)], offline=True,
                           progress="none")  # fmt: skip
    with pytest.raises(DownloadError, match="sha256 mismatch"):  # offline: no other source
        catalog.data_source("tfds:imdb_reviews", data_dir=tmp_path / "data2",
                            download_config=other)  # fmt: skip


def _record_splits(monkeypatch: pytest.MonkeyPatch, sizes: dict[str, int]) -> None:
    """TFDS's DatasetInfo recording `sizes` as its split sizes (what a dataset_info of TFDS's
    says; tensorflow-datasets 4.9.10 no longer fetches them from its bucket)."""
    from tensorflow_datasets.core import dataset_info, splits

    recorded = splits.SplitDict(
        [splits.SplitInfo(name=n, shard_lengths=[c], num_bytes=0) for n, c in sizes.items()]
    )
    monkeypatch.setattr(dataset_info.DatasetInfo, "splits", property(lambda self: recorded))


@pytest.mark.parametrize("register", [False, True])
def test_split_sizes_tfds_records_are_checked_only_for_the_real_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, register: bool
) -> None:
    """With every file verified against TFDS's registered checksums (here patched to the
    re-made archive's, as TFDS's tests patch constants) the counts must be the sizes TFDS
    records: another count is one clear error and nothing is prepared; the same sizes pass.
    Files measured instead (--register-checksums: not the real ones) are not held to them."""
    import hashlib

    from tensorflow_datasets.core.download.checksums import UrlInfo

    from catalog.errors import SourceFormatError
    from catalog.formats.tfds.runtime import builder_class

    archive = imdb_archive()
    info = UrlInfo(size=len(archive), checksum=hashlib.sha256(archive).hexdigest(),
                   filename="aclImdb_v1.tar.gz")  # fmt: skip
    monkeypatch.setattr(builder_class("imdb_reviews"), "url_infos", {IMDB_URL: info})
    mirror = tmp_path / "mirror"
    mirror_file(mirror, IMDB_URL, archive)

    def prepare(data: Path) -> object:
        config = DownloadConfig(
            download_dir=tmp_path / "dl", mirrors=[str(mirror)], offline=True, progress="none",
            register_checksums=register,
        )  # fmt: skip
        return catalog.data_source("tfds:imdb_reviews", data_dir=data, download_config=config)

    _record_splits(monkeypatch, {"train": 25000, "test": 25000, "unsupervised": 50000})
    if register:
        assert len(prepare(tmp_path / "data")["train"]) == 3  # type: ignore[index]
        return
    with pytest.raises(SourceFormatError) as error:
        prepare(tmp_path / "data")
    assert str(error.value).startswith(
        "tfds:imdb_reviews: split 'train': TFDS's generator yielded 3 examples from files "
        "whose checksums are TFDS's, but TFDS records 25000 for it"
    )
    assert not (tmp_path / "data" / "tfds.imdb_reviews").exists()
    _record_splits(monkeypatch, {"train": 3, "test": 2, "unsupervised": 1})
    assert len(prepare(tmp_path / "data")["test"]) == 2  # type: ignore[index]


def test_imdb_reviews_through_the_cli_prepare_info_verify_rm(tmp_path: Path) -> None:
    mirror, data = tmp_path / "mirror", tmp_path / "data"
    mirror_file(mirror, IMDB_URL, imdb_archive())
    common = ("--data-dir", str(data))
    prepared = catalog_cli(
        "prepare", "tfds:imdb_reviews", "--mirror", str(mirror), "--offline",
        "--register-checksums", "--download-dir", str(tmp_path / "dl"), *common,
    )  # fmt: skip
    assert prepared.returncode == 0, prepared.stderr
    assert "train 3, test 2, unsupervised 1 examples" in prepared.stdout
    sources = catalog.data_source("tfds:imdb_reviews", data_dir=data, download=False)
    assert isinstance(sources, dict)
    got = {
        split: sorted((ds[i]["text"], int(ds[i]["label"])) for i in range(len(ds)))
        for split, ds in sources.items()
    }
    texts = dict(IMDB_FILES)
    assert got == {
        "train": sorted(
            [(texts["aclImdb/train/pos/0_9.txt"], 1), (texts["aclImdb/train/pos/1_8.txt"], 1),
             (texts["aclImdb/train/neg/2_1.txt"], 0)]
        ),
        "test": sorted([(texts["aclImdb/test/pos/4_7.txt"], 1),
                        (texts["aclImdb/test/neg/5_2.txt"], 0)]),
        "unsupervised": [(texts["aclImdb/train/unsup/3_0.txt"], -1)],
    }  # fmt: skip
    info = catalog_cli("info", "tfds:imdb_reviews", *common)
    assert info.returncode == 0, info.stderr
    assert "tfds.imdb_reviews/plain_text 1.0.0" in info.stdout
    assert "prepared:        yes" in info.stdout
    croissant = catalog_cli("croissant", "tfds:imdb_reviews", *common)
    assert croissant.returncode == 0, croissant.stderr
    assert json.loads(croissant.stdout)["name"]
    exported = catalog_cli("export", "tfds:imdb_reviews", "--format", "parquet",
                           "-o", str(tmp_path / "parquet"), *common)  # fmt: skip
    assert exported.returncode == 0 and "train 3, test 2, unsupervised 1" in exported.stdout
    verified = catalog_cli("verify", "tfds:imdb_reviews", *common)
    assert verified.returncode == 0 and "ok" in verified.stdout, verified.stderr
    removed = catalog_cli("rm", "tfds:imdb_reviews", *common)
    assert removed.returncode == 0 and "removed" in removed.stdout, removed
    with pytest.raises(NotPreparedError):
        catalog.data_source("tfds:imdb_reviews", data_dir=data, download=False)
    again = catalog_cli("rm", "tfds:imdb_reviews", *common)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again


def test_info_of_an_unprepared_tfds_dataset_is_offline(tmp_path: Path) -> None:
    result = catalog_cli(
        "info", "tfds:mnist", "--data-dir", str(tmp_path / "data"),
        env={"CATALOG_OFFLINE": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "tfds.mnist 3.0.1" in result.stdout
    assert "Image" in result.stdout and "10 classes" in result.stdout
    assert "yann.lecun.com" in result.stdout  # homepage
    assert "prepared:        no" in result.stdout
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir())


def test_the_cli_runs_several_prepares_in_one_process(
    tmp_path: Path,
    server: LoopbackServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``main(argv)`` in this process: TFDS's code runs here, so the patched constants hold;
    a second dataset in the same process is prepared independently."""
    base = serve_mnist(server, tmp_path / "files", {"train": 5, "test": 2})
    patch_mnist(monkeypatch, base, train=5, test=2)
    mirror = tmp_path / "mirror"
    mirror_file(mirror, IMDB_URL, imdb_archive())
    common = ["--data-dir", str(tmp_path / "data"), "--download-dir", str(tmp_path / "dl"),
              "--register-checksums", "--quiet"]  # fmt: skip
    assert main(["prepare", "tfds:mnist", *common]) == 0
    assert main(["prepare", "tfds:imdb_reviews", "--mirror", str(mirror), *common]) == 0
    capsys.readouterr()
    assert len(catalog.data_source("tfds:mnist", split="train", data_dir=tmp_path / "data")) == 5
    assert "tensorflow" not in sys.modules


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tfds:no_such_dataset", "TFDS registers no dataset 'no_such_dataset'"),
        ("tfds:mnistt", "did you mean tfds:mnist"),
        ("tfds:imdb_reviews/nope", "has no config 'nope'"),
        ("tfds:Not A Name", "not a TFDS dataset name"),
    ],
)
def test_a_name_tfds_does_not_know_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(DatasetNotFoundError, match=message):
        catalog.builder(text)
