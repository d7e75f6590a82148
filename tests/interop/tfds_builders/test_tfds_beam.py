"""``catalog prepare tfds:NAME --beam-pipeline-options ...``: TFDS's generators run inside
catalog's work units on Apache Beam (DirectRunner here), like any prepare on Beam, and give
the same shards as the serial prepare. Runs in CI's Beam venv (``.[test,beam,tfds]``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tfds_files import IMDB_URL, SKIP_REASON, imdb_archive, mirror_file

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)
pytest.importorskip(
    "apache_beam", reason="Beam tests need apache-beam: pip install 'catalog[beam]'"
)

from conftest import catalog_cli


def _shards(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.iterdir()
        if ".array_record-" in p.name
    }


def test_a_tfds_prepare_on_beam_writes_the_serial_shards(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror_file(mirror, IMDB_URL, imdb_archive())
    paths = {}
    for how, extra in (
        ("serial", ()),
        ("beam", ("--beam-pipeline-options", "runner=DirectRunner")),
    ):
        done = catalog_cli(
            "prepare", "tfds:imdb_reviews", "--mirror", str(mirror), "--offline",
            "--register-checksums", "--download-dir", str(tmp_path / "dl"),
            "--data-dir", str(tmp_path / how), "--json", *extra,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Exception ignored" not in done.stderr, done.stderr
        paths[how] = Path(json.loads(done.stdout)["datasets"][0]["path"])
    beam, serial = _shards(paths["beam"]), _shards(paths["serial"])
    assert len(serial) == 3 and beam == serial
