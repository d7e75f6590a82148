"""The pieces under ``tfds:NAME``: the TF stand-in, the list of TFDS's datasets with their
status, parallel units, and a clean skip / one clear error where tensorflow-datasets is
missing."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from tfds_files import IMDB_URL, SKIP_REASON, imdb_archive, mirror_file

from conftest import ROOT, catalog_cli

_BLOCKED = "import sys; sys.modules['tensorflow_datasets'] = None; "


def test_without_tensorflow_datasets_the_tests_skip_and_the_cli_says_what_to_install(
    tmp_path: Path,
) -> None:
    """The main suite runs without tensorflow-datasets: these tests skip with the reason, and
    ``catalog prepare tfds:NAME`` is one line naming the extra, no traceback."""
    tests = str(Path(__file__).with_name("test_tfds_builders.py"))
    run = subprocess.run(
        [sys.executable, "-c", _BLOCKED + "import pytest; sys.exit(pytest.main(["
         f"'-q', '-p', 'no:cacheprovider', '-n', '0', '-rs', {tests!r}]))"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, run.stdout + run.stderr
    assert "skipped" in run.stdout and SKIP_REASON.split(";")[0] in run.stdout
    cli = subprocess.run(
        [sys.executable, "-c", _BLOCKED + "from catalog.cli import main; sys.exit(main(["
         f"'prepare', 'tfds:mnist', '--data-dir', {str(tmp_path)!r}]))"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert cli.returncode != 0
    assert "Traceback" not in cli.stderr
    assert "pip install 'catalog[tfds]'" in cli.stderr, cli.stderr
    assert len(cli.stderr.strip().splitlines()) == 1, cli.stderr


pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

import catalog  # noqa: E402 (after the skip)
from catalog.download import DownloadConfig  # noqa: E402
from catalog.formats.tfds.standin import (  # noqa: E402
    STANDIN,
    TensorFlowNeededError,
    install,
    running,
)


def test_the_standin_is_tfds_own_lazy_tensorflow_and_never_sys_modules(tmp_path: Path) -> None:
    from catalog.formats.tfds.runtime import import_tfds

    import_tfds()
    from tensorflow_datasets.core.utils import lazy_imports_utils

    assert install() is True  # in place (again: idempotent)
    assert lazy_imports_utils.tensorflow.io.gfile is STANDIN.io.gfile
    assert "tensorflow" not in sys.modules
    gfile = STANDIN.io.gfile
    folder = tmp_path / "a" / "b"
    gfile.makedirs(str(folder))
    with gfile.GFile(str(folder / "x.txt"), "w") as f:
        f.write("héllo")
    with gfile.GFile(str(folder / "x.txt"), "rb") as f:
        assert f.read() == "héllo".encode()
    gfile.copy(str(folder / "x.txt"), str(folder / "y.txt"))
    with pytest.raises(FileExistsError):
        gfile.copy(str(folder / "x.txt"), str(folder / "y.txt"))
    assert gfile.exists(str(folder / "y.txt")) and gfile.isdir(str(folder))
    assert gfile.listdir(str(folder)) == ["x.txt", "y.txt"]
    assert gfile.glob(str(tmp_path / "a" / "*" / "*.txt")) == [
        str(folder / "x.txt"), str(folder / "y.txt")
    ]  # fmt: skip
    assert gfile.stat(str(folder / "x.txt")).length == len("héllo".encode())
    assert [files for _, _, files in gfile.walk(str(tmp_path / "a"))] == [[], ["x.txt", "y.txt"]]
    gfile.rename(str(folder / "y.txt"), str(folder / "z.txt"))
    gfile.remove(str(folder / "z.txt"))
    assert gfile.listdir(str(folder)) == ["x.txt"]
    assert STANDIN.int64 == STANDIN.dtypes.int64 and STANDIN.compat.as_text(b"a") == "a"


def test_a_tensorflow_call_without_a_standin_is_one_line_naming_it() -> None:
    with running("tfds:voc"), pytest.raises(TensorFlowNeededError) as error:
        STANDIN.image.decode_image(b"")
    assert str(error.value).startswith("tfds:voc needs TensorFlow for tf.image")
    assert "\n" not in str(error.value)
    with pytest.raises(TensorFlowNeededError, match=r"tf\.data"):
        _ = STANDIN.data.Dataset


def test_list_tfds_gives_every_name_with_a_status_then_answers_from_its_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from catalog.interop.tfds import builder_index

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    entries = {e.name: e.status for e in builder_index.tfds_index()}
    assert len(entries) > 400
    assert entries["mnist"] == entries["imdb_reviews"] == "prepares"
    assert entries["binary_alpha_digits"] == "prepares"  # compared with TFDS + TF (STATUS.json)
    assert entries["caltech_birds2010"] == "untested"
    assert "Apache Beam" in entries["c4"]
    assert "prepared only" in entries["asimov_v2_videos"]  # its _info would read gs://
    assert entries["imagenet2012"] == "untested: files placed by hand (--manual-dir)"
    assert entries["samsum"] == "prepares"  # a manual-dir builder, tests/interop/tfds_builders

    def recompute() -> list[builder_index.TFDSEntry]:
        raise AssertionError("the cache was not used")

    monkeypatch.setattr(builder_index, "_compute", recompute)
    assert {e.name: e.status for e in builder_index.tfds_index()} == entries
    started = time.monotonic()
    listed = catalog_cli("list", "--tfds", "mnist", env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    took = time.monotonic() - started
    assert listed.returncode == 0, listed.stderr
    assert any(
        line.startswith("tfds:mnist ") and line.endswith("prepares")
        for line in listed.stdout.splitlines()
    ), listed.stdout
    assert took < 10  # measured 0.35 s; a loaded CI machine gets room


def test_units_run_in_worker_processes_give_the_same_shards(tmp_path: Path) -> None:
    """num_proc=2: each spawned worker runs TFDS's builder for its units (the spec travels,
    TFDS's code runs again there); the shards are the same bytes as a serial prepare's."""
    mirror = tmp_path / "mirror"
    mirror_file(mirror, IMDB_URL, imdb_archive())
    config = DownloadConfig(
        download_dir=tmp_path / "dl", mirrors=[str(mirror)], offline=True,
        register_checksums=True, progress="none",
    )  # fmt: skip
    hashes = []
    for num_proc in (1, 2):
        data = tmp_path / f"data{num_proc}"
        b = catalog.data_source("tfds:imdb_reviews", data_dir=data, download_config=config,
                                num_proc=num_proc)  # fmt: skip
        assert isinstance(b, dict) and len(b["test"]) == 2
        shards = sorted(
            (data / "tfds.imdb_reviews" / "plain_text").glob("1.0.0.gen-*/*.array_record-*")
        )
        assert len(shards) == 3
        hashes.append([p.read_bytes() for p in shards])
    assert hashes[0] == hashes[1]
