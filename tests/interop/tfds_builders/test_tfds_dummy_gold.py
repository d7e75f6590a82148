"""``tfds:NAME`` of TFDS datasets catalog has no builder of gives TFDS's own examples.

tests/tfds_gold/repo/<name>[-<config>].json hold what TensorFlow Datasets 4.9.10 (with
TensorFlow) prepared from tests/data/tfds_dummy/<name>/files/, its download manager answering as
TFDS's own ``DatasetBuilderTestCase`` makes it answer (`tools/tfds_dummy_equivalence.py`).
Here catalog prepares ``tfds:NAME[/CONFIG]`` from the same files, with no TensorFlow,
through its real prepare path, the download manager's answers alone replaced
(`catalog.formats.tfds.downloads.dummy_downloads`), and every example is compared with
TFDS's, canonical as the tool makes them, each split as a multiset (TFDS shuffles), each
split's size with the one DUMMY.json gives. tests/tfds_gold/repo/STATUS.json lists every
dataset tried, with its outcome: the ones it calls equal or differs are exactly the ones
compared here (a difference is an expected failure, strict).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tfds_files import SKIP_REASON, assert_examples_equal

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

import catalog
from catalog.download import DownloadConfig
from catalog.formats.tfds.downloads import DummyDownloads, dummy_downloads

from conftest import load_module

ROOT = Path(__file__).resolve().parents[3]
GOLD = ROOT / "tests" / "tfds_gold" / "repo"
DUMMY = ROOT / "tests" / "data" / "tfds_dummy"
tool = load_module(ROOT / "tools" / "tfds_equivalence.py")
STATUS = json.loads((GOLD / "STATUS.json").read_text("utf-8"))


def _gold_files() -> list[Path]:
    return sorted(p for p in GOLD.glob("*.json") if p.name != "STATUS.json")


def _examples(ds: Any) -> list[Any]:
    return [tool.canonical(ds[i]) for i in range(len(ds))]


#: Builders of TFDS that open files and never close them: the ResourceWarning this test
#: suite turns into an error is theirs, not catalog's (TFDS's own code, run as it is).
LEAKS_FILES = {
    "unnatural_instructions": "its generator opens every file of the folder, none closed",
    "quality": "its generator iterates path.open() and never closes it",
}


#: TFDS keeps float64 features in tf.train.Example's float_list, so they come back rounded to
#: float32; catalog keeps float64 (as test_tfds_gold.py's FLOAT64_ROUNDED): compared with both
#: sides' floats rounded to float32.
FLOAT64_ROUNDED = {"smartwatch_gestures"}


def _cases() -> list[Any]:
    """A gold file each; the ones STATUS.json says differ are expected to fail (strictly: a
    fix shows as an unexpected pass, and STATUS.json is then to say equal)."""
    cases = []
    for gold in _gold_files():
        entry = STATUS["datasets"][json.loads(gold.read_text("utf-8"))["name"]]
        name = json.loads(gold.read_text("utf-8"))["name"]
        marks: list[Any] = []
        if name in LEAKS_FILES:
            marks = [pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]
        if entry["result"] == "differs":
            marks.append(pytest.mark.xfail(reason=entry["why"], strict=True))
        cases.append(pytest.param(gold, id=gold.stem, marks=marks))
    return cases


@pytest.mark.parametrize("gold", _cases())
def test_tfds_route_gives_tfds_examples_from_dummy_files(gold: Path, tmp_path: Path) -> None:
    expected = json.loads(gold.read_text("utf-8"))
    name = expected["name"]
    spec = json.loads((DUMMY / name / "DUMMY.json").read_text("utf-8"))
    dummy = DummyDownloads(
        DUMMY / name / "files", spec.get("extract_result"), spec.get("download_result"),
        spec.get("extract_only_result"),
    )  # fmt: skip
    download = DownloadConfig(
        download_dir=tmp_path / "dl", offline=True, manual_dir=tmp_path / "manual",
        progress="none",
    )  # fmt: skip
    config = spec.get("config")
    text = f"tfds:{name}/{config}" if config else f"tfds:{name}"
    with dummy_downloads(dummy):
        sources = catalog.data_source(text, data_dir=tmp_path / "data", download_config=download)
        assert isinstance(sources, dict)
        got = {split: _examples(sources[split]) for split in sources}
        keys = next(iter(sources.values())).info.supervised_keys
        supervised = None
        if keys is not None:
            ds = catalog.data_source(text, split=next(iter(sources)), data_dir=tmp_path / "data",
                                     as_supervised=True)  # fmt: skip
            supervised = ds[0] if len(ds) else None
    assert set(got) == set(expected["splits"])
    # TFDS's supervised keys, as_supervised giving (input, target) of the first example
    assert (list(keys) if keys else None) == expected.get("supervised_keys")
    if supervised is not None:
        assert keys is not None
        example = sources[next(iter(sources))][0]
        pair = catalog.features.supervised_pair(keys, example)
        assert tool.canonical(list(supervised)) == tool.canonical(list(pair))
    if spec.get("splits"):
        assert {split: len(e) for split, e in got.items()} == spec["splits"]
    wanted = expected["splits"]
    assert_examples_equal(got, wanted, tool.multiset, float32=name in FLOAT64_ROUNDED)
    assert "tensorflow" not in sys.modules


def test_status_lists_every_dataset_tried_and_equal_means_compared() -> None:
    """STATUS.json: every dummy folder has an outcome; "equal" exactly where a gold file is."""
    assert set(STATUS["datasets"]) >= {p.parent.name for p in DUMMY.glob("*/DUMMY.json")}
    for name, entry in STATUS["datasets"].items():
        assert entry["result"] in ("equal", "differs", "not run"), name
        assert entry["result"] == "equal" or entry.get("why"), name
        assert entry["category"] in ("image", "text", "audio", "structured", "video"), name
    recorded = {n for n, e in STATUS["datasets"].items() if e["result"] != "not run"}
    compared = {json.loads(p.read_text("utf-8"))["name"] for p in _gold_files()}
    assert recorded == compared


def test_catalog_list_tfds_says_prepares_exactly_for_the_equal_ones() -> None:
    """`catalog list --tfds` (builder_index.COMPARED) claims what STATUS.json shows, no more."""
    from catalog.interop.tfds.builder_index import COMPARED

    equal = {n for n, e in STATUS["datasets"].items() if e["result"] == "equal"}
    assert equal == COMPARED


def test_dummy_downloads_replace_only_what_the_download_manager_returns(tmp_path: Path) -> None:
    """The hook answers download/download_and_extract/extract/manual_dir as TFDS's test case
    does, nested as given; out of its block the download manager fetches again."""
    from catalog.formats.tfds.downloads import TFDSDownloads

    asked: list[str] = []

    def fetch(url: str) -> Path:
        asked.append(url)
        return tmp_path / "fetched"

    dl = TFDSDownloads("tfds:x", fetch, lambda p: p, None)
    dummy = DummyDownloads(tmp_path, {"a": "a.csv", "b": ["b1", "b2"]}, "d.bin", {"x": "x"})
    with dummy_downloads(dummy):
        assert dl.download_and_extract("http://h/a") == {
            "a": tmp_path / "a.csv", "b": [tmp_path / "b1", tmp_path / "b2"],
        }  # fmt: skip
        assert dl.download({"k": "http://h/d"}) == tmp_path / "d.bin"
        assert dl.extract(tmp_path / "d.bin") == {"x": tmp_path / "x"}
        assert dl.manual_dir == tmp_path and dl.download_dir == tmp_path
    with dummy_downloads(DummyDownloads(tmp_path)):
        assert dl.download_and_extract("http://h/a") == tmp_path  # no result: the folder
        assert dl.download("http://h/a") == tmp_path
    assert asked == []
    assert dl.download("http://h/a") == tmp_path / "fetched"
    assert asked == ["http://h/a"]


def test_a_gfile_iterated_unheld_reads_every_line(tmp_path: Path) -> None:
    """``enumerate(tf.io.gfile.GFile(path, "rb"))`` (multi_nli_mismatch) holds no name for
    the GFile: the loop reads every line, its file not closed under it."""
    import gc

    from catalog.formats.tfds.standin import STANDIN

    path = tmp_path / "lines.txt"
    path.write_bytes(b"a\nb\nc\n")
    lines = []
    for line in STANDIN.io.gfile.GFile(str(path), "rb"):
        gc.collect()
        lines.append(line)
    assert lines == [b"a\n", b"b\n", b"c\n"]


def test_the_guide_shows_the_status_as_it_is() -> None:
    """docs/guides/tfds-builders.md holds STATUS.json's count and table as the tool prints
    them: a dataset added or fixed without the docs following fails here."""
    tool_dummy = load_module(ROOT / "tools" / "tfds_dummy_equivalence.py")
    guide = (ROOT / "docs" / "guides" / "tfds-builders.md").read_text("utf-8")
    assert tool_dummy.status_table() in guide
