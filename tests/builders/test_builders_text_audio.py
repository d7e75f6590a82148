"""The text, tabular and audio builders, each run from its dummy files through the loopback
server (download -> verify -> extract -> prepare -> read), every example checked exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.features.wav import read_header
from catalog.testing.harness import run_builder

from make_dummy_text_audio import (
    SHAKESPEARE,
    SPEECH_MAIN,
    SPEECH_TEST,
    SPOKEN_DIGIT,
    seed_of,
    tone,
)

ROOT = Path(__file__).resolve().parents[2]


def build(name: str, tmp_path: Path, counts: dict[str, int], config: str | None = None) -> Any:
    return run_builder(ROOT / "builders" / name, tmp_path, num_examples=counts, config=config)


def test_tiny_shakespeare_cuts_the_file_as_tfds_does(tmp_path: Path) -> None:
    ds = build("tiny_shakespeare", tmp_path, {"train": 1, "validation": 1, "test": 1})
    texts = {split: ds[split][0]["text"] for split in ("train", "validation", "test")}
    # 148 characters: int(148 * 0.9) = 133 for train, then int(15 * 0.5) = 7, then the 8 left.
    assert len(SHAKESPEARE) == 148
    assert [len(t) for t in texts.values()] == [133, 7, 8]
    assert texts["train"] + texts["validation"] + texts["test"] == SHAKESPEARE
    assert texts["validation"] == "han to " and texts["test"] == "famish?\n"


def test_imdb_reviews_folders_and_unlabelled_split(tmp_path: Path) -> None:
    ds = build("imdb_reviews", tmp_path, {"train": 3, "test": 3, "unsupervised": 2})
    rows = {split: [(e["text"], e["label"]) for e in ds[split]] for split in ds}
    assert rows == {
        # neg/ then pos/, files by name; surrounding whitespace stripped, the rest kept.
        "train": [
            ("Dull.<br /><br />I left early.", 0),
            ("Not worth the ticket — really.", 0),
            ("A joy from start to finish.", 1),
        ],
        "test": [
            ("Too long by an hour.", 0),
            ("Über-gorgeous photography!", 1),
            ("Loved it.", 1),
        ],
        "unsupervised": [("Saw it on a plane.", -1), ("No opinion yet.", -1)],
    }
    label = ds["train"].features["label"]
    assert label.names == ["neg", "pos"] and label.int2str(-1) == "-1"
    assert ds["train"].info.config == "plain_text"


def test_yelp_polarity_keeps_doubled_quotes_as_tfds(tmp_path: Path) -> None:
    ds = build("yelp_polarity_reviews", tmp_path, {"train": 3, "test": 1})
    assert [(e["text"], e["label"]) for e in ds["train"]] == [
        # "" stays "" (TFDS slices the raw line); the escaped newline stays backslash + n;
        # "2" is index 1.
        ('Terrible service, ""never"" again.\\nWould not recommend.', 0),
        ("Great tacos!", 1),
        ("Best, friendliest staff in town.", 1),
    ]
    assert [(e["text"], e["label"]) for e in ds["test"]] == [("Cold fries.", 0)]


def test_ag_news_subset_maps_class_indices_to_names(tmp_path: Path) -> None:
    ds = build("ag_news_subset", tmp_path, {"train": 4, "test": 1})
    got = [(e["label"], e["title"], e["description"]) for e in ds["train"]]
    assert got == [
        (2, "Wall St. Bears Claw Back Into the Black (Reuters)",
         "Reuters - Short-sellers, Wall Street's dwindling\\band of ultra-cynics, are seeing "
         "green again."),
        (1, "Phelps Wins Again", 'ATHENS - Michael Phelps won his "fourth" gold.'),
        (3, "New Chip Unveiled", "A faster chip, the company said."),
        (0, "Talks Resume", "Diplomats met on Monday."),
    ]  # fmt: skip
    assert ds["test"][0]["label"] == 3
    assert ds["train"].features["label"].int2str(3) == "Sci/Tech"


def test_squad_one_example_per_question_duplicates_merged(tmp_path: Path) -> None:
    ds = build("squad", tmp_path, {"train": 3, "validation": 2})
    first = ds["train"][0]
    assert first["id"] == "5733be284776f41900661182"
    assert first["title"] == "University_of_Notre_Dame"
    assert first["context"] == "Architecturally, the school has a Catholic character.  Atop it"
    assert first["question"] == "What character does the school have?"
    assert first["answers"]["text"] == ["Catholic"]
    assert first["answers"]["answer_start"].tolist() == [34]
    assert first["answers"]["answer_start"].dtype == np.int32
    # The answer offset points into the context as stored (whitespace kept).
    assert first["context"][34 : 34 + len("Catholic")] == "Catholic"
    no_answer = ds["train"][1]
    assert no_answer["answers"]["text"] == [] and no_answer["answers"]["answer_start"].shape == (0,)
    untitled = ds["train"][2]
    assert untitled["title"] == "" and untitled["answers"]["text"] == [
        "Beyoncé", "Beyoncé Giselle Knowles-Carter"
    ]  # fmt: skip
    # A repeated id adds its answers to the first question with that id.
    merged, other = ds["validation"][0], ds["validation"][1]
    assert merged["question"] == "Who won Super Bowl 50?"
    assert merged["answers"]["text"] == ["Denver", "Denver Broncos"]
    assert merged["answers"]["answer_start"].tolist() == [0, 0]
    assert other["id"] == "56be4db0acb8001400a502ed" and other["answers"]["text"] == ["Santa Clara"]
    assert ds["train"].info.config == "v1.1"


def test_glue_cola_quotes_are_text_incomplete_rows_dropped_test_unlabelled(
    tmp_path: Path,
) -> None:
    ds = build("glue", tmp_path, {"train": 3, "validation": 1, "test": 3}, config="cola")
    rows = {s: [(e["idx"].item(), e["sentence"], e["label"]) for e in ds[s]] for s in ds}
    assert rows == {
        "train": [
            (0, "Our friends won't buy this analysis, let alone the next one we propose.", 1),
            (1, 'They drank the pub "dry".', 0),
            (2, "One more pseudo generalization and I'm giving up.", 1),
        ],
        "validation": [(0, "The more we study verbs, the crazier they get get.", 0)],
        "test": [
            (0, "Bill whistled past the house.", -1),
            (1, "He ran 'til dark.", -1),
            # The third row has one field: dropped (as TFDS drops it), but it counts for idx.
            (3, "She left.", -1),
        ],
    }
    assert ds["train"][0]["idx"].dtype == np.int32
    assert ds["train"].features["label"].names == ["unacceptable", "acceptable"]


def test_glue_sst2_header_rows(tmp_path: Path) -> None:
    ds = build("glue", tmp_path, {"train": 2, "validation": 1, "test": 1}, config="sst2")
    rows = {s: [(e["idx"].item(), e["sentence"], e["label"]) for e in ds[s]] for s in ds}
    assert rows == {
        "train": [(0, "hide new secretions ", 0), (1, 'the greatest "musicians" ', 1)],
        "validation": [(0, "it 's a charming journey . ", 1)],
        "test": [(0, "uneasy mishmash of styles", -1)],
    }
    assert ds["train"].features["label"].names == ["negative", "positive"]


def test_iris_stacks_four_columns_and_skips_blank_lines(tmp_path: Path) -> None:
    ds = build("iris", tmp_path, {"train": 3})["train"]
    features = np.stack([e["features"] for e in ds])
    expected = [[5.1, 3.5, 1.4, 0.2], [7.0, 3.2, 4.7, 1.4], [6.3, 3.3, 6.0, 2.5]]
    np.testing.assert_array_equal(features, np.array(expected, dtype=np.float32))
    assert features.dtype == np.float32 and [e["label"] for e in ds] == [0, 1, 2]


def test_titanic_missing_values_and_value_maps(tmp_path: Path) -> None:
    ds = build("titanic", tmp_path, {"train": 3})["train"]
    allen, abbott, ng = ds[0], ds[1], ds[2]
    assert (allen["pclass"], allen["survived"], allen["sex"], allen["embarked"]) == (0, 1, 1, 2)
    assert allen["name"] == "Allen, Miss. Elisabeth Walton" and allen["ticket"] == "24160"
    assert allen["age"] == np.float32(29) and allen["fare"] == np.float32(211.3375)
    assert allen["body"] == -1 and allen["body"].dtype == np.int32  # ? -> -1
    assert (allen["cabin"], allen["boat"], allen["home.dest"]) == ("B5", "2", "St Louis, MO")
    assert (abbott["pclass"], abbott["survived"], abbott["embarked"]) == (2, 0, 1)
    assert (abbott["sibsp"], abbott["parch"], abbott["body"]) == (1, 1, 190)
    assert (abbott["cabin"], abbott["boat"], abbott["home.dest"]) == ("Unknown",) * 3
    assert ng["age"] == -1 and ng["fare"] == -1 and ng["embarked"] == 3  # ? -> Unknown
    assert ds.features["embarked"].int2str(ng["embarked"]) == "Unknown"
    # TFDS's supervised keys: a dict of the 13 other features, survived the target.
    sup = catalog.data_source(ds._folder, split="train", as_supervised=True)
    inputs, target = sup[0]
    assert target == 1 and list(inputs) == [k for k in ds.features if k != "survived"]
    assert inputs["home.dest"] == "St Louis, MO" and inputs["age"] == np.float32(29)
    assert ds.info.supervised_keys is not None
    assert catalog.features.supervised_text(ds.info.supervised_keys).endswith("}, survived)")


@pytest.mark.parametrize(
    ("config", "quality", "first"),
    [("white", [6, 6, 9], [7.0, 0.27, 0.36, 20.7, 0.045, 45, 170, 1.001, 3.0, 0.45, 8.8]),
     ("red", [5, 3], [7.4, 0.7, 0.0, 1.9, 0.076, 11, 34, 0.9978, 3.51, 0.56, 9.4])],
)  # fmt: skip
def test_wine_quality_configs(
    config: str, quality: list[int], first: list[float], tmp_path: Path
) -> None:
    ds = build("wine_quality", tmp_path, {"train": len(quality)}, config=config)["train"]
    assert [int(e["quality"]) for e in ds] == quality
    measures = ds[0]["features"]
    assert list(measures.values()) == pytest.approx(first)
    assert measures["sulphates"].dtype == np.float64 and measures["pH"].dtype == np.float32
    # TFDS's float64 sulphates went through its FloatList (float32): 0.45 is 0.44999998...
    assert measures["sulphates"] == float(np.float32(first[9])) != first[9]
    assert next(iter(measures)) == "fixed acidity"


def test_spoken_digit_wavs_labelled_by_file_name(tmp_path: Path) -> None:
    ds = build("spoken_digit", tmp_path, {"train": 3})["train"]
    for example, (name, count) in zip(ds, sorted(SPOKEN_DIGIT.items()), strict=True):
        assert example["audio/filename"] == name and example["label"] == int(name[0])
        assert example["audio"].dtype == np.int64 and example["audio"].shape == (count,)
        np.testing.assert_array_equal(example["audio"], tone(count, seed_of(name)))
    assert ds[0]["audio"][:3].tolist() == [-32768, 15406, -1956]  # the pattern itself, literally
    # The stored bytes are the WAV file, byte for byte.
    raw = catalog.DataSource(ds.path, ds.info, "train", decoders={"audio": False})
    wav = raw[2]["audio"]
    header = read_header(wav)
    assert wav[:4] == b"RIFF" and (header.sample_rate, header.bits, header.frames) == (8000, 16, 64)


def test_speech_commands_lists_windows_and_labels(tmp_path: Path) -> None:
    ds = build("speech_commands", tmp_path, {"train": 5, "validation": 4, "test": 3})
    names = ds["train"].features["label"].names

    def clip(name: str, start: int | None = None) -> np.ndarray[Any, Any]:
        samples = tone((SPEECH_MAIN | SPEECH_TEST)[name], seed_of(name))
        return samples if start is None else samples[start : start + 16000]

    noise, tap = "_background_noise_/white_noise.wav", "_background_noise_/running_tap.wav"
    expected = {  # in path order; noise cut into 1 s windows every 0.5 s, the tail dropped
        "train": [
            (clip(noise, 0), "_silence_"),
            (clip(noise, 8000), "_silence_"),
            (clip(noise, 16000), "_silence_"),
            (clip("cat/xyz_nohash_0.wav"), "_unknown_"),
            (clip("yes/abc_nohash_0.wav"), "yes"),
        ],  # not down/tst_nohash_0.wav (testing_list.txt), nor the validation files
        "validation": [
            (clip(tap, 0), "_silence_"),
            (clip(tap, 8000), "_silence_"),  # 32000 samples: no window at 16000
            (clip("go/g0_nohash_1.wav"), "go"),  # listed as ./go//g0_nohash_1.wav
            (clip("yes/abd_nohash_0.wav"), "yes"),
        ],
        "test": [
            (clip("_silence_/s1.wav"), "_silence_"),
            (clip("_unknown_/u1_nohash_0.wav"), "_unknown_"),
            (clip("down/d1_nohash_0.wav"), "down"),
        ],
    }
    for split, rows in expected.items():
        got = list(ds[split])
        assert [names[e["label"]] for e in got] == [label for _, label in rows], split
        for example, (audio, _) in zip(got, rows, strict=True):
            assert example["audio"].dtype == np.int16
            np.testing.assert_array_equal(example["audio"], audio)
    assert ds["train"][0]["audio"].shape == (16000,)


#: What the facts say, per dataset (and config): version, split counts, and for each feature
#: its type and shape (ClassLabel: the number of classes).
FACTS: dict[str, tuple[str, dict[str, int], dict[str, tuple[str, object]]]] = {
    "tiny_shakespeare": ("1.0.0", {"train": 1, "validation": 1, "test": 1},
                         {"text": ("Text", ())}),
    "imdb_reviews/plain_text": ("1.0.0", {"train": 25000, "test": 25000, "unsupervised": 50000},
                                {"text": ("Text", ()), "label": ("ClassLabel", 2)}),
    "yelp_polarity_reviews": ("0.2.0", {"train": 560000, "test": 38000},
                              {"text": ("Text", ()), "label": ("ClassLabel", 2)}),
    "ag_news_subset": ("1.0.0", {"train": 120000, "test": 7600},
                       {"label": ("ClassLabel", 4), "title": ("Text", ()),
                        "description": ("Text", ())}),
    "squad/v1.1": ("3.0.0", {"train": 87599, "validation": 10570},
                   {"id": ("Text", ()), "title": ("Text", ()), "context": ("Text", ()),
                    "question": ("Text", ()), "answers": ("Sequence", None)}),
    "glue/cola": ("2.0.0", {"train": 8551, "validation": 1043, "test": 1063},
                  {"sentence": ("Text", ()), "label": ("ClassLabel", 2), "idx": ("Scalar", ())}),
    "glue/sst2": ("2.0.0", {"train": 67349, "validation": 872, "test": 1821},
                  {"sentence": ("Text", ()), "label": ("ClassLabel", 2), "idx": ("Scalar", ())}),
    "iris": ("2.1.0", {"train": 150},
             {"features": ("Tensor", (4,)), "label": ("ClassLabel", 3)}),
    "titanic": ("4.0.0", {"train": 1309},
                {"pclass": ("ClassLabel", 3), "survived": ("ClassLabel", 2), "name": ("Text", ()),
                 "sex": ("ClassLabel", 2), "age": ("Scalar", ()), "sibsp": ("Scalar", ()),
                 "parch": ("Scalar", ()), "ticket": ("Text", ()), "fare": ("Scalar", ()),
                 "cabin": ("Text", ()), "embarked": ("ClassLabel", 4), "boat": ("Text", ()),
                 "body": ("Scalar", ()), "home.dest": ("Text", ())}),
    "wine_quality/white": ("1.0.0", {"train": 4898},
                           {"quality": ("Scalar", ()), "features": ("FeaturesDict", None)}),
    "wine_quality/red": ("1.0.0", {"train": 1599},
                         {"quality": ("Scalar", ()), "features": ("FeaturesDict", None)}),
    "spoken_digit": ("1.0.9", {"train": 2500},
                     {"audio": ("Audio", (None,)), "label": ("ClassLabel", 10),
                      "audio/filename": ("Text", ())}),
    "speech_commands": ("0.0.3", {"train": 85511, "validation": 10102, "test": 4890},
                        {"audio": ("Audio", (None,)), "label": ("ClassLabel", 12)}),
}  # fmt: skip


# The builders above are checked against FACTS by tests/builders/test_builders.py's facts test.


def test_audio_features_and_class_names_are_the_facts() -> None:
    audio = catalog.builder("speech_commands").spec.features["audio"]
    assert (audio.sample_rate, audio.dtype.name) == (16000, "int16")  # type: ignore[attr-defined]
    assert catalog.builder("speech_commands").spec.features["label"].names == [  # type: ignore[attr-defined]
        "down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes",
        "_silence_", "_unknown_",
    ]  # fmt: skip
    digit = catalog.builder("spoken_digit").spec.features["audio"]
    assert (digit.sample_rate, digit.dtype.name) == (8000, "int64")  # type: ignore[attr-defined]
    wine = catalog.builder("wine_quality").spec.features["features"]
    assert list(wine) == [  # type: ignore[call-overload]
        "fixed acidity", "volatile acidity", "citric acid", "residual sugar", "chlorides",
        "free sulfur dioxide", "total sulfur dioxide", "density", "pH", "sulphates", "alcohol",
    ]  # fmt: skip
