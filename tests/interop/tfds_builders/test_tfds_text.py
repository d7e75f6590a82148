"""Text through TFDS's builders: SQuAD (a JSON file that is no archive, string tensors, a
Sequence of dicts given as a dict of lists), and what a failing TFDS generator looks like."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tfds_files import SKIP_REASON

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

from tfds_files import mirror_file, patch_mnist, serve_mnist

import catalog
from catalog.download import DownloadConfig
from catalog.errors import SourceFormatError
from catalog.features import Sequence, Text
from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli

_SQUAD = "https://rajpurkar.github.io/SQuAD-explorer/dataset/"


def _squad(questions: list[tuple[str, str, list[tuple[str, int]]]]) -> bytes:
    """A SQuAD v1.1 JSON file: one article, one paragraph, these (id, question, answers)."""
    context = "Catalog reads TFDS datasets without TensorFlow. It was written in 2026."
    qas = [
        {"id": qid, "question": q, "answers": [{"text": t, "answer_start": s} for t, s in a]}
        for qid, q, a in questions
    ]
    data = {"version": "1.1", "data": [{"title": "Catalog", "paragraphs": [
        {"context": context, "qas": qas}]}]}  # fmt: skip
    return json.dumps(data).encode()


def test_squad_questions_and_answers(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    train = [("q1", "What does catalog read?", [("TFDS datasets", 14)]),
             ("q2", "When was it written?", [("2026", 66), ("in 2026", 63)])]  # fmt: skip
    dev = [("q3", "Without what?", [("TensorFlow", 36)])]
    mirror_file(mirror, _SQUAD + "train-v1.1.json", _squad(train))
    mirror_file(mirror, _SQUAD + "dev-v1.1.json", _squad(dev))
    config = DownloadConfig(
        download_dir=tmp_path / "dl", mirrors=[str(mirror)], offline=True,
        register_checksums=True, progress="none",
    )  # fmt: skip
    sources = catalog.data_source("tfds:squad/v1.1", data_dir=tmp_path / "data",
                                  download_config=config)  # fmt: skip
    assert isinstance(sources, dict) and set(sources) == {"train", "validation"}
    features = sources["train"].features
    assert isinstance(features["id"], Text)  # TFDS's np.str_ Tensor
    assert isinstance(features["answers"], Sequence)
    got = {ex["id"]: ex for ex in (sources["train"][i] for i in range(2))}
    assert got["q2"]["question"] == "When was it written?"
    assert got["q2"]["title"] == "Catalog"
    assert list(got["q2"]["answers"]["text"]) == ["2026", "in 2026"]
    assert list(got["q2"]["answers"]["answer_start"]) == [66, 63]
    assert sources["validation"][0]["answers"]["text"][0] == "TensorFlow"


def test_a_failing_tfds_generator_is_one_error_naming_the_split(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TFDS's mnist generator told to read more images than its file holds (NumPy's reshape
    fails inside TFDS's code): a SourceFormatError naming the dataset, split and error."""
    base = serve_mnist(server, tmp_path / "files", {"train": 3, "test": 2})
    patch_mnist(monkeypatch, base, train=9, test=2)
    config = DownloadConfig(download_dir=tmp_path / "dl", register_checksums=True,
                            progress="none")  # fmt: skip
    with pytest.raises(SourceFormatError, match=r"tfds:mnist: split 'train'.*ValueError"):
        catalog.data_source("tfds:mnist", data_dir=tmp_path / "data", download_config=config)
    assert not (tmp_path / "data" / "tfds.mnist").exists()


def test_an_unsupported_tfds_dataset_says_why_in_one_line(tmp_path: Path) -> None:
    for name, why in (
        ("tfds:c4", "Apache Beam"),
        ("tfds:asimov_v2_videos", "prepared only"),
        ("tfds:voxforge", "Apache Beam"),  # a BeamBasedBuilder: refused before any download
    ):
        result = catalog_cli("prepare", name, "--data-dir", str(tmp_path), "--offline")
        assert result.returncode != 0
        assert why in result.stderr and "Traceback" not in result.stderr, result.stderr
        assert "is needed but catalog is offline" not in result.stderr, result.stderr


def test_string_tensors_map_to_text() -> None:
    from catalog.interop.tfds.features import from_tfds_json

    def tensor(dims: list[str], encoding: str = "none") -> dict[str, object]:
        return {
            "pythonClassName": "tensorflow_datasets.core.features.tensor_feature.Tensor",
            "tensor": {"shape": {"dimensions": dims}, "dtype": "string", "encoding": encoding},
        }

    assert from_tfds_json(tensor([]), Path()) == Text()
    assert from_tfds_json(tensor(["-1"]), Path()) == Sequence(Text())
    assert from_tfds_json(tensor(["3"]), Path()) == Sequence(Text(), length=3)
    with pytest.raises(SourceFormatError, match="string Tensor"):
        from_tfds_json(tensor(["2", "2"]), Path())


def test_translation_features_map_to_dicts_of_text(tmp_path: Path) -> None:
    """TFDS's Translation is a FeaturesDict of Text (one per language);
    TranslationVariableLanguages holds sorted ``language`` and ``translation`` lists (what
    TFDS's data source gives): features.json as TFDS itself writes it."""
    import tensorflow_datasets as tfds

    from catalog.features import FeaturesDict
    from catalog.interop.tfds.features import from_tfds_json

    tfds.features.FeaturesDict({
        "pair": tfds.features.Translation(languages=["fr", "en"]),
        "many": tfds.features.TranslationVariableLanguages(languages=["en", "fr"]),
    }).save_config(str(tmp_path))  # fmt: skip
    data = json.loads((tmp_path / "features.json").read_text("utf-8"))
    assert from_tfds_json(data, tmp_path) == FeaturesDict({
        "pair": FeaturesDict({"en": Text(), "fr": Text()}),
        "many": FeaturesDict({"language": Sequence(Text()), "translation": Sequence(Text())}),
    })  # fmt: skip


def test_text_that_is_not_utf8_exports_as_tfds_and_is_refused_as_parquet(tmp_path: Path) -> None:
    """rock_you's non-UTF-8 password (kept as bytes, as TFDS keeps it) survives an export as a
    TFDS directory; Parquet has no string for it: one error naming the feature, no file."""
    from catalog.formats.tfds.downloads import DummyDownloads, dummy_downloads

    folder = Path(__file__).resolve().parents[2] / "data" / "tfds_dummy" / "rock_you"
    spec = json.loads((folder / "DUMMY.json").read_text("utf-8"))
    config = DownloadConfig(download_dir=tmp_path / "dl", offline=True, progress="none")
    dummy = DummyDownloads(folder / "files", spec["extract_result"], spec["download_result"])
    with dummy_downloads(dummy):
        catalog.data_source("tfds:rock_you", data_dir=tmp_path / "data", download_config=config)
    with pytest.raises(catalog.SpecError, match="feature 'password': a text of 3 bytes"):
        catalog.export_dataset(
            "tfds:rock_you", tmp_path / "pq", format="parquet", data_dir=tmp_path / "data"
        )
    assert not list((tmp_path / "pq").glob("*.parquet"))
    out = catalog.export_dataset(
        "tfds:rock_you", tmp_path / "tf", format="tfds", data_dir=tmp_path / "data"
    )
    back = catalog.open_tfds(out)
    assert isinstance(back, dict)
    passwords = {back["train"][i]["password"] for i in range(len(back["train"]))}
    assert b"\xe9t\xe9" in passwords and "rockyou" in passwords
