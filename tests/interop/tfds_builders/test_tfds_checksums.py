"""``dl_manager.download_checksums``: a TFDS builder (crema_d) that fetches its files'
checksums from a file of its own. catalog fetches that file, verifies every later download
against what it lists, as TFDS does, and refuses a file that differs.

TFDS registers the real checksums file's own size and sha256 (1.3 MB; it is verified like any
registered download); the tests point the builder at a checksums file of theirs by patching
its module constant, as TFDS's own tests patch builders' constants: a checksums file TFDS
registers nothing for is measured, as TFDS fetches it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tfds_files import SKIP_REASON

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

from tfds_files import mirror_file

import catalog
from catalog.download import DownloadConfig
from catalog.errors import DownloadError
from catalog.features import ClassLabel

ROOT = Path(__file__).resolve().parents[3]
FILES = ROOT / "tests" / "data" / "tfds_dummy" / "crema_d" / "files"
CHECKSUMS = "https://checksums.test/crema_d.txt"
TABLE = (
    "https://raw.githubusercontent.com/CheyneyComputerScience/CREMA-D/master/"
    "processedResults/summaryTable.csv"
)
WAVS = "https://media.githubusercontent.com/media/CheyneyComputerScience/CREMA-D/master/AudioWAV/"
NAMES = ["1000_AA_HAP_XX", "1001_AA_HAP_XX", "1002_AA_ANG_XX", "1003_AA_FEA_XX"]


@pytest.fixture(autouse=True)
def _checksums_url(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorflow_datasets.audio import crema_d

    monkeypatch.setattr(crema_d, "_CHECKSUMS_URL", CHECKSUMS)


def _mirror(mirror: Path, listed: dict[str, bytes] | None = None) -> None:
    """crema_d's files at their URLs in `mirror`, and its checksums file listing them (or
    listing `listed`'s bytes instead, for a file that then differs)."""
    files = {TABLE: (FILES / "summary_table.csv").read_bytes()}
    files.update({f"{WAVS}{name}.wav": (FILES / f"{name}.wav").read_bytes() for name in NAMES})
    lines = ["# TFDS's checksums format: URL, size, sha256, file name"]
    for url, body in files.items():
        mirror_file(mirror, url, body)
        body = (listed or {}).get(url, body)
        digest = hashlib.sha256(body).hexdigest()
        lines.append(f"{url}\t{len(body)}\t{digest}\t{url.rsplit('/', 1)[-1]}")
    mirror_file(mirror, CHECKSUMS, ("\n".join(lines) + "\n").encode())


def _config(tmp_path: Path) -> DownloadConfig:
    return DownloadConfig(
        download_dir=tmp_path / "dl", mirrors=(str(tmp_path / "mirror"),), offline=True,
        progress="none",
    )  # fmt: skip


def test_downloads_are_verified_against_the_checksums_file_the_builder_fetches(
    tmp_path: Path,
) -> None:
    _mirror(tmp_path / "mirror")
    sources = catalog.data_source(
        "tfds:crema_d", data_dir=tmp_path / "data", download_config=_config(tmp_path)
    )
    assert isinstance(sources, dict)
    assert {split: len(ds) for split, ds in sources.items()} == {
        "train": 2, "validation": 1, "test": 1,
    }  # fmt: skip
    label = sources["train"].features["label"]
    assert isinstance(label, ClassLabel)
    labels = sorted(label.names[ex["label"]] for ds in sources.values() for ex in ds)
    assert labels == ["ANG", "FEA", "HAP", "HAP"]
    # the checksums file is a download of the spec like any other: measured, recorded
    spec = catalog.builder("tfds:crema_d", data_dir=tmp_path / "data").spec
    urls = {d.url for d in spec.downloads.values()}
    assert CHECKSUMS in urls and TABLE in urls and len(urls) == 6


def test_a_file_that_differs_from_the_checksums_file_is_refused(tmp_path: Path) -> None:
    _mirror(tmp_path / "mirror", listed={f"{WAVS}{NAMES[2]}.wav": b"RIFF other bytes"})
    with pytest.raises(DownloadError, match=NAMES[2]) as error:  # offline: where it looked
        catalog.data_source(
            "tfds:crema_d", data_dir=tmp_path / "data", download_config=_config(tmp_path)
        )
    assert "size mismatch: expected 16 bytes" in str(error.value)
    assert not (tmp_path / "data" / "tfds.crema_d").exists()


def test_a_checksums_file_in_another_format_is_one_clear_error(tmp_path: Path) -> None:
    _mirror(tmp_path / "mirror")
    mirror_file(tmp_path / "mirror", CHECKSUMS, b"not\ta\tchecksums\tfile\tat all\n")
    with pytest.raises(catalog.SourceFormatError, match="is not TFDS's checksums format"):
        catalog.data_source(
            "tfds:crema_d", data_dir=tmp_path / "data", download_config=_config(tmp_path)
        )
